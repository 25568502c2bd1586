package sessioncheck_test

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/harness/sessioncheck"
	"github.com/tracecheck/tracecheck/impl/session"
	"github.com/tracecheck/tracecheck/impl/session/sessiontest"
	"github.com/tracecheck/tracecheck/trace"
)

// TestM4Mutant runs the same scenario — a compaction in flight when the
// session is closed — with the M4 mutation switch off and on. Off: the
// trace validates and nothing leaks. On: validation reports the divergence
// at Teardown (and, against the mutant spec, ChildrenDieWithParent), and
// goleak reports the compaction that outlived its session.
func TestM4Mutant(t *testing.T) {
	for _, mutant := range []bool{false, true} {
		name := "switch-off"
		if mutant {
			name = "switch-on"
		}
		t.Run(name, func(t *testing.T) {
			gate := sessiontest.NewGate()
			defer gate.Release()
			rec := &trace.Recorder{}
			s, err := session.New(context.Background(), session.Config{
				Instance: "m4", Sink: rec, MutantFireAndForgetCompaction: mutant,
				Compactor: &sessiontest.Compactor{Gate: gate}, Detector: &sessiontest.Detector{},
				Generator: &sessiontest.Generator{}, Synthesizer: sessiontest.Synthesizer{},
			})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.StartResponse("p"); err != nil {
				t.Fatal(err)
			}
			job, err := s.TriggerCompaction()
			if err != nil {
				t.Fatal(err)
			}
			<-gate.Entered()
			if err := s.Close(); err != nil {
				t.Fatalf("Close = %v (the mutant does not know it leaks)", err)
			}
			leak := goleak.Find()
			real := validate(t, rec.NDJSON(), false)
			mut := validate(t, rec.NDJSON(), true)
			if !mutant {
				if leak != nil {
					t.Fatalf("goleak: %v", leak)
				}
				if real.Verdict() != check.Valid {
					t.Fatalf("trace: %v\n%s\n%s", real.Verdict(), firstBad(real), rec.NDJSON())
				}
				return
			}
			if leak == nil || !strings.Contains(leak.Error(), "compCoord") {
				t.Fatalf("goleak did not report the forgotten compaction: %v", leak)
			}
			t.Logf("goleak: %.300s...", leak)
			d := real.Instances[0].Divergence
			if real.Verdict() != check.Violation || d == nil || d.Action != session.ActTeardown {
				t.Fatalf("against the spec: %v %+v\n%s", real.Verdict(), d, rec.NDJSON())
			}
			t.Logf("against spec/session.fizz: %s at %s#%d: %s", d.Kind, d.Instance, d.Seq, d.Reason)
			dm := mut.Instances[0].Divergence
			if mut.Verdict() != check.Violation || dm == nil || dm.Action != session.ActTeardown || !strings.Contains(dm.Reason, "ChildrenDieWithParent") {
				t.Fatalf("against the mutant spec: %v %+v", mut.Verdict(), dm)
			}
			t.Logf("against the M4 mutant spec: %s: %s", dm.Kind, dm.Reason)
			gate.Release()
			<-job.Done()
			if err := goleak.Find(); err != nil {
				t.Fatalf("after the forgotten compaction ended: %v", err)
			}
		})
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
