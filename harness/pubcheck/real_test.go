package pubcheck_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/harness/pubcheck"
	"github.com/tracecheck/tracecheck/impl/checkpoint"
	"github.com/tracecheck/tracecheck/model/program"
)

// A = the actions of a run after Init, in the journal's names.
type A = []string

const (
	exec_     = checkpoint.ActionExecutePython
	succeeds  = checkpoint.ActionProgramSucceeds
	execFails = checkpoint.ActionExecutionFails
	verifies  = checkpoint.ActionReloadAndVerify
	saveFails = checkpoint.ActionSaveOrVerificationFails
	interrupt = checkpoint.ActionInterrupt
	publishes = checkpoint.ActionAtomicPublication
	pubFails  = checkpoint.ActionPublicationFails
	intBefore = checkpoint.ActionInterruptBeforePublication
)

// scenario is one run of the publisher and what it must do.
type scenario struct {
	name    string
	command func(t *testing.T) []string
	verify  func(t *testing.T) []string
	grace   time.Duration
	// hook runs at each boundary with the run's cancel function and the
	// publish directory.
	hook    func(action string, after bool, cancel context.CancelFunc, pub string)
	want    A
	outcome checkpoint.Phase
	err     error
	// verdict, if set, is the journal verdict required.
	verdict check.Verdict
	check   func(t *testing.T, res *checkpoint.Result, pub string)
}

// runScenario runs sc and checks everything that must hold of any run: the
// journal validates against model/program with the expected verdict and the
// publish directory agrees with the outcome. It returns the check report.
func runScenario(t *testing.T, sc scenario, config func(pub string) checkpoint.Config) (*checkpoint.Result, *check.Report, string) {
	t.Helper()
	pub := filepath.Join(t.TempDir(), "pub")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	cfg := config(pub)
	cfg.PublishDir, cfg.Name = pub, "model"
	if cfg.Command == nil {
		cfg.Command = sc.command(t)
	}
	if sc.verify != nil {
		cfg.VerifyCommand = sc.verify(t)
	}
	if sc.grace != 0 {
		cfg.Grace = sc.grace
	}
	if sc.hook != nil {
		cfg.Boundary = func(a string, after bool) { sc.hook(a, after, cancel, pub) }
	}
	res, err := checkpoint.Publish(ctx, cfg)
	if err != nil {
		t.Fatalf("Publish refused the run: %v", err)
	}
	if !equalActions(res.Actions, sc.want) {
		t.Errorf("actions %v, want %v (err %v)", res.Actions, sc.want, res.Err)
	}
	if res.Outcome != sc.outcome {
		t.Errorf("outcome %s, want %s (err %v)", res.Outcome, sc.outcome, res.Err)
	}
	if sc.err != nil && !errors.Is(res.Err, sc.err) {
		t.Errorf("err %v, want one matching %v", res.Err, sc.err)
	}
	if err := pubcheck.Agrees(context.Background(), res, pub, "model"); err != nil {
		t.Error(err)
	}
	rep, err := pubcheck.CheckJournal(context.Background(), res.Journal)
	if err != nil {
		t.Fatalf("check journal: %v", err)
	}
	keepJournal(t, res.Journal)
	// A failed receipt write leaves the journal short: incomplete. A failed
	// receipt fsync may leave the line written: valid if it was the last.
	switch v := rep.Verdict(); {
	case res.JournalErr == nil && v != check.Valid,
		res.JournalErr != nil && v == check.Violation:
		t.Errorf("journal verdict %s (journal error %v): %+v", v, res.JournalErr, rep.Instances)
	case sc.verdict != 0 && v != sc.verdict:
		t.Errorf("journal verdict %s, want %s", v, sc.verdict)
	}
	if sc.check != nil {
		sc.check(t, res, pub)
	}
	return res, rep, pub
}

