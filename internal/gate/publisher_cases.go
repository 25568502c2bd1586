package gate

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/harness/pubcheck"
	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

// The journal's action names.
const (
	aExec      = checkpoint.ActionExecutePython
	aSucceeds  = checkpoint.ActionProgramSucceeds
	aExecFails = checkpoint.ActionExecutionFails
	aVerifies  = checkpoint.ActionReloadAndVerify
	aSaveFails = checkpoint.ActionSaveOrVerificationFails
	aInterrupt = checkpoint.ActionInterrupt
	aPublishes = checkpoint.ActionAtomicPublication
	aPubFails  = checkpoint.ActionPublicationFails
	aIntBefore = checkpoint.ActionInterruptBeforePublication
)

// pubCase is one in-process run of the publisher on a real Python program
// and everything it must do.
type pubCase struct {
	name string
	kind string // "scenario", "interrupt" or "fault"
	// prog and verify are examples/ scripts and their arguments.
	prog   []string
	verify []string
	grace  time.Duration
	// rules are the faults injected (harness/pubcheck's FS).
	rules func(pub string) []pubcheck.Rule
	// hook runs at each transition boundary.
	hook func(h *hookCtx, action string, after bool)
	// refused is the error Publish must refuse the run with (no run).
	refused error
	want    []string
	outcome checkpoint.Phase
	err     error
	// exitCode is the program's exit status required (nil: not checked,
	// except 0 for a published run).
	exitCode *int
	// journalFault: a receipt write or fsync fails; verdict is then the
	// journal's verdict required.
	journalFault bool
	verdict      check.Verdict
	// stagingLeft: the staging removal is failed: the run says so and
	// recovery removes it.
	stagingLeft bool
	// planted: the checkpoint's name is taken by someone else's directory,
	// which the run must leave as it is.
	planted bool
	// extra checks.
	check func(ctx context.Context, res *pubResult, run *checkpoint.Result, pub string)
}

// hookCtx is what a boundary hook can act on.
type hookCtx struct {
	cancel context.CancelFunc
	pub    string
	done   chan struct{} // closed when Publish returned
	wg     sync.WaitGroup
}

// go runs f in a goroutine that Publish's caller joins.
func (h *hookCtx) goWait(f func()) {
	h.wg.Add(1)
	go func() {
		defer h.wg.Done()
		f()
	}()
}

// cancelAt interrupts the run at one boundary.
func cancelAt(action string, after bool) func(*hookCtx, string, bool) {
	return func(h *hookCtx, a string, af bool) {
		if a == action && af == after {
			h.cancel()
		}
	}
}

// cancelWhenLogged interrupts the run once the run's log (stdout.log or
// verify.stdout.log) says "hanging": the program (or the verify command)
// has set itself up, however slowly Python starts. It starts watching at
// the boundary (action, after): after ExecutePython's receipt for the
// program, before ReloadAndVerify's work for the verify command.
func cancelWhenLogged(log, action string, after bool) func(*hookCtx, string, bool) {
	return func(h *hookCtx, a string, af bool) {
		if a != action || af != after {
			return
		}
		h.goWait(func() {
			defer h.cancel()
			deadline := time.Now().Add(30 * time.Second)
			for time.Now().Before(deadline) {
				logs, _ := filepath.Glob(filepath.Join(h.pub, checkpoint.MetaDir, "runs", "*", log))
				for _, l := range logs {
					if b, _ := os.ReadFile(l); bytes.Contains(b, []byte("hanging")) {
						return
					}
				}
				select {
				case <-h.done:
					return
				case <-time.After(5 * time.Millisecond):
				}
			}
		})
	}
}

func intp(i int) *int { return &i }

