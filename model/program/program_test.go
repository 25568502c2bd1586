package program_test

import (
	"context"
	"fmt"
	"sort"
	"testing"

	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/model/program"
)

func TestExploreMatchesTLC(t *testing.T) {
	r, err := model.Explore(context.Background(), program.Spec(), model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r.States() != 9 || r.Transitions() != 15 {
		t.Fatalf("got %d states, %d transitions; TLC reports 9 and 15", r.States(), r.Transitions())
	}
	if !r.OK() {
		t.Fatalf("violations: %+v", r.Violations)
	}
	if r.Depth != 5 {
		t.Errorf("depth %d, want 5", r.Depth)
	}
	want := []string{"TypeOK", "PublishedOnlyVerified", "FailedNeverPublished", "PublicationIsTerminal", "Deadlock"}
	if fmt.Sprint(r.Checked) != fmt.Sprint(want) {
		t.Errorf("checked %v, want %v", r.Checked, want)
	}
}

// The chart's labelled transitions, by phase: seed 000, verbatim.
func TestChartEdges(t *testing.T) {
	r, err := model.Explore(context.Background(), program.Spec(), model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, e := range r.Graph.Edges {
		if e.Action == program.Terminated {
			if r.Graph.States[e.From] != r.Graph.States[e.To] || !r.Graph.States[e.From].Phase.Terminal() {
				t.Errorf("Terminated is not a terminal self-loop: %v", e)
			}
			continue
		}
		from, to := r.Graph.States[e.From].Phase, r.Graph.States[e.To].Phase
		got[from.String()+" --> "+to.String()+": "+program.Labels[e.Action]] = true
	}
	want := []string{
		"Ready --> Running: Execute Python",
		"Running --> Staging: Program succeeds",
		"Running --> Failed: Execution fails",
		"Running --> Interrupted: Interrupt",
		"Staging --> Verified: Reload and verify",
		"Staging --> Failed: Save or verification fails",
		"Staging --> Interrupted: Interrupt",
		"Verified --> Published: Atomic publication",
		"Verified --> Failed: Publication fails",
		"Verified --> Interrupted: Interrupt before publication",
	}
	var gotList []string
	for k := range got {
		gotList = append(gotList, k)
	}
	sort.Strings(gotList)
	sort.Strings(want)
	if fmt.Sprint(gotList) != fmt.Sprint(want) {
		t.Errorf("chart edges:\n got %q\nwant %q", gotList, want)
	}
}

// Each property must be able to fail: break the spec and watch it caught.
func TestPropertiesCanFail(t *testing.T) {
	cases := []struct {
		name   string
		action string
		next   func(program.State, func(program.State))
		guard  func(program.State) string
	}{
		{"PublishedOnlyVerified", program.AtomicPublication,
			func(s program.State, emit func(program.State)) {
				emit(program.State{Phase: program.Published, Published: true})
			},
			func(s program.State) string {
				if s.Phase == program.Staging {
					return ""
				}
				return "x"
			}},
		{"FailedNeverPublished", program.PublicationFails,
			func(s program.State, emit func(program.State)) {
				s.Phase, s.Published = program.Failed, true
				emit(s)
			}, nil},
		{"PublicationIsTerminal", program.Terminated,
			func(s program.State, emit func(program.State)) {
				if s.Phase == program.Published {
					s.Phase = program.Interrupted
				}
				emit(s)
			}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sp := program.Spec()
			a, err := sp.Action(c.action)
			if err != nil {
				t.Fatal(err)
			}
			a.Next = c.next
			if c.guard != nil {
				a.Guard = c.guard
			}
			r, err := model.Explore(context.Background(), sp, model.Options{})
			if err != nil {
				t.Fatal(err)
			}
			found := false
			for _, v := range r.Violations {
				if v.Name == c.name {
					found = true
					if last := v.Trace[len(v.Trace)-1]; last.Action != c.action {
						t.Errorf("trace ends with %s, want %s", last.Action, c.action)
					}
				}
			}
			if !found {
				t.Fatalf("%s not reported; violations %+v", c.name, r.Violations)
			}
		})
	}
}

func TestDeadlockWithoutTerminated(t *testing.T) {
	sp := program.Spec()
	sp.Actions = sp.Actions[:len(sp.Actions)-1] // drop Terminated
	r, err := model.Explore(context.Background(), sp, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Violations) != 1 || r.Violations[0].Kind != model.Deadlock {
		t.Fatalf("want one deadlock, got %+v", r.Violations)
	}
	// Shortest deadlock: Ready -> Running -> Failed or Interrupted.
	if n := len(r.Violations[0].Trace); n != 3 {
		t.Errorf("deadlock trace has %d states, want 3", n)
	}
}

// Each mutant breaks the property it names, with the shortest
// counterexample the explorer finds; the spec as written breaks nothing.
func TestMutants(t *testing.T) {
	for _, m := range append([]program.Mutant{program.Written}, program.Mutants...) {
		r, err := model.Explore(context.Background(), program.MutantSpec(m), model.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if m == program.Written {
			if !r.OK() {
				t.Fatalf("the spec as written: %+v", r.Violations)
			}
			continue
		}
		if r.OK() {
			t.Errorf("%s: no violation, want %s", m, m.Breaks())
			continue
		}
		if v := r.Violations[0]; v.Name != m.Breaks() {
			t.Errorf("%s: first violation %s %s, want %s", m, v.Kind, v.Name, m.Breaks())
		} else {
			var steps []string
			for _, st := range v.Trace {
				steps = append(steps, st.Action)
			}
			t.Logf("%s: %s violated after %v", m, v.Name, steps)
		}
	}
}