// keepJournal copies a run's journal into $PUBCHECK_JOURNALS, if set, for
// `tracecheck check` and `tracecheck coverage` (make coverage-publisher).
func keepJournal(t *testing.T, journal string) {
	dir := os.Getenv("PUBCHECK_JOURNALS")
	if dir == "" {
		return
	}
	b, err := os.ReadFile(journal)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.NewReplacer("/", "_", " ", "_", ":", "", ",", "", "'", "").Replace(t.Name()) + ".ndjson"
	if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func equalActions(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func script(name string, args ...string) func(t *testing.T) []string {
	return func(t *testing.T) []string { return cmd(t, name, args...) }
}

// cancelWhenHanging interrupts the run once hang.py has set itself up and
// printed "hanging" (python can start slowly on a loaded machine).
func cancelWhenHanging(a string, after bool, cancel context.CancelFunc, pub string) {
	if a != exec_ || !after {
		return
	}
	go func() {
		defer cancel()
		for i := 0; i < 3000; i++ {
			logs, _ := filepath.Glob(filepath.Join(pub, checkpoint.MetaDir, "runs", "*", "stdout.log"))
			for _, l := range logs {
				if b, _ := os.ReadFile(l); bytes.Contains(b, []byte("hanging")) {
					return
				}
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
}

// cancelAt returns a hook that interrupts the run at one boundary.
func cancelAt(action string, after bool) func(string, bool, context.CancelFunc, string) {
	return func(a string, af bool, cancel context.CancelFunc, _ string) {
		if a == action && af == after {
			cancel()
		}
	}
}

func realScenarios() []scenario {
	return []scenario{
		{name: "train publishes", command: script("train.py"), verify: script("verify.py"),
			want: A{exec_, succeeds, verifies, publishes}, outcome: checkpoint.PhasePublished,
			check: func(t *testing.T, res *checkpoint.Result, pub string) {
				b, err := os.ReadFile(filepath.Join(pub, "model", "model.json"))
				if err != nil || !bytes.Contains(b, []byte(`"linreg-v1"`)) {
					t.Errorf("published model.json: %q, %v", b, err)
				}
			}},
		{name: "fail.py fails", command: script("fail.py"),
			want: A{exec_, execFails}, outcome: checkpoint.PhaseFailed, err: checkpoint.ErrProgramFailed,
			check: func(t *testing.T, res *checkpoint.Result, _ string) {
				if res.Exit == nil || res.Exit.Code != 3 {
					t.Errorf("exit %+v, want status 3", res.Exit)
				}
				if b, _ := os.ReadFile(filepath.Join(res.RunDir, "stderr.log")); !bytes.Contains(b, []byte("diverged")) {
					t.Errorf("stderr.log %q lacks the program's message", b)
				}
			}},
		{name: "hang.py interrupted, SIGKILL after grace", command: script("hang.py", "--ignore-term", "--children", "2"),
			grace: 200 * time.Millisecond,
			hook:  cancelWhenHanging,
			want:  A{exec_, interrupt}, outcome: checkpoint.PhaseInterrupted, err: checkpoint.ErrInterrupted,
			check: func(t *testing.T, res *checkpoint.Result, _ string) {
				if res.Exit == nil || !res.Exit.Killed || res.Exit.Signal == "" {
					t.Errorf("exit %+v, want SIGKILL after the grace period", res.Exit)
				}
				for try := 0; ; try++ { // SIGKILLed processes may take a moment to go
					pids := runProcesses(res.RunID)
					if len(pids) == 0 {
						break
					}
					if try == 200 {
						t.Errorf("processes of the run still alive: %v", pids)
						break
					}
					time.Sleep(10 * time.Millisecond)
				}
			}},
		{name: "hang.py interrupted, exits on SIGTERM", command: script("hang.py"),
			hook: cancelWhenHanging,
			want: A{exec_, interrupt}, outcome: checkpoint.PhaseInterrupted, err: checkpoint.ErrInterrupted,
			check: func(t *testing.T, res *checkpoint.Result, _ string) {
				if res.Exit == nil || res.Exit.Killed {
					t.Errorf("exit %+v, want SIGTERM to be enough", res.Exit)
				}
			}},
		{name: "interrupt while staging", command: script("train.py"), hook: cancelAt(succeeds, true),
			want: A{exec_, succeeds, interrupt}, outcome: checkpoint.PhaseInterrupted, err: checkpoint.ErrInterrupted},
		{name: "badckpt stale fails verification", command: script("badckpt.py", "stale"),
			want: A{exec_, succeeds, saveFails}, outcome: checkpoint.PhaseFailed, err: checkpoint.ErrVerification},
		{name: "badckpt consumer fails the verify command", command: script("badckpt.py", "consumer"), verify: script("verify.py"),
			want: A{exec_, succeeds, saveFails}, outcome: checkpoint.PhaseFailed, err: checkpoint.ErrVerifyCommand},
		{name: "badckpt symlink is refused", command: script("badckpt.py", "symlink"),
			want: A{exec_, succeeds, saveFails}, outcome: checkpoint.PhaseFailed, err: checkpoint.ErrUnsafeFile},
		{name: "badckpt fifo is refused", command: script("badckpt.py", "fifo"),
			want: A{exec_, succeeds, saveFails}, outcome: checkpoint.PhaseFailed, err: checkpoint.ErrUnsafeFile},
		{name: "badckpt manifest name is refused", command: script("badckpt.py", "manifest"),
			want: A{exec_, succeeds, saveFails}, outcome: checkpoint.PhaseFailed, err: checkpoint.ErrUnsafeFile},
		{name: "badckpt nopass fails", command: script("badckpt.py", "nopass"),
			want: A{exec_, execFails}, outcome: checkpoint.PhaseFailed, err: checkpoint.ErrEvaluation},
		{name: "badckpt noeval fails", command: script("badckpt.py", "noeval"),
			want: A{exec_, execFails}, outcome: checkpoint.PhaseFailed, err: checkpoint.ErrEvaluation},
		{name: "badckpt empty fails", command: script("badckpt.py", "empty"),
			want: A{exec_, execFails}, outcome: checkpoint.PhaseFailed, err: checkpoint.ErrEmptyCheckpoint},
		{name: "interrupt before publication", command: script("train.py"), hook: cancelAt(verifies, true),
			want: A{exec_, succeeds, verifies, intBefore}, outcome: checkpoint.PhaseInterrupted, err: checkpoint.ErrInterrupted},
		{name: "publication fails: the name appears during the run", command: script("train.py"),
			hook: func(a string, after bool, _ context.CancelFunc, pub string) {
				if a == publishes && !after {
					if err := os.MkdirAll(filepath.Join(pub, "model"), 0o755); err != nil {
						panic(err)
					}
					if err := os.WriteFile(filepath.Join(pub, "model", "theirs"), []byte("other publisher"), 0o644); err != nil {
						panic(err)
					}
				}
			},
			want: A{exec_, succeeds, verifies, pubFails}, outcome: checkpoint.PhaseFailed, err: checkpoint.ErrAlreadyPublished,
			check: func(t *testing.T, res *checkpoint.Result, pub string) {
				if b, err := os.ReadFile(filepath.Join(pub, "model", "theirs")); string(b) != "other publisher" {
					t.Errorf("the other checkpoint was touched: %q, %v", b, err)
				}
			}},
		{name: "tamper.py's child is killed with the group", command: script("tamper.py"),
			want: A{exec_, succeeds, verifies, publishes}, outcome: checkpoint.PhasePublished,
			check: func(t *testing.T, res *checkpoint.Result, pub string) {
				// The publisher killed the group when the program exited, and
				// swept the run's processes until none was left before staging:
				// none may be alive now. With none alive nothing can write any
				// more, so what is read below is final (a sleep instead would
				// pass on a machine too slow for the child to have written).
				if ps := runProcesses(res.RunID); len(ps) != 0 {
					t.Fatalf("processes of the run still alive after Publish returned: %v", ps)
				}
				b, err := os.ReadFile(filepath.Join(pub, "model", "model.json"))
				if err != nil || bytes.Contains(b, []byte("TAMPERED")) {
					t.Errorf("published model.json was tampered with: %q, %v", b, err)
				}
				if _, err := checkpoint.Verify(context.Background(), checkpoint.OSFS{}, filepath.Join(pub, "model"), nil); err != nil {
					t.Error(err)
				}
			}},
	}
}

// TestRealRuns runs the bundled Python examples through every transition
// of seed 000's chart; every journal validates against model/program and
// the runs together exercise all ten chart transitions.
func TestRealRuns(t *testing.T) {
	python(t)
	var reports []*check.Report
	scenarios := realScenarios()
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) {
			_, rep, _ := runScenario(t, sc, func(string) checkpoint.Config { return checkpoint.Config{SkipRecovery: true} })
			reports = append(reports, rep)
		})
	}
	if len(reports) < len(scenarios) {
		t.Logf("coverage not asserted: %d of %d scenarios ran", len(reports), len(scenarios))
		return
	}
	cov, err := pubcheck.Coverage(context.Background(), reports...)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	_ = cov.WriteText(&buf)
	t.Logf("model/program transition coverage by real runs:\n%s", buf.String())
	for _, e := range cov.Edges {
		if e.Action == program.Terminated {
			continue // the chart hides terminal self-loops; a run records no stuttering
		}
		if e.Count == 0 {
			t.Errorf("chart transition %s --%s--> %s not exercised by real runs", e.From, e.Action, e.To)
		}
	}
	if cov.Exercised != 10 {
		t.Errorf("exercised %d of %d transitions, want the 10 chart transitions", cov.Exercised, cov.Total)
	}
}

// runProcesses lists live processes whose environment names the run.
func runProcesses(run string) []string {
	ents, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range ents {
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil {
			continue
		}
		stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if strings.Contains(string(stat), ") Z ") {
			continue // a zombie is dead
		}
		if bytes.Contains(env, []byte(checkpoint.EnvRunID+"="+run+"\x00")) {
			out = append(out, e.Name())
		}
	}
	return out
}

// TestTamperEscapedChild: tamper.py --escape leaves a child outside the
// process group (setsid), which the group kill cannot reach, holding
// model.json open to append to it once the program has exited. The
// publisher finds it by its $TRACECHECK_RUN_ID when the program ends and
// kills it before staging, so nothing writes after the checkpoint is
// verified: the run publishes the evaluated bytes, which still verify
// afterwards, and recovery agrees. (A child that also clears its
// environment is caught only by ExecRunner.Subreaper, which `tracecheck
// run` uses: see the hostile-program test.)
func TestTamperEscapedChild(t *testing.T) {
	pub := filepath.Join(t.TempDir(), "pub")
	ctx := context.Background()
	res, err := checkpoint.Publish(ctx, checkpoint.Config{PublishDir: pub, Name: "model", Command: cmd(t, "tamper.py", "--escape")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, p := range runProcesses(res.RunID) {
			if pid, err := strconv.Atoi(p); err == nil {
				_ = syscall.Kill(pid, syscall.SIGKILL)
			}
		}
	})
	if res.Outcome != checkpoint.PhasePublished {
		t.Fatalf("outcome %s (%v), want Published", res.Outcome, res.Err)
	}
	if res.Exit == nil || len(res.Exit.Orphans) == 0 {
		t.Fatalf("no escaped process was killed (exit %+v): the test shows nothing", res.Exit)
	}
	t.Logf("killed the escaped child(ren) %v", res.Exit.Orphans)
	// The publisher swept the run's processes until none was left, before
	// staging and again before its final verification: none may be alive
	// now. With none alive nothing can write any more, so what is read
	// below is final (a sleep instead would pass on a machine too slow for
	// the child to have written).
	if ps := runProcesses(res.RunID); len(ps) != 0 {
		t.Fatalf("processes of the run still alive after Publish returned: %v", ps)
	}
	if _, err := checkpoint.Verify(ctx, checkpoint.OSFS{}, filepath.Join(pub, "model"), nil); err != nil {
		t.Fatalf("the published checkpoint was modified: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(pub, "model", "model.json")); bytes.Contains(b, []byte("TAMPERED")) {
		t.Fatal("the published model.json was tampered with")
	}
	reps, err := checkpoint.Recover(ctx, checkpoint.RecoverOptions{PublishDir: pub})
	if err != nil || len(reps) != 1 || reps[0].Outcome != checkpoint.OutcomePublished {
		t.Fatalf("recover: %+v %v, want published-and-verified", reps, err)
	}
}