// cases lists the in-process runs: scenarios, interrupts, faults.
func (pe *pubEnv) cases() []*pubCase {
	train := []string{"train.py"}
	published := []string{aExec, aSucceeds, aVerifies, aPublishes}
	saveFail := []string{aExec, aSucceeds, aSaveFails}
	execFail := []string{aExec, aExecFails}
	cases := []*pubCase{
		{name: "train.py publishes, verify.py accepts", prog: train, verify: []string{"verify.py"}, want: published, outcome: checkpoint.PhasePublished,
			check: func(ctx context.Context, res *pubResult, run *checkpoint.Result, pub string) {
				b, err := os.ReadFile(filepath.Join(pub, "model", "model.json"))
				if err != nil || !bytes.Contains(b, []byte(`"linreg-v1"`)) {
					res.fail("published model.json: %q, %v", b, err)
				}
				if run.Manifest == nil || len(run.Manifest.Files) != 1 || run.Manifest.Files[0].Path != "model.json" {
					res.fail("manifest %+v, want model.json alone", run.Manifest)
				}
			}},
		{name: "fail.py exits 3", prog: []string{"fail.py"}, want: execFail, outcome: checkpoint.PhaseFailed, err: checkpoint.ErrProgramFailed, exitCode: intp(3),
			check: func(ctx context.Context, res *pubResult, run *checkpoint.Result, pub string) {
				if b, _ := os.ReadFile(filepath.Join(run.RunDir, "stderr.log")); !bytes.Contains(b, []byte("diverged")) {
					res.fail("stderr.log %q lacks the program's message", b)
				}
			}},
		{name: "badckpt.py nopass: the evaluation fails", prog: []string{"badckpt.py", "nopass"}, want: execFail, outcome: checkpoint.PhaseFailed, err: checkpoint.ErrEvaluation, exitCode: intp(0)},
		{name: "badckpt.py noeval: no evaluation", prog: []string{"badckpt.py", "noeval"}, want: execFail, outcome: checkpoint.PhaseFailed, err: checkpoint.ErrEvaluation, exitCode: intp(0)},
		{name: "badckpt.py empty: no checkpoint", prog: []string{"badckpt.py", "empty"}, want: execFail, outcome: checkpoint.PhaseFailed, err: checkpoint.ErrEmptyCheckpoint, exitCode: intp(0)},
		{name: "badckpt.py stale: not the evaluated bytes", prog: []string{"badckpt.py", "stale"}, want: saveFail, outcome: checkpoint.PhaseFailed, err: checkpoint.ErrVerification, exitCode: intp(0)},
		{name: "badckpt.py consumer: verify.py refuses", prog: []string{"badckpt.py", "consumer"}, verify: []string{"verify.py"}, want: saveFail, outcome: checkpoint.PhaseFailed, err: checkpoint.ErrVerifyCommand, exitCode: intp(0),
			check: func(ctx context.Context, res *pubResult, run *checkpoint.Result, pub string) {
				if b, _ := os.ReadFile(filepath.Join(run.RunDir, "verify.stderr.log")); !bytes.Contains(b, []byte("finite")) {
					res.fail("verify.stderr.log %q lacks the verify command's message", b)
				}
			}},
		{name: "badckpt.py symlink: refused", prog: []string{"badckpt.py", "symlink"}, want: saveFail, outcome: checkpoint.PhaseFailed, err: checkpoint.ErrUnsafeFile},
		{name: "badckpt.py fifo: refused", prog: []string{"badckpt.py", "fifo"}, want: saveFail, outcome: checkpoint.PhaseFailed, err: checkpoint.ErrUnsafeFile},
		{name: "badckpt.py manifest: reserved name refused", prog: []string{"badckpt.py", "manifest"}, want: saveFail, outcome: checkpoint.PhaseFailed, err: checkpoint.ErrUnsafeFile},
		{name: "publication fails: the name appears during the run", prog: train, planted: true,
			hook: func(h *hookCtx, a string, after bool) {
				if a == aPublishes && !after {
					_ = os.MkdirAll(filepath.Join(h.pub, "model"), 0o755)
					_ = os.WriteFile(filepath.Join(h.pub, "model", "theirs"), []byte("other publisher"), 0o644)
				}
			},
			want: []string{aExec, aSucceeds, aVerifies, aPubFails}, outcome: checkpoint.PhaseFailed, err: checkpoint.ErrAlreadyPublished,
			check: func(ctx context.Context, res *pubResult, run *checkpoint.Result, pub string) {
				ents, _ := os.ReadDir(filepath.Join(pub, "model"))
				if b, err := os.ReadFile(filepath.Join(pub, "model", "theirs")); string(b) != "other publisher" || len(ents) != 1 {
					res.fail("the other publisher's checkpoint was touched: %d entries, theirs = %q, %v", len(ents), b, err)
				}
			}},
		{name: "hang.py interrupted while running: SIGTERM is enough", prog: []string{"hang.py"},
			hook: cancelWhenLogged("stdout.log", aExec, true), want: []string{aExec, aInterrupt}, outcome: checkpoint.PhaseInterrupted, err: checkpoint.ErrInterrupted,
			check: func(ctx context.Context, res *pubResult, run *checkpoint.Result, pub string) {
				if run.Exit == nil || !run.Exit.Interrupted || run.Exit.Killed || run.Exit.Signal != "terminated" {
					res.fail("exit %+v, want ended by SIGTERM, without SIGKILL", run.Exit)
				}
			}},
		{name: "hang.py ignores SIGTERM, 2 children: SIGKILL after the grace", prog: []string{"hang.py", "--ignore-term", "--children", "2"}, grace: 200 * time.Millisecond,
			hook: cancelWhenLogged("stdout.log", aExec, true), want: []string{aExec, aInterrupt}, outcome: checkpoint.PhaseInterrupted, err: checkpoint.ErrInterrupted,
			check: func(ctx context.Context, res *pubResult, run *checkpoint.Result, pub string) {
				if run.Exit == nil || !run.Exit.Interrupted || !run.Exit.Killed || run.Exit.Signal != "killed" {
					res.fail("exit %+v, want SIGKILL after the grace period", run.Exit)
				}
			}},
		{name: "interrupt while the verify command runs", prog: train, verify: []string{"hang.py"},
			hook: cancelWhenLogged("verify.stdout.log", aVerifies, false), want: []string{aExec, aSucceeds, aInterrupt}, outcome: checkpoint.PhaseInterrupted, err: checkpoint.ErrInterrupted},
		{name: "tamper.py's child dies with the group", prog: []string{"tamper.py"}, want: published, outcome: checkpoint.PhasePublished,
			check: func(ctx context.Context, res *pubResult, run *checkpoint.Result, pub string) {
				b, err := os.ReadFile(filepath.Join(pub, "model", "model.json"))
				if err != nil || bytes.Contains(b, []byte("TAMPERED")) {
					res.fail("published model.json was tampered with: %q, %v", b, err)
				}
			}},
	}
	for _, c := range cases {
		c.kind = "scenario"
	}

	// An interrupt before and after each step of a publishing run.
	for _, in := range []struct {
		action string
		after  bool
		want   []string
	}{
		{aExec, false, []string{aExec, aInterrupt}},
		{aExec, true, []string{aExec, aInterrupt}},
		{aSucceeds, false, []string{aExec, aInterrupt}},
		{aSucceeds, true, []string{aExec, aSucceeds, aInterrupt}},
		{aVerifies, false, []string{aExec, aSucceeds, aInterrupt}},
		{aVerifies, true, []string{aExec, aSucceeds, aVerifies, aIntBefore}},
		{aPublishes, false, []string{aExec, aSucceeds, aVerifies, aIntBefore}},
		{aPublishes, true, published},
	} {
		when := "before"
		if in.after {
			when = "after"
		}
		c := &pubCase{name: "interrupt " + when + " " + in.action, kind: "interrupt", prog: train,
			hook: cancelAt(in.action, in.after), want: in.want, outcome: checkpoint.PhaseInterrupted, err: checkpoint.ErrInterrupted}
		if in.want[len(in.want)-1] == aPublishes {
			c.outcome, c.err = checkpoint.PhasePublished, nil
		}
		cases = append(cases, c)
	}

	// An interrupt at the boundaries of a failure changes nothing.
	for _, after := range []bool{false, true} {
		when := "before"
		if after {
			when = "after"
		}
		cases = append(cases, &pubCase{name: "interrupt " + when + " " + aExecFails + " of fail.py", kind: "interrupt", prog: []string{"fail.py"},
			hook: cancelAt(aExecFails, after), want: execFail, outcome: checkpoint.PhaseFailed, err: checkpoint.ErrProgramFailed, exitCode: intp(3)})
	}

	// The fault sweep: every fault point of harness/pubcheck's filesystem
	// once.
	eio, enospc, erofs := syscall.EIO, syscall.ENOSPC, syscall.EROFS
	rule := func(op pubcheck.Op, path string, nth int, err error) func(string) []pubcheck.Rule {
		return func(string) []pubcheck.Rule { return []pubcheck.Rule{{Op: op, Path: path, Nth: nth, Err: err}} }
	}
	fault := func(name string, prog []string, want []string, outcome checkpoint.Phase, err error, rules func(string) []pubcheck.Rule) *pubCase {
		return &pubCase{name: name, kind: "fault", prog: prog, want: want, outcome: outcome, err: err, rules: rules}
	}
	const model, manifest = "/model.json", "/" + checkpoint.ManifestName
	cases = append(cases,
		// Staging: the manifest, reads, fsyncs, the walk.
		fault("save: manifest create ENOSPC", train, saveFail, checkpoint.PhaseFailed, checkpoint.ErrSave, rule(pubcheck.OpCreate, manifest, 1, enospc)),
		fault("save: manifest write EROFS", train, saveFail, checkpoint.PhaseFailed, checkpoint.ErrSave, rule(pubcheck.OpWrite, manifest, 1, erofs)),
		fault("save: manifest fsync EIO", train, saveFail, checkpoint.PhaseFailed, checkpoint.ErrSave, rule(pubcheck.OpSync, manifest, 1, eio)),
		fault("save: read while hashing EIO", train, saveFail, checkpoint.PhaseFailed, checkpoint.ErrSave, rule(pubcheck.OpRead, model, 1, eio)),
		fault("save: file fsync EIO", train, saveFail, checkpoint.PhaseFailed, checkpoint.ErrSave, rule(pubcheck.OpSync, model, 1, eio)),
		fault("save: staging directory fsync EIO", train, saveFail, checkpoint.PhaseFailed, checkpoint.ErrSave, rule(pubcheck.OpSyncDir, "/staging/", 1, eio)),
		fault("save: readdir EIO", train, saveFail, checkpoint.PhaseFailed, checkpoint.ErrSave, rule(pubcheck.OpReadDir, "/staging/", 2, eio)),
		// The reload.
		fault("verify: re-open EIO", train, saveFail, checkpoint.PhaseFailed, checkpoint.ErrVerification, rule(pubcheck.OpOpen, model, 3, eio)),
		fault("verify: manifest re-read EIO", train, saveFail, checkpoint.PhaseFailed, checkpoint.ErrVerification, rule(pubcheck.OpOpen, manifest, 1, eio)),
		// Publication.
		fault("publish: rename EROFS", train, []string{aExec, aSucceeds, aVerifies, aPubFails}, checkpoint.PhaseFailed, checkpoint.ErrPublication,
			func(pub string) []pubcheck.Rule {
				return []pubcheck.Rule{{Op: pubcheck.OpRenameNR, Path: filepath.Join(pub, "model"), Exact: true, Err: erofs}}
			}),
		fault("publish: rename EXDEV", train, []string{aExec, aSucceeds, aVerifies, aPubFails}, checkpoint.PhaseFailed, checkpoint.ErrPublication,
			func(pub string) []pubcheck.Rule {
				return []pubcheck.Rule{{Op: pubcheck.OpRenameNR, Path: filepath.Join(pub, "model"), Exact: true, Err: syscall.EXDEV}}
			}),
	)
	durable := fault("publish: fsync after the rename EIO: still published, not durable", train, published, checkpoint.PhasePublished, nil,
		func(pub string) []pubcheck.Rule {
			return []pubcheck.Rule{{Op: pubcheck.OpSyncDir, Path: pub, Exact: true, Err: eio}}
		})
	durable.check = func(ctx context.Context, res *pubResult, run *checkpoint.Result, pub string) {
		if d, ok := journalReceipt[checkpoint.PublishedDetail](run.Journal, aPublishes); !ok || d.Durable {
			res.fail("the AtomicPublication receipt %+v (found %v), want durable false", d, ok)
		}
		if !slices.ContainsFunc(run.Warnings, func(w string) bool { return strings.Contains(w, "fsync") }) {
			res.fail("no warning of the failed fsync: %q", run.Warnings)
		}
	}
	cleanup := fault("cleanup: the staging removal fails", []string{"fail.py"}, execFail, checkpoint.PhaseFailed, checkpoint.ErrProgramFailed,
		rule(pubcheck.OpRemoveAll, "/staging/", 1, eio))
	cleanup.stagingLeft = true
	refused := fault("start: the run directory cannot be made (ENOSPC): refused", train, nil, 0, nil, rule(pubcheck.OpMkdir, "/runs/.new-", 1, enospc))
	refused.refused = checkpoint.ErrStorage
	cases = append(cases, durable, cleanup, refused)
	// Each receipt's write and fsync, at each receipt after Init.
	for i, rc := range []struct {
		prog    []string
		want    []string
		outcome checkpoint.Phase
	}{
		{train, execFail, checkpoint.PhaseFailed},
		{train, saveFail, checkpoint.PhaseFailed},
		{train, []string{aExec, aSucceeds, aVerifies, aPubFails}, checkpoint.PhaseFailed},
		{train, published, checkpoint.PhasePublished}, // never relabelled
	} {
		for _, op := range []pubcheck.Op{pubcheck.OpWrite, pubcheck.OpSync} {
			nth := i + 3 // 1 is the header, 2 the Init receipt
			c := fault(fmt.Sprintf("receipt %s ENOSPC at %s", op, rc.want[i]), rc.prog, rc.want, rc.outcome, nil,
				rule(op, "/journal.ndjson", nth, enospc))
			c.journalFault = true
			// A failed write leaves the journal short of the receipt; a
			// failed fsync leaves the line written, and the run's later
			// receipts unwritten: complete only if it was the last.
			c.verdict = check.Incomplete
			if op == pubcheck.OpSync && rc.want[i] == aPublishes {
				c.verdict = check.Valid
			}
			cases = append(cases, c)
		}
	}
	return cases
}

