package pubcheck_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"pgregory.net/rapid"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/harness/pubcheck"
	"github.com/tracecheck/tracecheck/impl/checkpoint"
	"github.com/tracecheck/tracecheck/model/program"
)

// TestModelBased drives the publisher with random programs and random
// fault schedules (an interrupt at any boundary, any filesystem operation
// failing with any of EIO/ENOSPC/EROFS at its Nth call, receipt failures)
// and compares it with model/program: every step the run took is a step of
// the model from its initial state, the run ends in the model state its
// outcome names, the journal validates (incomplete only after a receipt
// failure), the publish directory agrees, and a run without faults
// publishes.
func TestModelBased(t *testing.T) {
	ops := []pubcheck.Op{pubcheck.OpCreate, pubcheck.OpWrite, pubcheck.OpRead, pubcheck.OpSync, pubcheck.OpSyncDir,
		pubcheck.OpOpen, pubcheck.OpReadDir, pubcheck.OpLstat, pubcheck.OpRenameNR, pubcheck.OpRemoveAll}
	paths := []string{"journal.ndjson", checkpoint.ManifestName, "model.bin", "staging/", "/pub/model", "eval.json", ""}
	errs := []error{syscall.EIO, syscall.ENOSPC, syscall.EROFS}
	boundaries := []string{exec_, succeeds, verifies, publishes, execFails, saveFails, pubFails}
	sp := program.Spec()
	rapid.Check(t, func(rt *rapid.T) {
		prog := rapid.SampledFrom([]string{"good", "good", "good", "fail", "ok", "hang"}).Draw(rt, "program")
		var rules []pubcheck.Rule
		nFaults := rapid.IntRange(0, 2).Draw(rt, "faults")
		for i := 0; i < nFaults; i++ {
			rules = append(rules, pubcheck.Rule{
				Op:   rapid.SampledFrom(ops).Draw(rt, "op"),
				Path: rapid.SampledFrom(paths).Draw(rt, "path"),
				Nth:  rapid.IntRange(1, 4).Draw(rt, "nth"),
				Err:  rapid.SampledFrom(errs).Draw(rt, "err"),
			})
		}
		interruptAt := ""
		interruptAfter := false
		if prog == "hang" || rapid.Bool().Draw(rt, "interrupt") {
			interruptAt = rapid.SampledFrom(boundaries).Draw(rt, "interrupt at")
			interruptAfter = rapid.Bool().Draw(rt, "after")
			if prog == "hang" {
				interruptAt, interruptAfter = exec_, true
			}
		}

		dir, err := os.MkdirTemp("", "pubcheck-rapid-")
		if err != nil {
			rt.Fatal(err)
		}
		defer os.RemoveAll(dir)
		pub := filepath.Join(dir, "pub")
		for i := range rules {
			if rules[i].Path == "/pub/model" {
				rules[i].Path = filepath.Join(pub, "model")
			}
		}
		ffs := pubcheck.NewFS(rules...)
		ctx, cancel := context.WithCancel(context.Background())
		defer cancel()
		res, err := checkpoint.Publish(ctx, checkpoint.Config{
			PublishDir: pub, Name: "model", Command: []string{"true", prog}, Runner: fakeRunner(), FS: ffs,
			SkipRecovery: true,
			Boundary: func(a string, after bool) {
				if a == interruptAt && after == interruptAfter {
					cancel()
				}
			},
		})
		if err != nil {
			// Refused before the run: only a fault can do that, and then
			// nothing is published.
			if ffs.Fired() == 0 {
				rt.Fatalf("refused without a fault: %v", err)
			}
			if _, serr := os.Lstat(filepath.Join(pub, "model")); serr == nil {
				rt.Fatalf("refused run left a checkpoint")
			}
			return
		}

		// The run's steps are a behaviour of the model.
		s := sp.Init()[0]
		for _, a := range res.Actions {
			act, err := sp.Action(a)
			if err != nil {
				rt.Fatalf("action %q: %v", a, err)
			}
			if g := act.Guard(s); g != "" {
				rt.Fatalf("%s not enabled in %s: %s (actions %v)", a, sp.Format(s), g, res.Actions)
			}
			var next []program.State
			act.Successors(s, func(n program.State) { next = append(next, n) })
			if len(next) != 1 {
				rt.Fatalf("%s from %s: %d successors", a, sp.Format(s), len(next))
			}
			if inv := sp.Check(next[0]); inv != "" {
				rt.Fatalf("%s breaks %s", a, inv)
			}
			s = next[0]
		}
		if s.Phase.String() != res.Outcome.String() || !s.Phase.Terminal() {
			rt.Fatalf("the model ends in %s, the run in %s (actions %v)", sp.Format(s), res.Outcome, res.Actions)
		}
		if err := pubcheck.Agrees(context.Background(), res, pub, "model"); err != nil {
			rt.Fatal(err)
		}
		if s.Published != (res.Outcome == checkpoint.PhasePublished) {
			rt.Fatalf("model published=%v, outcome %s", s.Published, res.Outcome)
		}
		rep, err := pubcheck.CheckJournal(context.Background(), res.Journal)
		if err != nil {
			rt.Fatal(err)
		}
		switch v := rep.Verdict(); {
		case v == check.Violation:
			rt.Fatalf("journal violates the model: %+v", rep.Instances)
		case v == check.Incomplete && res.JournalErr == nil:
			rt.Fatalf("journal incomplete without a receipt failure")
		}
		if res.JournalErr != nil && !errors.Is(res.JournalErr, checkpoint.ErrJournal) {
			rt.Fatalf("JournalErr %v", res.JournalErr)
		}
		if ffs.Fired() == 0 && interruptAt == "" && prog == "good" && res.Outcome != checkpoint.PhasePublished {
			rt.Fatalf("no fault, no interrupt, a good program: outcome %s (%v)", res.Outcome, res.Err)
		}
	})
}
