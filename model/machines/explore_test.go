package machines_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/model/machines"
	"github.com/tracecheck/tracecheck/model/session"
)

func explore[S comparable](t *testing.T, sp *model.Spec[S]) *model.Result[S] {
	t.Helper()
	r, err := model.Explore(context.Background(), sp, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// holds checks that the spec as written breaks nothing and that every one
// of its actions takes some step.
func holds[S comparable](t *testing.T, sp *model.Spec[S]) *model.Result[S] {
	t.Helper()
	r := explore(t, sp)
	if !r.OK() {
		t.Fatalf("%s: violations %+v", sp.Name, r.Violations)
	}
	for _, a := range sp.Actions {
		if !slices.ContainsFunc(r.Graph.Edges, func(e model.Edge) bool { return e.Action == a.Name }) {
			t.Errorf("%s: action %s never steps", sp.Name, a.Name)
		}
	}
	// Done stutters, and only Done is enabled where it is: the machine's
	// work is over there.
	for _, e := range r.Graph.Edges {
		if from := r.Graph.States[e.From]; e.Action == machines.Done && (e.To != e.From || len(sp.Enabled(from)) != 1) {
			t.Errorf("%s: Done from %s: to %d, enabled %v", sp.Name, sp.Format(from), e.To, sp.Enabled(from))
		}
	}
	return r
}

// breaks checks that the mutant's transcription violates the mutant's
// invariant along the shortest behaviour Init -> trace.
func breaks[S comparable](t *testing.T, sp *model.Spec[S], m machines.Mutant, trace ...string) {
	t.Helper()
	r := explore(t, sp)
	i := slices.IndexFunc(r.Violations, func(v model.Violation[S]) bool { return v.Name == m.Breaks })
	if i < 0 {
		t.Fatalf("%s: %s holds (violations %+v)", sp.Name, m.Breaks, r.Violations)
	}
	var got []string
	for _, s := range r.Violations[i].Trace {
		got = append(got, s.Action)
	}
	if want := append([]string{"Init"}, trace...); !slices.Equal(got, want) {
		t.Errorf("%s: %s violated along %v, want %v", sp.Name, m.Breaks, got, want)
	}
}

// refines checks that the spec refines session.fizz under proj, both by
// states alone and with the action map, and that its projected steps take
// exactly the session actions covered.
func refines[S comparable](t *testing.T, sp *model.Spec[S], proj func(S) session.State, actions map[string][]string,
	covered ...string) *machines.Refinement {
	t.Helper()
	var r *machines.Refinement
	for _, acts := range []map[string][]string{nil, actions} {
		var err error
		r, err = machines.RefinesSession(context.Background(), sp, proj, acts)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(r.Covered, covered) {
			t.Errorf("%s: projected steps take %v, want %v", sp.Name, r.Covered, covered)
		}
	}
	t.Log(r)
	return r
}

// refuted checks that the spec does not refine session.fizz under proj
// and actions (nil: by states alone), the first offending step being a
// step of action.
func refuted[S comparable](t *testing.T, sp *model.Spec[S], proj func(S) session.State, actions map[string][]string, action string) {
	t.Helper()
	_, err := machines.RefinesSession(context.Background(), sp, proj, actions)
	if !errors.Is(err, machines.ErrNotRefinement) {
		t.Fatalf("%s: refinement error %v, want ErrNotRefinement", sp.Name, err)
	}
	if !strings.Contains(err.Error(), "step "+action+" projects") {
		t.Errorf("%s: %v; want the offending step to be %s", sp.Name, err, action)
	}
	t.Log(err)
}

// withGuard returns sp with the guard of its action name replaced by g.
func withGuard[S comparable](sp *model.Spec[S], name string, g func(S) string) *model.Spec[S] {
	for i := range sp.Actions {
		if sp.Actions[i].Name == name {
			sp.Actions[i].Guard = g
		}
	}
	return sp
}