// journalReceipt reads the detail of the last receipt of action in the
// journal at path.
func journalReceipt[T any](path, action string) (T, bool) {
	var zero T
	f, err := os.Open(path)
	if err != nil {
		return zero, false
	}
	defer f.Close()
	s, err := checkpoint.ReadJournal(f)
	if err != nil {
		return zero, false
	}
	return checkpoint.ReceiptDetail[T](s, action)
}

// runCase runs c in its own directory and checks everything that must
// hold.
func (pe *pubEnv) runCase(ctx context.Context, c *pubCase, res *pubResult) {
	start := time.Now()
	defer func() { res.elapsed = time.Since(start) }()
	dir, err := pe.r.path("publisher", c.kind+"s", pubSlug(c.name), "pub")
	if err != nil {
		res.fail("%v", err)
		return
	}
	root := filepath.Dir(dir)
	pub := dir
	if err := os.Mkdir(pub, 0o755); err != nil {
		res.fail("%v", err)
		return
	}
	if err := pubcheck.WriteSentinel(filepath.Join(root, "sentinel")); err != nil {
		res.fail("%v", err)
		return
	}
	before, err := pubcheck.SnapshotTree(root, "pub")
	if err != nil {
		res.fail("snapshot: %v", err)
		return
	}
	rctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cfg := checkpoint.Config{PublishDir: pub, Name: "model", Command: pe.script(c.prog[0], c.prog[1:]...), Env: pe.env,
		Grace: 3 * time.Second, SkipRecovery: true}
	if c.verify != nil {
		cfg.VerifyCommand = pe.script(c.verify[0], c.verify[1:]...)
	}
	if c.grace != 0 {
		cfg.Grace = c.grace
	}
	var ffs *pubcheck.FS
	if c.rules != nil {
		ffs = pubcheck.NewFS(c.rules(pub)...)
		cfg.FS = ffs
	}
	if pe.opt.wrapFS != nil {
		base := cfg.FS
		if base == nil {
			base = checkpoint.OSFS{}
		}
		cfg.FS = pe.opt.wrapFS(c, base)
	}
	h := &hookCtx{cancel: cancel, pub: pub, done: make(chan struct{})}
	if c.hook != nil {
		cfg.Boundary = func(a string, after bool) { c.hook(h, a, after) }
	}
	run, err := checkpoint.Publish(rctx, cfg)
	close(h.done)
	h.wg.Wait()
	if ctx.Err() != nil {
		res.fail("the gate was interrupted")
		return
	}
	if ffs != nil && ffs.Fired() == 0 {
		res.fail("the fault never fired")
	}

	if c.refused != nil {
		res.outcome = "refused"
		if !errors.Is(err, c.refused) {
			res.fail("Publish: %v, want a refusal matching %v", err, c.refused)
		}
		if run != nil {
			res.fail("a refused run has a result: %+v", run)
		}
		ents, _ := os.ReadDir(filepath.Join(pub, checkpoint.MetaDir, "runs"))
		for _, e := range ents {
			if e.IsDir() {
				res.fail("a refused run left a run directory: %q", e.Name())
			}
		}
		if ents, _ := os.ReadDir(pub); slices.ContainsFunc(ents, func(e os.DirEntry) bool { return e.Name() != checkpoint.MetaDir }) {
			res.fail("a refused run left entries in the publish directory: %v", ents)
		}
		pe.checkOutside(res, root, before)
		return
	}
	if err != nil {
		res.fail("Publish refused the run: %v", err)
		return
	}
	res.outcome = run.Outcome.String()
	pe.checkRun(ctx, c, res, run, pub)
	if c.check != nil {
		c.check(ctx, res, run, pub)
	}
	pe.checkOutside(res, root, before)
}

