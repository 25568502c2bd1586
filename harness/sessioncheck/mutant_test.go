package sessioncheck_test

import (
	"bytes"
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/harness/sessioncheck"
	"github.com/tracecheck/tracecheck/impl/session"
	"github.com/tracecheck/tracecheck/impl/session/sessiontest"
	"github.com/tracecheck/tracecheck/trace"
)

// TestCompactionDiesWithSession closes a session with a compaction in
// flight (its compactor held at a gate until canceled) and a response
// active: the trace validates against spec/session.fizz (ChildrenDieWithParent
// holds at Teardown), nothing of compaction follows Teardown, the job has
// ended when Close returns, and nothing leaks. This is the M4
// gap closed; the named mutant session/fire-and-forget-compaction
// (internal/mutants) reopens it, and this test kills it.
func TestCompactionDiesWithSession(t *testing.T) {
	gate, never := sessiontest.NewGate(), sessiontest.NewGate() // compaction, response: each held until canceled
	defer gate.Release()
	defer never.Release()
	rec := &trace.Recorder{}
	s, err := session.New(context.Background(), session.Config{
		Instance: "m4", Sink: rec,
		Compactor: &sessiontest.Compactor{Gate: gate}, Detector: &sessiontest.Detector{},
		Generator: &sessiontest.Generator{Gate: never}, Synthesizer: sessiontest.Synthesizer{},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.StartResponse("p"); err != nil {
		t.Fatal(err)
	}
	<-never.Entered()
	job, err := s.TriggerCompaction()
	if err != nil {
		t.Fatal(err)
	}
	<-gate.Entered()
	if err := s.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	// Close has returned: every event of the session has been emitted.
	if rep := validate(t, rec.NDJSON(), false); rep.Verdict() != check.Valid {
		t.Fatalf("against spec/session.fizz: %v\n%s\n%s", rep.Verdict(), firstBad(rep), rec.NDJSON())
	}
	evs := rec.Events()
	if last := evs[len(evs)-1]; last.Action != session.ActTeardown || last.State[session.VarCompaction] != int(session.CompTerminated) {
		t.Fatalf("last event %s %v, want Teardown with compaction terminated", last.Action, last.State)
	}
	select {
	case <-job.Done():
	default:
		t.Fatal("Close returned with the compaction still running")
	}
	if err := goleak.Find(); err != nil {
		t.Fatalf("goroutines outlived the session: %v", err)
	}
	// The mutant spec (the compaction teardown deleted) has no behaviour
	// that ends in this Teardown: the real code is not the M4 mutant.
	if rep := validate(t, rec.NDJSON(), true); rep.Verdict() != check.Violation {
		t.Fatalf("against the M4 mutant spec: %v, want a violation", rep.Verdict())
	}
}

func validate(t *testing.T, ndjson []byte, mutant bool) *check.Report {
	t.Helper()
	rep, err := sessioncheck.Check(context.Background(), bytes.NewReader(ndjson), "trace.ndjson", mutant)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}
