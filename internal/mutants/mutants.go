// Package mutants names the bugs of the bundled systems that tracecheck's
// detectors must catch: each a small rewrite of the real source, applied
// only through go's -overlay by package mutate, with the tests expected to
// kill it. `tracecheck mutate` runs them and prints the kill matrix.
package mutants

import (
	"regexp"

	"github.com/tracecheck/tracecheck/mutate"
)

const (
	publisher = "impl/checkpoint/publisher.go"
	manifest  = "impl/checkpoint/manifest.go"
	hashGo    = "impl/checkpoint/hash.go"
	journalGo = "impl/checkpoint/journal.go"
	pubcheck  = "./harness/pubcheck/"
	ckpt      = "./impl/checkpoint/"

	checkGo  = "check/check.go"
	checkPkg = "./check/"

	coord        = "impl/session/coord.go"
	respGo       = "impl/session/resp.go"
	sessionGo    = "impl/session/session.go"
	sessioncheck = "./harness/sessioncheck/"
	sessionPkg   = "./impl/session/"
)

// Named returns the named code mutants, in the order the kill matrix lists
// them.
func Named() []mutate.Mutant {
	return []mutate.Mutant{
		{
			Name:  "publisher/skip-the-reload",
			Doc:   "the staged checkpoint is published without being reloaded and verified",
			File:  publisher,
			Old:   "\t\tm, err = verify(ctx, r.staging.root, r.staging.name, verifyOptions{Progress: r.progress, Want: mb, Clock: cfg.Clock})\n",
			New:   "\t\t_ = mb\n",
			Tests: []mutate.Test{{Package: pubcheck, Run: "TestHostile|TestRealRuns|TestFaultInjection"}},
		},
		{
			Name:  "publisher/ignore-verify-command-status",
			Doc:   "a verify command that exits non-zero does not fail the run",
			File:  publisher,
			Old:   "\tcase exit.Code != 0:\n\t\treturn fmt.Errorf(\"%w: %s exited %d: %s\", ErrVerifyCommand,",
			New:   "\tcase false:\n\t\treturn fmt.Errorf(\"%w: %s exited %d: %s\", ErrVerifyCommand,",
			Tests: []mutate.Test{{Package: pubcheck, Run: "TestRealRuns"}},
		},
		{
			Name:  "publisher/leave-staging-on-failure",
			Doc:   "a failed or interrupted run leaves its staging directory behind (and says it removed it)",
			File:  publisher,
			Old:   "\tif err := r.staging.root.RemoveAll(r.staging.name); err != nil {\n",
			New:   "\tif err := error(nil); err != nil {\n",
			Tests: []mutate.Test{{Package: pubcheck, Run: "TestFaultInjection|TestRealRuns"}},
		},
		{
			Name:  "publisher/relabel-published-on-receipt-failure",
			Doc:   "a receipt that cannot be written after the rename relabels the published run as failed",
			File:  publisher,
			Old:   "\t_ = r.advance(detail)\n",
			New:   "\tif r.advance(detail) != nil {\n\t\tr.res.Outcome = PhaseFailed\n\t}\n",
			Tests: []mutate.Test{{Package: pubcheck, Run: "TestFaultInjection"}},
		},
		{
			Name:  "publisher/ignore-interrupt-while-staging",
			Doc:   "an interrupt during staging or verification ends the run as failed, not interrupted",
			File:  publisher,
			Old:   "\t\tif ctx.Err() != nil || errors.Is(err, ErrInterrupted) {\n",
			New:   "\t\tif false {\n",
			Tests: []mutate.Test{{Package: pubcheck, Run: "TestFaultInjection|TestRealRuns"}},
		},
		{
			Name:  "publisher/publish-before-verify",
			Doc:   "the checkpoint is renamed into place before the verify command and the final verification run",
			File:  publisher,
			Old:   "\t\tr.before(evDone)\n\t\terr = r.verifyCommand(ctx)\n",
			New:   "\t\tr.before(evDone)\n\t\t_ = r.staging.root.RenameNoReplace(r.staging.name, r.pub, cfg.Name)\n\t\terr = r.verifyCommand(ctx)\n",
			Tests: []mutate.Test{{Package: pubcheck, Run: "TestRealRuns|TestFaultInjection|TestHostile"}},
		},
		{
			Name:  "publisher/skip-manifest-fsync",
			Doc:   "the manifest is closed without an fsync, and nothing says so",
			File:  manifest,
			Old:   "\tsy.start(mf)\n",
			New:   "\tmf.Close()\n",
			Tests: []mutate.Test{{Package: ckpt}, {Package: pubcheck, Run: "TestFaultInjection|TestDurability"}},
		},
		{
			Name:  "publisher/publish-by-copy",
			Doc:   "the verified checkpoint is copied to its name (file by file, not fsynced) and staging removed, instead of renamed there atomically",
			File:  publisher,
			Old:   "\tif err := r.staging.root.RenameNoReplace(r.staging.name, r.pub, cfg.Name); err != nil {\n",
			New:   "\tif err := func() error {\n\t\tif err := os.CopyFS(target, os.DirFS(r.res.Staging)); err != nil {\n\t\t\treturn err\n\t\t}\n\t\treturn r.staging.root.RemoveAll(r.staging.name)\n\t}(); err != nil {\n",
			Tests: []mutate.Test{{Package: pubcheck, Run: "TestDurability|TestFaultInjection|TestRealRuns"}},
		},
		{
			Name:  "publisher/skip-file-fsync",
			Doc:   "the staged files are never fsynced (their descriptors just closed), and nothing says so",
			File:  hashGo,
			Old:   "\t\tsy.start(sf)\n",
			New:   "\t\tsf.Close()\n",
			Tests: []mutate.Test{{Package: pubcheck, Run: "TestDurability|TestFaultInjection"}},
		},
		{
			Name:  "publisher/skip-dir-fsync",
			Doc:   "the staged directories are never fsynced, so the renamed checkpoint's entries may vanish, and nothing says so",
			File:  manifest,
			Old:   "\t\tsy.do(root.Path()+\"/\"+d, func() error { return root.SyncDir(d) })\n",
			New:   "\t\t_ = d\n",
			Tests: []mutate.Test{{Package: pubcheck, Run: "TestDurability|TestFaultInjection"}},
		},
		{
			Name:  "publisher/skip-publish-dir-fsync",
			Doc:   "the publish directory is not fsynced after the rename, yet the Published receipt says durable",
			File:  publisher,
			Old:   "\tif err := r.pub.SyncDir(\".\"); err != nil {\n",
			New:   "\tif err := error(nil); err != nil {\n",
			Tests: []mutate.Test{{Package: pubcheck, Run: "TestDurability|TestFaultInjection"}},
		},
		{
			Name:  "publisher/skip-first-run-dir-fsync",
			Doc:   "on a publish directory's first run, the publisher's new directories are not fsynced: a power cut can keep the checkpoint and lose its journal",
			File:  publisher,
			Old:   "\tif firstRun {\n",
			New:   "\tif firstRun && false {\n",
			Tests: []mutate.Test{{Package: pubcheck, Run: "TestDurability"}},
		},
		{
			Name:  "publisher/skip-receipt-fsync",
			Doc:   "journal receipts are written but never fsynced, and nothing says so",
			File:  journalGo,
			Old:   "func (j *journalFile) Sync() error { return j.f.Sync() }",
			New:   "func (j *journalFile) Sync() error { return nil }",
			Tests: []mutate.Test{{Package: pubcheck, Run: "TestDurability|TestFaultInjection"}},
		},
		{
			Name:  "checker/accept-changing-stutter",
			Doc:   "a stutter event whose state differs from the current one is accepted (the state it names is compared with itself)",
			File:  checkGo,
			Old:   "\t\t\tif !want.Equal(c.cons.vals[i]) {\n",
			New:   "\t\t\tif !want.Equal(want) {\n",
			Tests: []mutate.Test{{Package: checkPkg, Run: "TestCorpus|TestReferenceSession|TestDivergenceKinds"}},
		},
		{
			Name:  "checker/non-terminal-end-valid",
			Doc:   "a trace that ends where the spec may not stop is reported valid, not incomplete",
			File:  checkGo,
			Old:   "\t\tif e := c.spec.end(s); !e.stop {\n",
			New:   "\t\tif e := c.spec.end(s); false && !e.stop {\n",
			Tests: []mutate.Test{{Package: checkPkg, Run: "TestCorpus|TestReferenceProgram|TestCandidateSets"}},
		},
		{
			Name:  "checker/keep-first-candidate",
			Doc:   "when several successor states fit an event, only the first is kept as a candidate",
			File:  checkGo,
			Old:   "\t\t\t\tnext = c.addCandidate(next, t)\n",
			New:   "\t\t\t\t_ = t\n",
			Tests: []mutate.Test{{Package: checkPkg, Run: "TestCandidateSets|TestReferenceCounter|TestWideCandidateSets"}},
		},
		{
			Name: "session/fire-and-forget-compaction",
			Doc:  "teardown neither cancels nor joins compaction, which runs on and commits after the session is torn down (the M4 gap)",
			File: coord,
			Old:  "\t\tcase r := <-c.stop:\n",
			New: "\t\tcase r := <-c.stop:\n" +
				"\t\t\tif c.name == VarCompaction { // says it stopped, and runs on\n" +
				"\t\t\t\tr.reply <- stopResult{who: r.who}\n" +
				"\t\t\t\tfor len(c.live) > 0 {\n" +
				"\t\t\t\t\tc.exited(<-c.exits)\n" +
				"\t\t\t\t}\n" +
				"\t\t\t\treturn\n" +
				"\t\t\t}\n",
			Tests: []mutate.Test{{Package: sessioncheck, Run: "TestCompactionDiesWithSession"}, {Package: sessionPkg, Run: "TestCloseJoinsCompaction"}},
		},
		{
			Name:  "session/abandoned-child-leaks-work",
			Doc:   "a child coordinator abandoned at teardown returns without ending its work: its responses never end for their callers",
			File:  coord,
			Old:   "\t\t\tfor _, w := range c.live {\n\t\t\t\tw.end(ErrClosed)\n\t\t\t}\n\t\t\treturn\n",
			New:   "\t\t\treturn\n",
			Tests: []mutate.Test{{Package: sessionPkg, Run: "TestAbandonedChildEndsItsWork"}},
		},
		{
			Name: "session/vad-not-stopped",
			Doc:  "teardown's stop request to VAD is answered as if VAD stopped, but VAD neither terminates nor stops taking frames",
			File: coord,
			Old:  "\t\tcase r := <-c.stop:\n",
			New: "\t\tcase r := <-c.stop:\n" +
				"\t\t\tif c.name == VarVad { // says it stopped, and runs on\n" +
				"\t\t\t\tr.reply <- stopResult{who: r.who}\n" +
				"\t\t\t\tcontinue\n" +
				"\t\t\t}\n",
			Tests: []mutate.Test{{Package: sessioncheck, Run: "TestTeardownAtEveryPoint|TestRecordedTraces|TestModelBased"}, {Package: sessionPkg, Run: "TestNothingStartsAfterTeardown|TestLifecycle"}},
		},
		{
			Name: "session/response-not-stopped",
			Doc:  "teardown's stop request to the response coordinator is answered as if it stopped, but the active response streams on and new ones start",
			File: coord,
			Old:  "\t\tcase r := <-c.stop:\n",
			New: "\t\tcase r := <-c.stop:\n" +
				"\t\t\tif c.name == VarResp { // says it stopped, and runs on\n" +
				"\t\t\t\tr.reply <- stopResult{who: r.who}\n" +
				"\t\t\t\tcontinue\n" +
				"\t\t\t}\n",
			Tests: []mutate.Test{{Package: sessioncheck, Run: "TestTeardownAtEveryPoint|TestRecordedTraces|TestModelBased"}, {Package: sessionPkg, Run: "TestNothingStartsAfterTeardown|TestNoAudioAfterEnd|TestTTSClosedOnce"}},
		},
		{
			Name: "session/response-after-teardown",
			Doc:  "the response coordinator stops and joins its responses, then forgets its terminated state, which refused new ones: a response can start after teardown",
			File: coord,
			Old:  "\t\t\tr.reply <- stopResult{who: r.who, abandoned: c.shutdown(r.deadline)}\n\t\t\treturn\n",
			New: "\t\t\tr.reply <- stopResult{who: r.who, abandoned: c.shutdown(r.deadline)}\n" +
				"\t\t\tif c.name == VarResp { // the refusal of the terminated state, gone\n" +
				"\t\t\t\tvar fresh S\n" +
				"\t\t\t\tc.state = fresh\n" +
				"\t\t\t\tcontinue\n" +
				"\t\t\t}\n" +
				"\t\t\treturn\n",
			Tests: []mutate.Test{{Package: sessioncheck, Run: "TestTeardownAtEveryPoint|TestLinearizable$"}},
		},
		{
			Name:  "session/teardown-without-join",
			Doc:   "teardown cancels every child's work but does not wait for it to exit: the children report terminated while their workers still run",
			File:  coord,
			Old:   "\t\tfor len(c.live) > 0 {\n\t\t\tselect {\n\t\t\tcase ex := <-c.exits:\n\t\t\t\tc.stutter(ex.id)\n",
			New:   "\t\tfor len(c.live) > 0 && false {\n\t\t\tselect {\n\t\t\tcase ex := <-c.exits:\n\t\t\t\tc.stutter(ex.id)\n",
			Tests: []mutate.Test{{Package: sessioncheck, Run: "TestTeardownAtEveryPoint|TestRecordedTraces"}, {Package: sessionPkg, Run: "TestTTSClosedOnce|TestAbandonedChild"}},
		},
		{
			Name:  "session/trace-intended-state",
			Doc:   "a child that abandons work it could not join records the state it meant to reach (terminated) instead of the one it is in: the Teardown event says every child died while work runs on",
			File:  coord,
			Old:   "\t\t\tcase <-timer.C:\n\t\t\t\treturn true\n",
			New:   "\t\t\tcase <-timer.C:\n\t\t\t\tc.commit(c.state.terminate(), event{})\n\t\t\t\treturn true\n",
			Tests: []mutate.Test{{Package: sessioncheck, Run: "TestTeardownAtEveryPoint|TestRecordedTraces"}},
		},
		{
			Name:  "session/trace-state-before-commit",
			Doc:   "a coordinator's event carries its variable as read before the step commits, not the state the step reached",
			File:  coord,
			Old:   "\ttr.mu.Lock()\n\tc.state = next\n\tc.pub.Store(int32(c.state.published()))\n\ttr.emitLocked(ev, map[string]any{c.name: int(c.spec())})\n",
			New:   "\ttr.mu.Lock()\n\ttr.emitLocked(ev, map[string]any{c.name: int(c.spec())})\n\tc.state = next\n\tc.pub.Store(int32(c.state.published()))\n",
			Tests: []mutate.Test{{Package: sessioncheck, Run: "TestRecordedTraces|TestLiveMonitor|TestTeardownAtEveryPoint"}},
		},
		{
			Name: "session/racy-finish",
			Doc:  "FinishResponse checks the id on M3's state read outside its goroutine, then finishes whatever response is active",
			File: sessionGo,
			Old:  "\t_, err := s.resp.call(respIn{op: opFinish, id: id})\n",
			New: "\tif s.resp.state.state == RespActive { // check, outside M3's goroutine ...\n" +
				"\t\tif s.resp.state.active != id {\n" +
				"\t\t\treturn fmt.Errorf(\"%w: %d\", ErrNoResponse, id)\n" +
				"\t\t}\n" +
				"\t\ttime.Sleep(time.Microsecond) // ... (widening the window) ...\n" +
				"\t\tid = s.resp.state.active     // ... then act on whatever is active now\n" +
				"\t}\n" +
				"\t_, err := s.resp.call(respIn{op: opFinish, id: id})\n",
			Tests: []mutate.Test{{Package: sessioncheck, Run: "TestFinishRacesStart"}},
		},
		{
			Name:  "session/audio-kept-after-cancel",
			Doc:   "a response ended early (canceled, preempted, barged in on, torn down) keeps its buffered audio readable: the client hears stale chunks",
			File:  respGo,
			Old:   "\t\tr.out.cut()\n",
			New:   "",
			Tests: []mutate.Test{{Package: sessionPkg, Run: "TestNoAudioAfterEnd|TestBargeIn"}},
		},
		{
			Name:  "session/no-barge-in",
			Doc:   "speech from the user while a response streams never interrupts it: the caller must cancel by hand",
			File:  sessionGo,
			Old:   "\tif err != nil || !ev.BargeIn {\n\t\treturn ev, err\n\t}\n",
			New:   "\tif true {\n\t\treturn ev, err\n\t}\n",
			Tests: []mutate.Test{{Package: sessionPkg, Run: "TestBargeIn"}, {Package: sessioncheck, Run: "TestModelBased|TestLinearizable"}},
		},
	}
}

// Classifiers recognise the detectors of tracecheck's own harnesses in a
// failing test: harness/pubcheck's durability oracle and crash campaigns
// (by their reports), then the library and trace-validation detectors
// (mutate.DefaultClassifiers), then, by the test's name, the fault
// injection tests — so that a fault-injection test whose failure is a
// divergence report counts as trace validation.
func Classifiers() []mutate.Classifier {
	out := []mutate.Classifier{
		{Kind: mutate.KindDurability, Line: regexp.MustCompile(`not durable: |was not durable before`)},
		{Kind: mutate.KindCrash, Test: regexp.MustCompile(`\.Test(CrashPoints|CrashRecovery|StartupRecovery)\b`), Line: regexp.MustCompile(`\.go:\d+: (crash( point)? \d+|.*recovery)`)},
		{Kind: mutate.KindCrash, Test: regexp.MustCompile(`\.Test(CrashPoints|CrashRecovery|StartupRecovery)\b`)},
	}
	out = append(out, mutate.DefaultClassifiers...)
	return append(out, mutate.Classifier{Kind: mutate.KindFaultInjection, Test: regexp.MustCompile(`\.Test(FaultInjection|TeardownAtEveryPoint)\b`)})
}