// checkOutside asserts that nothing under root but pub/ changed.
func (pe *pubEnv) checkOutside(res *pubResult, root string, before pubcheck.Tree) {
	after, err := pubcheck.SnapshotTree(root, "pub")
	if err != nil {
		res.fail("snapshot: %v", err)
	} else if d := before.Diff(after); d != "" {
		res.fail("outside the publish directory: %s", d)
	}
}

// checkRun asserts what every run of c must satisfy.
func (pe *pubEnv) checkRun(ctx context.Context, c *pubCase, res *pubResult, run *checkpoint.Result, pub string) {
	target := filepath.Join(pub, "model")
	if !slices.Equal(run.Actions, c.want) {
		res.fail("actions %v, want %v (err %v)", run.Actions, c.want, run.Err)
	}
	if run.Outcome != c.outcome {
		res.fail("outcome %s, want %s (err %v)", run.Outcome, c.outcome, run.Err)
	}
	switch {
	case run.Outcome == checkpoint.PhasePublished && run.Err != nil:
		res.fail("published with an error: %v", run.Err)
	case c.err != nil && !errors.Is(run.Err, c.err):
		res.fail("error %q, want one matching %q", errText(run.Err), c.err)
	}
	switch {
	case c.journalFault && !errors.Is(run.JournalErr, checkpoint.ErrJournal):
		res.fail("JournalErr %v, want a receipt failure", run.JournalErr)
	case !c.journalFault && run.JournalErr != nil:
		res.fail("a receipt was not written: %v", run.JournalErr)
	}
	wantExit := c.exitCode
	if wantExit == nil && run.Outcome == checkpoint.PhasePublished {
		wantExit = intp(0)
	}
	if wantExit != nil && (run.Exit == nil || run.Exit.Code != *wantExit || run.Exit.Interrupted) {
		res.fail("program exit %+v, want status %d", run.Exit, *wantExit)
	}

	// Published, or not.
	fi, lerr := os.Lstat(target)
	if run.Outcome == checkpoint.PhasePublished {
		if run.Checkpoint != target {
			res.fail("Result.Checkpoint %q, want %q", run.Checkpoint, target)
		}
		if lerr != nil {
			res.fail("published, but %s: %v", target, lerr)
		} else {
			checkPublished(ctx, res, target, run.RunID, run.Digest())
		}
	} else {
		if run.Checkpoint != "" {
			res.fail("outcome %s with Result.Checkpoint %q", run.Outcome, run.Checkpoint)
		}
		if m, err := checkpoint.ReadManifest(checkpoint.OSFS{}, target); err == nil && m.Run == run.RunID {
			res.fail("outcome %s, but %s holds the run's checkpoint", run.Outcome, target)
		} else if lerr == nil && !c.planted {
			res.fail("outcome %s, but %s exists (%s)", run.Outcome, target, fi.Mode().Type())
		}
	}

	// Staging.
	_, serr := os.Lstat(run.Staging)
	switch {
	case c.stagingLeft:
		if run.StagingRemoved || serr != nil {
			res.fail("the staging removal failed, but StagingRemoved=%v and staging: %v", run.StagingRemoved, serr)
		}
		if !slices.ContainsFunc(run.Warnings, func(w string) bool { return strings.Contains(w, "staging not removed") }) {
			res.fail("no warning that staging was not removed: %q", run.Warnings)
		}
	case !isNotExist(serr):
		res.fail("the staging directory %s remains (%v; StagingRemoved=%v)", run.Staging, serr, run.StagingRemoved)
	case run.Outcome != checkpoint.PhasePublished && !run.StagingRemoved:
		res.fail("outcome %s but StagingRemoved=false", run.Outcome)
	}

	// The journal: the run's own record, checked against model/program.
	if err := pubcheck.Agrees(ctx, run, pub, "model"); err != nil {
		res.fail("%v", err)
	}
	v := pe.journalVerdict(ctx, res, run.Journal, run.JournalErr != nil)
	switch {
	case c.journalFault && v != c.verdict:
		res.fail("journal verdict %s, want %s", v, c.verdict)
	case !c.journalFault && v != check.Valid:
		res.fail("journal verdict %s, want valid", v)
	}
	if !c.journalFault && run.Outcome != checkpoint.PhasePublished {
		last := run.Actions[len(run.Actions)-1]
		if d, ok := journalReceipt[checkpoint.EndDetail](run.Journal, last); !ok || d.StagingRemoved != !c.stagingLeft {
			res.fail("the %s receipt %+v (found %v): staging_removed should be %v", last, d, ok, !c.stagingLeft)
		}
	}

	// Nothing of the run is alive.
	if pids := awaitNoProcesses(func() []int { return runProcesses(run.RunID) }, 3*time.Second); len(pids) > 0 {
		res.fail("processes of the run alive after Publish returned: %v", pids)
		killPids(pids)
	}

	// Recovery agrees with the outcome and leaves no staging.
	reps, err := recoverOne(ctx, pub)
	switch {
	case err != nil:
		res.fail("recover: %v", err)
	case len(reps) != 1:
		res.fail("recover reports %d runs, want 1: %+v", len(reps), reps)
	default:
		want := checkpoint.OutcomeNotPublished
		if run.Outcome == checkpoint.PhasePublished {
			want = checkpoint.OutcomePublished
		}
		rep := reps[0]
		if rep.Run != run.RunID || rep.Outcome != want {
			res.fail("recover reports run %s %s, want %s %s (notes %q, error %q)", rep.Run, rep.Outcome, run.RunID, want, rep.Notes, rep.Error)
		}
		if c.stagingLeft && len(rep.Removed) != 1 {
			res.fail("recover removed %q, want the staging directory left behind", rep.Removed)
		}
		if !c.stagingLeft && len(rep.Removed) != 0 {
			res.fail("recover removed %q after a run that removed its staging", rep.Removed)
		}
	}
	if _, err := os.Lstat(run.Staging); !isNotExist(err) {
		res.fail("the staging directory remains after recovery (%v)", err)
	}
}
