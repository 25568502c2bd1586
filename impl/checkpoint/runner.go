package checkpoint

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
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
	// Stdout and Stderr receive the child's output (nil discards it). The
	// child writes into a pipe, never into a file the publisher opened by
	// name, and Run returns only when the copy is done.
	Stdout, Stderr io.Writer
	// Grace is how long an interrupted child has between SIGTERM and
	// SIGKILL.
	Grace time.Duration
	// Run is the run the process belongs to, its $TRACECHECK_RUN_ID: when
	// the child ends, every process carrying it is killed.
	Run string
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
	// Orphans are the PIDs of descendants that outlived the child (they
	// left its process group) and were killed when it ended.
	Orphans []int
}

// Runner runs a child process to completion.
type Runner interface {
	// Run starts p, calls started with its PID once it runs (an error from
	// started kills it), and waits for it to end. When ctx ends first, the
	// child's process group gets SIGTERM, then SIGKILL after p.Grace, and
	// the Exit is marked Interrupted. When Run returns, no process of p —
	// the child and its descendants, including those that left its process
	// group — is alive, or the error wraps [ErrEscaped]. An error wrapping
	// [ErrStart] means the process never ran.
	Run(ctx context.Context, p Process, started func(pid int) error) (Exit, error)
}

// ExecRunner runs processes with os/exec, each in its own process group.
// When the child exits, whatever is left of its group is killed, and so is
// every process that carries the run's $TRACECHECK_RUN_ID in its
// environment (a descendant that left the group with setsid), so nothing of
// the program outlives it and touches the checkpoint afterwards.
type ExecRunner struct {
	// Subreaper makes the calling process a child subreaper
	// (PR_SET_CHILD_SUBREAPER): every orphaned descendant of a program is
	// adopted by it, and when the program ends, every child of the calling
	// process that this runner did not start (and that carries no other
	// active run's ID) is killed, even one that cleared its environment.
	// Set it only in a process that starts no other children, as
	// `tracecheck run` does: other code's children would be killed too.
	Subreaper bool
	// Clock times the grace and the kills; nil means the system clock.
	Clock Clock
}

var _ Runner = ExecRunner{}

// Run implements [Runner].
func (r ExecRunner) Run(ctx context.Context, p Process, started func(pid int) error) (Exit, error) {
	clock := r.Clock
	if clock == nil {
		clock = SystemClock{}
	}
	if len(p.Argv) == 0 {
		return Exit{}, fmt.Errorf("%w: empty command", ErrStart)
	}
	if r.Subreaper {
		if err := becomeSubreaper(); err != nil {
			return Exit{}, fmt.Errorf("%w: %w", ErrStart, err)
		}
	}
	cmd := exec.Command(p.Argv[0], p.Argv[1:]...)
	cmd.Env = p.Env
	cmd.Dir = p.Dir
	cmd.Stdin = nil
	// Its own process group, so signals reach the program's children too;
	// and SIGKILL if the publisher itself dies.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	var copies sync.WaitGroup
	var pipes []*os.File
	for _, out := range []struct {
		w   io.Writer
		set *io.Writer
	}{{p.Stdout, &cmd.Stdout}, {p.Stderr, &cmd.Stderr}} {
		pr, pw, err := os.Pipe()
		if err != nil {
			closeAll(pipes)
			return Exit{}, fmt.Errorf("%w: pipe: %w", ErrStart, err)
		}
		*out.set = pw // an *os.File: the child gets the descriptor itself
		pipes = append(pipes, pr, pw)
		w := out.w
		if w == nil {
			w = io.Discard
		}
		copies.Add(1)
		go func() {
			defer copies.Done()
			_, _ = io.Copy(w, pr)
		}()
	}
	// finish closes the pipes' write ends, lets the copies drain what the
	// (dead) writers left, and ends them.
	finish := func() {
		for i := 1; i < len(pipes); i += 2 {
			pipes[i].Close()
		}
		for i := 0; i < len(pipes); i += 2 {
			_ = pipes[i].SetReadDeadline(clock.Now().Add(2 * time.Second))
		}
		copies.Wait()
		for i := 0; i < len(pipes); i += 2 {
			pipes[i].Close()
		}
	}

	procs.mu.Lock()
	err := cmd.Start()
	if err == nil {
		procs.tracked[cmd.Process.Pid] = true
		procs.runs[p.Run]++
	}
	procs.mu.Unlock()
	if err != nil {
		finish()
		return Exit{}, fmt.Errorf("%w: %s: %w", ErrStart, p.Argv[0], err)
	}
	for i := 1; i < len(pipes); i += 2 {
		pipes[i].Close() // the child holds its own copies
	}
	pid := cmd.Process.Pid
	done := make(chan error, 1)
	go func() {
		err := cmd.Wait()
		procs.mu.Lock()
		delete(procs.tracked, pid)
		procs.mu.Unlock()
		done <- err
	}()
	killGroup := func(sig syscall.Signal) { _ = syscall.Kill(-pid, sig) }
	// end kills what is left of the program once the child is gone.
	end := func(ex *Exit) error {
		killGroup(syscall.SIGKILL) // leftovers of the group, if any
		orphans, err := killRunProcesses(p.Run, r.Subreaper, clock)
		ex.Orphans = orphans
		procs.mu.Lock()
		if procs.runs[p.Run]--; procs.runs[p.Run] <= 0 {
			delete(procs.runs, p.Run)
		}
		procs.mu.Unlock()
		finish()
		return err
	}

	ex := Exit{PID: pid}
	if started != nil {
		if err := started(pid); err != nil {
			killGroup(syscall.SIGKILL)
			<-done
			_ = end(&ex)
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
	eerr := end(&ex)
	ws, _ := cmd.ProcessState.Sys().(syscall.WaitStatus)
	ex.Code = cmd.ProcessState.ExitCode()
	if ws.Signaled() {
		ex.Code = -1
		ex.Signal = ws.Signal().String()
	}
	return ex, eerr
}

func closeAll(fs []*os.File) {
	for _, f := range fs {
		f.Close()
	}
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
	base := filepath.Base(prog)
	return len(base) >= 6 && base[:6] == "python"
}
