package sessioncheck_test

import (
	"context"
	"testing"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/harness/sessioncheck"
	"github.com/tracecheck/tracecheck/impl/session"
)

// TestLiveMonitor plugs the checker in as the sessions' trace.Sink: the
// default workers of the demo, several sessions at once, checked as they
// run.
func TestLiveMonitor(t *testing.T) {
	var violations []check.InstanceResult
	mon, err := check.New(sessioncheck.Spec(false), check.Options{OnViolation: func(r check.InstanceResult) {
		violations = append(violations, r) // called under the checker's lock
	}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := session.RunDemo(context.Background(), session.DemoConfig{Sessions: 6, Turns: 2, Speed: 500, Sink: mon}); err != nil {
		t.Fatal(err)
	}
	rep := mon.Close()
	if len(rep.Instances) != 6 {
		t.Fatalf("%d instances", len(rep.Instances))
	}
	if rep.Verdict() != check.Valid || len(violations) > 0 {
		t.Fatalf("live monitor: %v, %d violations\n%s", rep.Verdict(), len(violations), firstBad(rep))
	}
}
