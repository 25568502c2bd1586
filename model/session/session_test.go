package session_test

import (
	"context"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/model/session"
)

func TestExploreMatchesFizzBee(t *testing.T) {
	r, err := model.Explore(context.Background(), session.Spec(session.Options{}), model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.States() != 9 || r.Transitions() != 36 {
		t.Fatalf("got %d states, %d transitions; want 9 and 36", r.States(), r.Transitions())
	}
	if !r.OK() {
		t.Fatalf("violations: %+v", r.Violations)
	}
	selfLoops := 0
	for _, e := range r.Graph.Edges {
		if e.From == e.To {
			selfLoops++
			if e.Action != session.RespStart {
				t.Errorf("unexpected self-loop %v", e)
			}
		}
	}
	if selfLoops != 4 {
		t.Errorf("%d RespStart self-loops, want 4", selfLoops)
	}
	if len(r.Graph.Stutters) != 1 || r.Graph.States[r.Graph.Stutters[0]] != (session.State{Conn: 1, Vad: 2, Resp: 2, Compaction: 2}) {
		t.Errorf("declared stutters %v, want only the torn-down state", r.Graph.Stutters)
	}
}

func TestMutants(t *testing.T) {
	for _, c := range []struct {
		name string
		opt  session.Options
	}{
		{"compaction", session.Options{NoCompactionTeardown: true}},
		{"vad", session.Options{NoVadTeardown: true}},
		{"resp", session.Options{NoRespTeardown: true}},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := model.Explore(context.Background(), session.Spec(c.opt), model.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(r.Violations) != 1 || r.Violations[0].Name != "ChildrenDieWithParent" {
				t.Fatalf("violations %+v", r.Violations)
			}
			tr := r.Violations[0].Trace
			if len(tr) != 2 || tr[0].Action != "Init" || tr[1].Action != session.Teardown {
				t.Fatalf("counterexample %+v, want Init -> Teardown", tr)
			}
		})
	}
}

// A response that may start after teardown breaks ChildrenDieWithParent:
// Init, Teardown, RespStart.
func TestChildStartsAfterTeardown(t *testing.T) {
	r, err := model.Explore(context.Background(), session.Spec(session.Options{ChildStartsAfterTeardown: true}), model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.OK() || r.Violations[0].Name != "ChildrenDieWithParent" {
		t.Fatalf("violations %+v", r.Violations)
	}
	var steps []string
	for _, st := range r.Violations[0].Trace {
		steps = append(steps, st.Action)
	}
	if got := strings.Join(steps, " "); got != "Init Teardown RespStart" {
		t.Fatalf("counterexample %s, want Init Teardown RespStart", got)
	}
}
