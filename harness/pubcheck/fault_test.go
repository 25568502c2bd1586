package pubcheck_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/harness/pubcheck"
	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

// fakeRunner simulates the programs of the fault tests in Go.
func fakeRunner() pubcheck.FuncRunner {
	return pubcheck.FuncRunner{Programs: map[string]pubcheck.Program{
		"good": pubcheck.WriteCheckpoint(map[string]string{"model.bin": "weights", "sub/vocab.txt": "a b c"}, true),
		"fail": pubcheck.Exit(1),
		"hang": pubcheck.Hang(),
		"ok":   pubcheck.Exit(0),
	}}
}

func fakeCmd(name string) func(*testing.T) []string {
	return func(*testing.T) []string { return []string{"true", name} }
}

// faultCase is one injected fault: an interrupt at a boundary, or an
// operation of the filesystem that fails.
type faultCase struct {
	scenario
	rules func(pub string) []pubcheck.Rule
}

func TestFaultInjection(t *testing.T) {
	good := fakeCmd("good")
	var cases []faultCase
	// An interrupt before and after every step of a publishing run.
	interrupts := []struct {
		action string
		after  bool
		want   A
	}{
		{exec_, false, A{exec_, interrupt}},
		{exec_, true, A{exec_, interrupt}},
		{succeeds, false, A{exec_, interrupt}},
		{succeeds, true, A{exec_, succeeds, interrupt}},
		{verifies, false, A{exec_, succeeds, interrupt}},
		{verifies, true, A{exec_, succeeds, verifies, intBefore}},
		{publishes, false, A{exec_, succeeds, verifies, intBefore}},
		{publishes, true, A{exec_, succeeds, verifies, publishes}},
	}
	for _, in := range interrupts {
		when := "before"
		if in.after {
			when = "after"
		}
		outcome := checkpoint.PhaseInterrupted
		if in.want[len(in.want)-1] == publishes {
			outcome = checkpoint.PhasePublished
		}
		cases = append(cases, faultCase{scenario: scenario{name: "interrupt " + when + " " + in.action,
			command: good, hook: cancelAt(in.action, in.after), want: in.want, outcome: outcome}})
	}
	// Interrupts at the boundaries of the failure transitions change nothing.
	for _, in := range []struct {
		cmd    string
		action string
		want   A
	}{
		{"fail", execFails, A{exec_, execFails}},
		{"ok", execFails, A{exec_, execFails}}, // exit 0 without an evaluation
	} {
		for _, after := range []bool{false, true} {
			cases = append(cases, faultCase{scenario: scenario{name: "interrupt at " + in.action + " of " + in.cmd,
				command: fakeCmd(in.cmd), hook: cancelAt(in.action, after), want: in.want, outcome: checkpoint.PhaseFailed}})
		}
	}
	cases = append(cases, faultCase{scenario: scenario{name: "interrupt hanging program",
		command: fakeCmd("hang"), hook: cancelAt(exec_, true), want: A{exec_, interrupt}, outcome: checkpoint.PhaseInterrupted}})

	eio, enospc, erofs := syscall.EIO, syscall.ENOSPC, syscall.EROFS
	saveFail := A{exec_, succeeds, saveFails}
	fs := func(name string, want A, outcome checkpoint.Phase, err error, rules func(pub string) []pubcheck.Rule) faultCase {
		return faultCase{scenario: scenario{name: name, command: good, want: want, outcome: outcome, err: err}, rules: rules}
	}
	rule := func(op pubcheck.Op, path string, nth int, err error) func(string) []pubcheck.Rule {
		return func(string) []pubcheck.Rule { return []pubcheck.Rule{{Op: op, Path: path, Nth: nth, Err: err}} }
	}
	cases = append(cases,
		// Save: manifest, reads, fsyncs.
		fs("save: manifest create ENOSPC", saveFail, checkpoint.PhaseFailed, checkpoint.ErrSave, rule(pubcheck.OpCreate, checkpoint.ManifestName, 1, enospc)),
		fs("save: manifest write ENOSPC", saveFail, checkpoint.PhaseFailed, checkpoint.ErrSave, rule(pubcheck.OpWrite, checkpoint.ManifestName, 1, enospc)),
		fs("save: manifest write EROFS", saveFail, checkpoint.PhaseFailed, checkpoint.ErrSave, rule(pubcheck.OpWrite, checkpoint.ManifestName, 1, erofs)),
		fs("save: read while hashing EIO", saveFail, checkpoint.PhaseFailed, checkpoint.ErrSave, rule(pubcheck.OpRead, "model.bin", 1, eio)),
		fs("save: file fsync EIO", saveFail, checkpoint.PhaseFailed, checkpoint.ErrSave, rule(pubcheck.OpSync, "model.bin", 1, eio)),
		fs("save: manifest fsync EIO", saveFail, checkpoint.PhaseFailed, checkpoint.ErrSave, rule(pubcheck.OpSync, checkpoint.ManifestName, 1, eio)),
		fs("save: staging dir fsync EIO", saveFail, checkpoint.PhaseFailed, checkpoint.ErrSave, rule(pubcheck.OpSyncDir, "staging/", 1, eio)),
		fs("save: subdirectory fsync EIO", saveFail, checkpoint.PhaseFailed, checkpoint.ErrSave, rule(pubcheck.OpSyncDir, "/sub", 1, eio)),
		fs("save: readdir EIO", saveFail, checkpoint.PhaseFailed, checkpoint.ErrSave, rule(pubcheck.OpReadDir, "staging/", 2, eio)),
		// Verify: the reload.
		fs("verify: reopen EIO", saveFail, checkpoint.PhaseFailed, checkpoint.ErrVerification, rule(pubcheck.OpOpen, "model.bin", 3, eio)), // opens 1-2: staging's hash and fsync
		fs("verify: manifest reread EIO", saveFail, checkpoint.PhaseFailed, checkpoint.ErrVerification, rule(pubcheck.OpOpen, checkpoint.ManifestName, 1, eio)),
		// Publication.
		fs("publish: rename EROFS", A{exec_, succeeds, verifies, pubFails}, checkpoint.PhaseFailed, checkpoint.ErrPublication,
			func(pub string) []pubcheck.Rule {
				return []pubcheck.Rule{{Op: pubcheck.OpRenameNR, Path: filepath.Join(pub, "model"), Exact: true, Err: erofs}}
			}),
		fs("publish: rename EXDEV", A{exec_, succeeds, verifies, pubFails}, checkpoint.PhaseFailed, checkpoint.ErrPublication,
			func(pub string) []pubcheck.Rule {
				return []pubcheck.Rule{{Op: pubcheck.OpRenameNR, Path: filepath.Join(pub, "model"), Exact: true, Err: syscall.EXDEV}}
			}),
		fs("publish: parent fsync EIO after the rename stays published", A{exec_, succeeds, verifies, publishes}, checkpoint.PhasePublished, nil,
			func(pub string) []pubcheck.Rule {
				return []pubcheck.Rule{{Op: pubcheck.OpSyncDir, Path: pub, Exact: true, Err: eio}}
			}),
		// Cleanup after a failure.
		faultCase{scenario: scenario{name: "cleanup: staging removal fails", command: fakeCmd("fail"),
			want: A{exec_, execFails}, outcome: checkpoint.PhaseFailed, err: checkpoint.ErrProgramFailed},
			rules: rule(pubcheck.OpRemoveAll, "staging/", 1, eio)},
	)
	// Receipt writes and receipt fsyncs, at every receipt after Init.
	receipts := []struct {
		want    A
		outcome checkpoint.Phase
	}{
		{A{exec_, execFails}, checkpoint.PhaseFailed},
		{A{exec_, succeeds, saveFails}, checkpoint.PhaseFailed},
		{A{exec_, succeeds, verifies, pubFails}, checkpoint.PhaseFailed},
		{A{exec_, succeeds, verifies, publishes}, checkpoint.PhasePublished}, // never relabelled
	}
	for i, r := range receipts {
		for _, op := range []pubcheck.Op{pubcheck.OpWrite, pubcheck.OpSync} {
			nth := i + 3 // write 1 is the header, 2 the Init receipt
			fc := fs("receipt "+string(op)+" fails at "+r.want[i], r.want, r.outcome, nil,
				rule(op, "journal.ndjson", nth, enospc))
			if op == pubcheck.OpWrite {
				fc.verdict = check.Incomplete // the journal stops short, never lies
			}
			cases = append(cases, fc)
		}
	}

	for _, fc := range cases {
		t.Run(fc.name, func(t *testing.T) {
			t.Parallel()
			var ffs *pubcheck.FS
			res, _, pub := runScenario(t, fc.scenario, func(pub string) checkpoint.Config {
				cfg := checkpoint.Config{Runner: fakeRunner(), SkipRecovery: true}
				if fc.rules != nil {
					ffs = pubcheck.NewFS(fc.rules(pub)...)
					cfg.FS = ffs
				}
				return cfg
			})
			if ffs != nil && ffs.Fired() == 0 {
				t.Errorf("the fault never fired")
			}
			if res.JournalErr != nil && !errors.Is(res.JournalErr, checkpoint.ErrJournal) {
				t.Errorf("JournalErr %v does not match ErrJournal", res.JournalErr)
			}
			// Recovery afterwards reports the same outcome and leaves no staging.
			reps, err := checkpoint.Recover(context.Background(), checkpoint.RecoverOptions{PublishDir: pub})
			if err != nil {
				t.Fatal(err)
			}
			if len(reps) != 1 {
				t.Fatalf("recovery reports %d runs, want 1", len(reps))
			}
			wantRec := checkpoint.OutcomeNotPublished
			if res.Outcome == checkpoint.PhasePublished {
				wantRec = checkpoint.OutcomePublished
			}
			if reps[0].Outcome != wantRec {
				t.Errorf("recovery says %s, want %s: %+v", reps[0].Outcome, wantRec, reps[0])
			}
			if _, err := os.Lstat(res.Staging); err == nil {
				t.Errorf("staging %s left after recovery", res.Staging)
			}
		})
	}
}

