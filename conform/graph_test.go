package conform

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/model/session"
)

func base() *Graph {
	return &Graph{Source: "A",
		States:   []model.Value{xState(0), xState(1), xState(2)},
		Init:     []int{0},
		Edges:    []Edge{{0, 1, "Inc"}, {1, 2, "Inc"}, {2, 2, "Stay"}},
		Stutters: []int{2},
	}
}

func TestCompare(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(g *Graph)
		check  func(d *Diff) bool
	}{
		{"identical", func(*Graph) {}, (*Diff).Empty},
		{"reordered", func(g *Graph) {
			g.States = []model.Value{xState(2), xState(0), xState(1)}
			g.Init = []int{1}
			g.Edges = []Edge{{0, 0, "Stay"}, {2, 0, "Inc"}, {1, 2, "Inc"}}
			g.Stutters = []int{0}
		}, (*Diff).Empty},
		{"extra state", func(g *Graph) { g.States = append(g.States, xState(3)) },
			func(d *Diff) bool { return slices.Equal(d.ExtraStates, []string{`/\ x = 3`}) }},
		{"missing edge", func(g *Graph) { g.Edges = g.Edges[:2] },
			func(d *Diff) bool {
				return slices.Equal(d.MissingEdges, []string{`(/\ x = 2)  --Stay-->  (/\ x = 2)`}) && len(d.ExtraEdges) == 0
			}},
		{"relabelled edge", func(g *Graph) { g.Edges[0].Action = "Step" },
			func(d *Diff) bool { return len(d.MissingEdges) == 1 && len(d.ExtraEdges) == 1 }},
		{"other initial state", func(g *Graph) { g.Init = []int{1} },
			func(d *Diff) bool { return len(d.MissingInit) == 1 && len(d.ExtraInit) == 1 }},
		{"stutter becomes edge", func(g *Graph) { g.Stutters = nil },
			func(d *Diff) bool { return slices.Equal(d.MissingStutters, []string{`/\ x = 2`}) }},
		{"duplicate state", func(g *Graph) { g.States = append(g.States, xState(1)) },
			func(d *Diff) bool { return len(d.Duplicates) == 1 }},
		{"dangling edge", func(g *Graph) { g.Edges = append(g.Edges, Edge{0, 9, "Jump"}) },
			func(d *Diff) bool { return len(d.Duplicates) == 1 }},
		{"renamed variable", func(g *Graph) {
			for i := range g.States {
				g.States[i] = model.Record(model.Field{Name: "y", Value: g.States[i].Fields()[0].Value})
			}
		}, func(d *Diff) bool { return len(d.Vars) == 2 && len(d.MissingStates) == 3 }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := base()
			got.Source = "B"
			tt.mutate(got)
			d := Compare(base(), got)
			if !tt.check(d) {
				t.Fatalf("unexpected diff:\n%s", d)
			}
			if d.Empty() != (d.String() == "") {
				t.Errorf("Empty %v but String %q", d.Empty(), d.String())
			}
			if !d.Empty() && !strings.Contains(d.String(), " only in ") && len(d.Duplicates) == 0 {
				t.Errorf("diff text names no side:\n%s", d)
			}
		})
	}
}

func TestFromModel(t *testing.T) {
	sp := session.Spec(session.Options{})
	res, err := model.Explore(context.Background(), sp, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := FromModel(sp, &res.Graph)
	if err != nil {
		t.Fatal(err)
	}
	states, edges := g.Counts()
	if states != res.States() || edges != res.Transitions() || len(g.Stutters) != len(res.Graph.Stutters) {
		t.Errorf("FromModel: %d states, %d edges; model %d, %d", states, edges, res.States(), res.Transitions())
	}
	init := `/\ compaction = 0 /\ conn = 0 /\ resp = 0 /\ vad = 0`
	if FormatState(g.States[g.Init[0]]) != init {
		t.Errorf("initial state %s", FormatState(g.States[g.Init[0]]))
	}
	if d := Compare(g, g); !d.Empty() {
		t.Errorf("a graph differs from itself:\n%s", d)
	}
	// A mutant of the Go spec must not compare equal to the spec.
	mut := session.Spec(session.Options{NoVadTeardown: true})
	mres, err := model.Explore(context.Background(), mut, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mg, err := FromModel(mut, &mres.Graph)
	if err != nil {
		t.Fatal(err)
	}
	if d := Compare(g, mg); d.Empty() || len(d.MissingStutters) == 0 {
		t.Errorf("NoVadTeardown mutant compares equal, or keeps the torn-down stutter:\n%s", d)
	}
}

func TestState(t *testing.T) {
	if _, err := State([]string{"a"}, nil); err == nil {
		t.Error("State with too few values: no error")
	}
	if _, err := State([]string{"a", "a"}, []model.Value{model.Int(1), model.Int(2)}); err == nil {
		t.Error("State with a repeated name: no error")
	}
}
