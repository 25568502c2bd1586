package model_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/tracecheck/tracecheck/model"
)

// counter is a toy spec: x counts 0..n-1, may reset to 0, and must stay < limit.
func counter(n, limit int, stop bool) *model.Spec[int] {
	sp := &model.Spec[int]{
		Name:      "counter",
		Vars:      []string{"x"},
		Valuation: func(x int) []model.Value { return []model.Value{model.Int(int64(x))} },
		Init:      func() []int { return []int{0} },
		Actions: []model.Action[int]{
			{Name: "Inc", Guard: func(x int) string {
				if x+1 < n {
					return ""
				}
				return "x + 1 < n"
			}, Next: func(x int, emit func(int)) { emit(x + 1) }},
			{Name: "Reset", Guard: func(x int) string {
				if x > 0 && !stop {
					return ""
				}
				return "x > 0"
			}, Next: func(x int, emit func(int)) { emit(0); emit(0) }}, // a duplicate successor counts once
		},
		Invariants: []model.Invariant[int]{{Name: "Bounded", Holds: func(x int) bool { return x < limit }}},
		Properties: []model.Property[int]{{Name: "StepByOne", Holds: func(f int, a string, t int) bool {
			return a == "Reset" || t == f+1
		}}},
		CheckDeadlock: true,
	}
	return sp
}

func TestExploreCounts(t *testing.T) {
	cases := []struct {
		name              string
		n, limit          int
		stop              bool
		states, edges     int
		violations        []string
		shortestViolation int // states in the first violation's trace
	}{
		{"ok", 5, 10, false, 5, 8, nil, 0},
		{"invariant", 5, 3, false, 5, 8, []string{"Bounded"}, 4},
		{"deadlock", 3, 10, true, 3, 2, []string{"Deadlock"}, 3},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r, err := model.Explore(context.Background(), counter(c.n, c.limit, c.stop), model.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if r.States() != c.states || r.Transitions() != c.edges {
				t.Errorf("%d states %d transitions, want %d and %d", r.States(), r.Transitions(), c.states, c.edges)
			}
			var names []string
			for _, v := range r.Violations {
				names = append(names, v.Name)
			}
			if len(names) != len(c.violations) || (len(names) > 0 && names[0] != c.violations[0]) {
				t.Fatalf("violations %v, want %v", names, c.violations)
			}
			if len(names) > 0 && len(r.Violations[0].Trace) != c.shortestViolation {
				t.Errorf("counterexample has %d states, want %d", len(r.Violations[0].Trace), c.shortestViolation)
			}
		})
	}
}

func TestExplorePropertyViolation(t *testing.T) {
	sp := counter(4, 10, false)
	sp.Actions[0].Next = func(x int, emit func(int)) { emit(x + 1); emit(x + 2) } // Inc may skip
	r, err := model.Explore(context.Background(), sp, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Violations) != 1 || r.Violations[0].Kind != model.PropertyViolation {
		t.Fatalf("violations %+v", r.Violations)
	}
	tr := r.Violations[0].Trace
	if len(tr) != 2 || tr[0].State != 0 || tr[1].State != 2 || tr[1].Action != "Inc" {
		t.Errorf("counterexample %+v, want Init 0 -> Inc 2", tr)
	}
}

func TestExploreBoundAndCancel(t *testing.T) {
	if _, err := model.Explore(context.Background(), counter(100, 1000, false), model.Options{MaxStates: 10}); !errors.Is(err, model.ErrTooManyStates) {
		t.Errorf("MaxStates: err %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := model.Explore(ctx, counter(100, 1000, false), model.Options{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err %v", err)
	}
}

func TestSpecHelpers(t *testing.T) {
	sp := counter(3, 10, false)
	if got := sp.Enabled(2); len(got) != 1 || got[0] != "Reset" {
		t.Errorf("Enabled(2) = %v", got)
	}
	if _, err := sp.Action("Nope"); !errors.Is(err, model.ErrUnknownAction) {
		t.Errorf("unknown action err %v", err)
	}
	if g := sp.Actions[0].Guard(2); g != "x + 1 < n" {
		t.Errorf("guard text %q", g)
	}
	if got := sp.Format(2); got != "x = 2" {
		t.Errorf("Format = %q", got)
	}
	if sp.CheckStep(1, "Inc", 3) != "StepByOne" || sp.CheckStep(1, "Inc", 1) != "" {
		t.Error("CheckStep")
	}
}

// TestExploreInitDuplicates: Init may list a state more than once, adjacent
// or not; the graph lists each initial state once, in first-listed order.
func TestExploreInitDuplicates(t *testing.T) {
	tests := []struct {
		name  string
		init  []int
		want  []int // Graph.States[Graph.Init[i]]
		depth int
	}{
		{"none", []int{0, 1}, []int{0, 1}, 1},
		{"adjacent", []int{0, 0, 1}, []int{0, 1}, 1},
		{"non-adjacent", []int{0, 1, 0}, []int{0, 1}, 1},
		{"interleaved", []int{2, 1, 2, 1, 0, 2}, []int{2, 1, 0}, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sp := &model.Spec[int]{
				Name:      "inits",
				Vars:      []string{"x"},
				Valuation: func(x int) []model.Value { return []model.Value{model.Int(int64(x))} },
				Init:      func() []int { return tt.init },
				Terminal:  func(int) bool { return true },
			}
			r, err := model.Explore(context.Background(), sp, model.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var got []int
			for _, id := range r.Graph.Init {
				got = append(got, r.Graph.States[id])
			}
			if !slices.Equal(got, tt.want) || r.States() != len(tt.want) {
				t.Errorf("initial states %v (%d states), want %v", got, r.States(), tt.want)
			}
			if r.Depth != tt.depth {
				t.Errorf("depth %d, want %d", r.Depth, tt.depth)
			}
		})
	}
}
