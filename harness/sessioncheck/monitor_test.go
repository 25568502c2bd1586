package sessioncheck_test

import (
	"context"
	"testing"

	"go.uber.org/goleak"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/harness/sessioncheck"
	"github.com/tracecheck/tracecheck/impl/session"
)

// TestLiveMonitor plugs the checker in as the sessions' trace.Sink: the
// default workers of the demo, several sessions at once, checked as they
// run, with and without the M4 switch.
func TestLiveMonitor(t *testing.T) {
	for _, mutant := range []bool{false, true} {
		var violations []check.InstanceResult
		mon, err := check.New(sessioncheck.Spec(false), check.Options{OnViolation: func(r check.InstanceResult) {
			violations = append(violations, r) // called under the checker's lock
		}})
		if err != nil {
			t.Fatal(err)
		}
		_, err = session.RunDemo(context.Background(), session.DemoConfig{Sessions: 6, Turns: 2, Speed: 500, Sink: mon,
			MutantFireAndForgetCompaction: mutant})
		if err != nil {
			t.Fatal(err)
		}
		if mutant {
			// The forgotten compactions run on after RunDemo and still emit;
			// wait for them to end before closing the monitor.
			err := goleak.Find()
			for try := 0; err != nil && try < 10; try++ { // a loaded machine may need longer
				err = goleak.Find()
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		rep := mon.Close()
		if len(rep.Instances) != 6 {
			t.Fatalf("mutant %v: %d instances", mutant, len(rep.Instances))
		}
		switch {
		case !mutant && (rep.Verdict() != check.Valid || len(violations) > 0):
			t.Fatalf("live monitor: %v, %d violations\n%s", rep.Verdict(), len(violations), firstBad(rep))
		case mutant && rep.Count(check.Violation) != 6:
			t.Fatalf("live monitor on the M4 mutant: %d of 6 sessions flagged", rep.Count(check.Violation))
		case mutant && len(violations) != 6:
			t.Fatalf("OnViolation called %d times, want 6", len(violations))
		}
	}
}