// TestConcurrentPublishers: publishers racing for one name never publish
// twice; exactly one wins, the others fail (or are refused if the name was
// already taken when they started), every journal validates, and the
// winner's checkpoint verifies.
func TestConcurrentPublishers(t *testing.T) {
	pub := filepath.Join(t.TempDir(), "pub")
	const n = 6
	results := make([]*checkpoint.Result, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i], errs[i] = checkpoint.Publish(context.Background(), checkpoint.Config{
				PublishDir: pub, Name: "model", Command: []string{"true", "good"}, Runner: fakeRunner(), SkipRecovery: true})
		}()
	}
	close(start)
	wg.Wait()
	winners := 0
	for i := 0; i < n; i++ {
		if errs[i] != nil {
			if !errors.Is(errs[i], checkpoint.ErrAlreadyPublished) {
				t.Errorf("publisher %d refused: %v", i, errs[i])
			}
			continue
		}
		res := results[i]
		switch res.Outcome {
		case checkpoint.PhasePublished:
			winners++
		case checkpoint.PhaseFailed:
			if !errors.Is(res.Err, checkpoint.ErrAlreadyPublished) {
				t.Errorf("publisher %d failed: %v", i, res.Err)
			}
		default:
			t.Errorf("publisher %d: %s", i, res.Outcome)
		}
		if err := pubcheck.Agrees(context.Background(), res, pub, "model"); err != nil {
			t.Error(err)
		}
		rep, err := pubcheck.CheckJournal(context.Background(), res.Journal)
		if err != nil || rep.Verdict() != check.Valid {
			t.Errorf("publisher %d journal: %v %v", i, rep.Verdict(), err)
		}
	}
	if winners != 1 {
		t.Fatalf("%d publishers published, want exactly 1", winners)
	}
}
