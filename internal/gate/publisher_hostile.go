package gate

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/harness/pubcheck"
	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

// The hostile programs: a representative subset of harness/pubcheck's
// TestHostile (docs/publisher.md, threat model), run through the real CLI
// (`tracecheck run`, a child subreaper) in a root T holding pub/ (the
// publish directory), sentinel/ (a tree outside it that the scripts plant
// links to, never write) and the scripts. Each asserts the exit code, the
// journal's last action and the error, the published bytes (exactly the
// program's) or that nothing is published, inspect, a valid journal,
// recovery, no process of the case alive, and that nothing under T
// outside pub/ changed.

// cliCheck returns the CLI binary (Options.Exe) once it answers `run
// --help` as tracecheck's run does.
func (pe *pubEnv) cliCheck(ctx context.Context) (string, error) {
	exe := pe.r.opt.Exe
	if strings.HasSuffix(exe, ".test") {
		// A go test binary would run its tests, this one included.
		return "", fmt.Errorf("%s is a test binary, not tracecheck: set Options.Exe to a tracecheck binary (the crash campaign and the hostile cases run it)", exe)
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(cctx, exe, "run", "--help").CombinedOutput()
	if !bytes.Contains(out, []byte("--publish-dir")) {
		return "", fmt.Errorf("%s is not a tracecheck binary with a run command (the crash campaign and the hostile cases run it): %q", exe, firstLine(string(out)))
	}
	return exe, nil
}

// runHostile runs one hostile case through the CLI and checks it.
func (pe *pubEnv) runHostile(ctx context.Context, cli string, c pubcheck.HostileProgram, res *pubResult) {
	start := time.Now()
	defer func() { res.elapsed = time.Since(start) }()
	pub, err := pe.r.path("publisher", "hostile", c.ID+"-"+c.Name, "pub")
	if err != nil {
		res.fail("%v", err)
		return
	}
	var tok [8]byte
	_, _ = rand.Read(tok[:])
	root := filepath.Dir(pub)
	sentinel := filepath.Join(root, "sentinel")
	token := "hostile-token-" + hex.EncodeToString(tok[:])
	var run string // the run's ID
	tokenProcs := func() []int { return pubcheck.TokenProcesses(token) }
	defer func() {
		if pids := tokenProcs(); len(pids) > 0 {
			killPids(pids)
		}
	}()
	if err := os.Mkdir(pub, 0o755); err != nil {
		res.fail("%v", err)
		return
	}
	if err := pubcheck.WriteSentinel(sentinel); err != nil {
		res.fail("%v", err)
		return
	}
	body := c.Prog
	if body == "" {
		body = "good()\n"
	}
	if err := os.WriteFile(filepath.Join(root, "prog.py"), []byte(pubcheck.HostilePrelude+body), 0o644); err != nil {
		res.fail("%v", err)
		return
	}
	args := []string{"run", "--quiet", "--grace", "2s", "--publish-dir", pub, "--name", "model"}
	if c.Verify != "" {
		if err := os.WriteFile(filepath.Join(root, "verify.py"), []byte(pubcheck.HostilePrelude+c.Verify), 0o644); err != nil {
			res.fail("%v", err)
			return
		}
		// Relative: --verify-cmd is split on spaces; the CLI runs in T.
		args = append(args, "--verify-cmd", strings.Join(append(append([]string(nil), pe.py...), "verify.py"), " "))
	}
	args = append(append(append(args, "--"), pe.py...), "prog.py")
	before, err := pubcheck.SnapshotTree(root, "pub")
	if err != nil {
		res.fail("snapshot: %v", err)
		return
	}

	// The run, under a step timeout that kills its process group.
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, cli, args...)
	cmd.Dir = root
	cmd.Env = append(append([]string(nil), pe.env...), "HOSTILE_SENTINEL="+sentinel, "HOSTILE_TOKEN="+token)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		res.fail("tracecheck run: %v", err)
		return
	}
	if cctx.Err() != nil {
		res.fail("tracecheck run hung: no exit within 60 s")
		return
	}
	code := cmd.ProcessState.ExitCode()
	for _, l := range strings.Split(stdout.String(), "\n") {
		if s, ok := strings.CutPrefix(l, "run:"); ok {
			run = strings.TrimSpace(s)
		}
	}
	if run == "" { // a publisher killed before it printed: its one run directory
		ents, _ := os.ReadDir(filepath.Join(pub, checkpoint.MetaDir, "runs"))
		for _, e := range ents {
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
				run = e.Name()
			}
		}
	}
	switch {
	case code != c.Exit:
		res.fail("tracecheck run: exit %d, want %d: %s", code, c.Exit, firstLine(errLines(stdout.String(), stderr.String())))
	case run == "":
		res.fail("no run ID (no run: line, no run directory)")
		return
	}
	switch code {
	case 0:
		res.outcome = checkpoint.PhasePublished.String()
	case 4:
		res.outcome = checkpoint.PhaseFailed.String()
	case 5:
		res.outcome = checkpoint.PhaseInterrupted.String()
	default:
		res.outcome = "killed"
	}
	if c.Text != "" && !strings.Contains(strings.ToLower(errLines(stdout.String(), stderr.String())), strings.ToLower(c.Text)) {
		res.fail("the error %q does not say %q", firstLine(errLines(stdout.String(), stderr.String())), c.Text)
	}
	journal := filepath.Join(pub, checkpoint.MetaDir, "runs", run, "journal.ndjson")
	last, jerr := lastAction(journal)
	switch {
	case jerr != nil:
		res.fail("journal: %v", jerr)
	case c.Last != "" && last != c.Last:
		res.fail("the journal's last action is %s, want %s", last, c.Last)
	}
	if c.Escapes {
		if pids := awaitNoProcesses(tokenProcs, 10*time.Second); len(pids) > 0 {
			res.fail("processes of the case alive 10 s after the run: %v", pids)
			killPids(pids)
		}
	}

	// What is published: exactly the program's bytes, or nothing.
	target := filepath.Join(pub, "model")
	if code == 0 {
		got, problems, err := pubcheck.ReadCheckpoint(target)
		switch {
		case err != nil:
			res.fail("the published checkpoint: %v", err)
		case len(problems) > 0:
			res.fail("the published checkpoint holds unsafe entries: %s", strings.Join(problems, "; "))
		default:
			if d := pubcheck.FilesDiff(got, pubcheck.HostileCheckpoint()); d != "" {
				res.fail("the published checkpoint is not the program's bytes (after every process of the case ended): %s", d)
			}
		}
		checkPublished(ctx, res, target, run, "")
	} else if _, err := os.Lstat(target); err == nil && !c.Planted {
		res.fail("exit %d, but %s exists", code, target)
	}
	if c.Planted {
		if target, err := os.Readlink(filepath.Join(pub, "model")); err != nil || target != sentinel {
			res.fail("the planted symlink was replaced: readlink = %q, %v", target, err)
		}
	}

	// The journal: valid if the publisher ended the run itself.
	if jerr == nil {
		ended := code == 0 || code == 4 || code == 5
		if v := pe.journalVerdict(ctx, res, journal, !ended); ended && v != check.Valid {
			res.fail("journal verdict %s, want valid", v)
		}
	}
	if pids := awaitNoProcesses(func() []int { return runProcesses(run) }, 3*time.Second); len(pids) > 0 {
		res.fail("processes of the run alive: %v", pids)
		killPids(pids)
	}

	// Recovery tells the truth and leaves no staging.
	reps, err := recoverOne(ctx, pub)
	if err != nil {
		res.fail("recover: %v", err)
	}
	want := checkpoint.OutcomeNotPublished
	if code == 0 {
		want = checkpoint.OutcomePublished
	}
	found := false
	for _, rep := range reps {
		if rep.Run != run {
			continue
		}
		found = true
		if rep.Outcome != want || rep.Error != "" {
			res.fail("recover reports %s (error %q, notes %q), want %s", rep.Outcome, rep.Error, rep.Notes, want)
		}
	}
	if !found && err == nil {
		res.fail("recover does not report run %s", run)
	}
	if ents, _ := os.ReadDir(filepath.Join(pub, checkpoint.MetaDir, "staging")); len(ents) > 0 {
		res.fail("staging leftovers after recovery: %v", ents)
	}

	after, err := pubcheck.SnapshotTree(root, "pub")
	if err != nil {
		res.fail("snapshot: %v", err)
	} else if d := before.Diff(after); d != "" {
		res.fail("outside the publish directory: %s", d)
	}
}

// errLines is what `run` printed about an error: its error: line and
// stderr.
func errLines(stdout, stderr string) string {
	var b strings.Builder
	for _, l := range strings.Split(stdout, "\n") {
		if s := strings.TrimSpace(l); strings.HasPrefix(s, "error:") {
			b.WriteString(s + "\n")
		}
	}
	b.WriteString(stderr)
	return b.String()
}

// lastAction is the action of a journal's last receipt, read without
// following a symlink or blocking on a FIFO.
func lastAction(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file (%v)", path, err)
	}
	s, err := checkpoint.ReadJournal(f)
	if err != nil {
		return "", err
	}
	if len(s.Events) == 0 {
		return "", nil
	}
	return s.Events[len(s.Events)-1].Action, nil
}
