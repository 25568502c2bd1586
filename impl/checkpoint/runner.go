package checkpoint

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// Process describes one child process to run.
type Process struct {
	// Argv is the program and its arguments; Argv[0] is looked up in PATH.
	Argv []string
	// Env is the complete environment of the child.
	Env []string
	// Dir is the working directory ("" for the publisher's).
	Dir string
	// Stdout and Stderr name the files that capture the child's output.
	Stdout, Stderr string
	// Grace is how long an interrupted child has between SIGTERM and
	// SIGKILL.
	Grace time.Duration
}

// Exit is how a process ended.
type Exit struct {
	// PID is the child's process ID (and its process group ID).
	PID int
	// Code is the exit status, or -1 if a signal ended the process.
	Code int
	// Signal names the signal that ended it, if any.
	Signal string
	// Interrupted reports that the context ended the process.
	Interrupted bool
	// Killed reports that SIGKILL was needed after the grace period.
	Killed bool
}

// Runner runs a child process to completion.
type Runner interface {
	// Run starts p, calls started with its PID once it runs (an error from
	// started kills it), and waits for it to end. When ctx ends first, the
	// child's process group gets SIGTERM, then SIGKILL after p.Grace, and
	// the Exit is marked Interrupted. An error wrapping [ErrStart] means
	// the process never ran.
	Run(ctx context.Context, p Process, started func(pid int) error) (Exit, error)
}

// ExecRunner runs processes with os/exec, each in its own process group.
// When the child exits, whatever is left of its group (background children
// it forked) is killed, so nothing of the program outlives it and touches
// the staging directory afterwards.
type ExecRunner struct{}

var _ Runner = ExecRunner{}

// Run implements [Runner].
func (ExecRunner) Run(ctx context.Context, p Process, started func(pid int) error) (Exit, error) {
	if len(p.Argv) == 0 {
		return Exit{}, fmt.Errorf("%w: empty command", ErrStart)
	}
	stdout, err := os.OpenFile(p.Stdout, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return Exit{}, fmt.Errorf("%w: stdout: %w", ErrStart, err)
	}
	defer stdout.Close()
	stderr, err := os.OpenFile(p.Stderr, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return Exit{}, fmt.Errorf("%w: stderr: %w", ErrStart, err)
	}
	defer stderr.Close()

	cmd := exec.Command(p.Argv[0], p.Argv[1:]...)
	cmd.Env = p.Env
	cmd.Dir = p.Dir
	cmd.Stdin = nil
	cmd.Stdout = stdout
	cmd.Stderr = stderr
	// Its own process group, so signals reach the program's children too;
	// and SIGKILL if the publisher itself dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		return Exit{}, fmt.Errorf("%w: %s: %w", ErrStart, p.Argv[0], err)
	}
	pid := cmd.Process.Pid
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	killGroup := func(sig syscall.Signal) { _ = syscall.Kill(-pid, sig) }

	ex := Exit{PID: pid}
	if started != nil {
		if err := started(pid); err != nil {
			killGroup(syscall.SIGKILL)
			<-done
			return ex, err
		}
	}
	select {
	case <-done:
		// An interrupt requested before the end was observed still wins.
		ex.Interrupted = ctx.Err() != nil
	case <-ctx.Done():
		ex.Interrupted = true
		killGroup(syscall.SIGTERM)
		t := time.NewTimer(p.Grace)
		select {
		case <-done:
			t.Stop()
		case <-t.C:
			ex.Killed = true
			killGroup(syscall.SIGKILL)
			<-done
		}
	}
	killGroup(syscall.SIGKILL) // leftovers of the group, if any
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	ex.Code = cmd.ProcessState.ExitCode()
	if ws.Signaled() {
		ex.Code = -1
		ex.Signal = ws.Signal().String()
	}
	return ex, nil
}

// lookProgram checks that the interpreter exists and, for a Python
// interpreter followed by a script, that the script exists.
func lookProgram(argv []string, dir string) error {
	if _, err := exec.LookPath(argv[0]); err != nil {
		return fmt.Errorf("%w: %s: %w", ErrProgramNotFound, argv[0], err)
	}
	if !isPython(argv[0]) {
		return nil
	}
	script := ""
	for _, a := range argv[1:] {
		if a == "-c" || a == "-m" || a == "-" {
			return nil // no script file to check
		}
		if len(a) > 1 && a[0] == '-' {
			continue // a flag such as -I, -S, -u
		}
		script = a
		break
	}
	if script == "" {
		return nil
	}
	p := script
	if dir != "" && !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	fi, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("%w: script %s: %w", ErrProgramNotFound, script, err)
	}
	if fi.IsDir() {
		return fmt.Errorf("%w: script %s is a directory", ErrProgramNotFound, script)
	}
	return nil
}

func isPython(prog string) bool {
	base := prog
	for i := len(prog) - 1; i >= 0; i-- {
		if prog[i] == '/' {
			base = prog[i+1:]
			break
		}
	}
	return len(base) >= 6 && base[:6] == "python"
}
