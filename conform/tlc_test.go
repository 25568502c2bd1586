package conform

import (
	"errors"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/model"
)

// tinyDot is TLC's `-dump dot,actionlabels` of a spec with x going 0, 1, 2
// and stuttering at 2 (TLC-NOTES.md), with a two-variable label spliced in.
const tinyDot = `strict digraph DiskGraph {
node [shape=box,style=rounded]
nodesep=0.35;
subgraph cluster_graph {
color="white";
-7685261171725000945 [label="x = 0",style = filled]
-7685261171725000945 -> -515189975988816849 [label="Inc",color="black",fontcolor="black"];
-515189975988816849 [label="x = 1",tooltip="x = 1"];
-515189975988816849 -> 5646319963321911631 [label="Inc",color="black",fontcolor="black"];
5646319963321911631 [label="x = 2",tooltip="x = 2"];
5646319963321911631 -> 5646319963321911631 [label="Stay",color="black",fontcolor="black"];
{rank = same; -7685261171725000945;}
{rank = same; -515189975988816849;}
{rank = same; 5646319963321911631;}
}
}`

const colorDot = `strict digraph DiskGraph {
node [shape=box,style=rounded]
edge [colorscheme="paired12"]
nodesep=0.35;
subgraph cluster_graph {
color="white";
1 [label="/\\ s = \"a\\\\\\\"b\"\n/\\ n = -1",style = filled]
1 -> 2 [label="Go",color="2",fontcolor="2"];
2 [label="/\\ s = \"\"\n/\\ n = 0",tooltip="/\\ s = \"\"\n/\\ n = 0"];
{rank = same; 1;}
}
subgraph cluster_legend {graph[style=bold];label = "Next State Actions" style="solid"
node [ labeljust="l",colorscheme="paired12",style=filled,shape=record ]
Go [label="Go",fillcolor=2]
}}`

func xState(i int64) model.Value { return model.Record(model.Field{Name: "x", Value: model.Int(i)}) }

func TestParseTLCDot(t *testing.T) {
	g, err := ParseTLCDot(strings.NewReader(tinyDot))
	if err != nil {
		t.Fatal(err)
	}
	want := &Graph{Source: "want",
		States: []model.Value{xState(2), xState(1), xState(0)},
		Init:   []int{2},
		Edges:  []Edge{{2, 1, "Inc"}, {1, 0, "Inc"}, {0, 0, "Stay"}},
	}
	if d := Compare(want, g); !d.Empty() {
		t.Errorf("tiny dot:\n%s", d)
	}

	g, err = ParseTLCDot(strings.NewReader(colorDot))
	if err != nil {
		t.Fatal(err)
	}
	s0 := model.Record(model.Field{Name: "s", Value: model.Str(`a\"b`)}, model.Field{Name: "n", Value: model.Int(-1)})
	if len(g.States) != 2 || !g.States[0].Equal(s0) || len(g.Init) != 1 || g.Init[0] != 0 ||
		len(g.Edges) != 1 || g.Edges[0] != (Edge{0, 1, "Go"}) {
		t.Errorf("colorized dot: states %v init %v edges %v", g.States, g.Init, g.Edges)
	}
}

func TestParseTLCDotMalformed(t *testing.T) {
	lines := strings.Split(tinyDot, "\n")
	replace := func(i int, s string) string {
		l := append([]string(nil), lines...)
		l[i] = s
		return strings.Join(l, "\n")
	}
	tests := []struct {
		name, in string
		want     error
	}{
		{"empty", "", ErrSyntax},
		{"garbage", "hello world", ErrSyntax},
		{"wrong header", strings.Replace(tinyDot, "DiskGraph", "G", 1), ErrSyntax},
		{"truncated", strings.Join(lines[:8], "\n"), ErrSyntax},
		{"truncated mid-label", tinyDot[:strings.Index(tinyDot, `"x = 1"`)+4], ErrSyntax},
		{"unbalanced braces", tinyDot + "\n}", ErrSyntax},
		{"text after graph", tinyDot + "\nx", ErrSyntax},
		{"bad DOT escape", replace(5, `-7685261171725000945 [label="x = \q",style = filled]`), ErrSyntax},
		{"label not a state", replace(5, `-7685261171725000945 [label="x = <<",style = filled]`), ErrSyntax},
		{"bad TLA+ escape", replace(5, `-7685261171725000945 [label="x = \"\\z\"",style = filled]`), ErrSyntax},
		{"node without label", replace(5, `-7685261171725000945 [style = filled]`), ErrSyntax},
		{"node twice", replace(7, `-7685261171725000945 [label="x = 1"]`), ErrSyntax},
		{"edge to nowhere", replace(6, `-7685261171725000945 -> 99 [label="Inc"];`), ErrSyntax},
		{"edge without action label", replace(6, `-7685261171725000945 -> -515189975988816849 [color="black"];`), ErrNoActionLabels},
		{"empty action label", replace(6, `-7685261171725000945 -> -515189975988816849 [label="",color="black",fontcolor="black"];`), ErrNoActionLabels},
		{"unterminated attributes", replace(6, `-7685261171725000945 -> -515189975988816849 [label="Inc"`), ErrSyntax},
		{"unterminated quote", replace(6, `-7685261171725000945 -> -515189975988816849 [label="Inc];`), ErrSyntax},
		{"bad node ID", replace(6, `abc -> -515189975988816849 [label="Inc"];`), ErrSyntax},
		{"no initial state", replace(5, `-7685261171725000945 [label="x = 0"]`), ErrSyntax},
		{"unterminated rank", replace(11, `{rank = same; -7685261171725000945;`), ErrSyntax},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			g, err := ParseTLCDot(strings.NewReader(tt.in))
			if !errors.Is(err, tt.want) {
				t.Fatalf("ParseTLCDot = %v, %v; want an error wrapping %v", g, err, tt.want)
			}
		})
	}
}

const tlcOK = `TLC2 Version 2026.11.29.154928 (rev: cc6b616)
Running breadth-first search Model-Checking with fp 0 and seed 1 with 1 worker on 2 cores.
Model checking completed. No error has been found.
  Estimates of the probability that TLC did not check all reachable states
  calculated (optimistic):  val = 3.4E-18
16 states generated, 9 distinct states found, 0 states left on queue.
The depth of the complete state graph search is 5.
Finished in 01s at (2026-11-29 15:53:33)
`

const tlcLasso = `TLC2 Version 2026.11.29.154928 (rev: cc6b616)
Error: Temporal property Reach3 was violated.

Error: The following behavior constitutes a counter-example:

State 1: <Initial predicate>
/\ x = 0
/\ y = <<"a",
     "b">>

State 2: <Next line 5, col 9 to line 5, col 34 of module Spec>
/\ x = 1
/\ y = <<>>

Back to state 1: <Next line 5, col 9 to line 5, col 34 of module Spec>

3 states generated, 3 distinct states found, 0 states left on queue.
The depth of the complete state graph search is 3.
`

func TestParseTLCOutput(t *testing.T) {
	r, err := ParseTLCOutput(strings.NewReader(tlcOK))
	if err != nil {
		t.Fatal(err)
	}
	if r.Version != "TLC2 Version 2026.11.29.154928 (rev: cc6b616)" || !r.NoError ||
		r.Generated != 16 || r.Distinct != 9 || r.Left != 0 || r.Depth != 5 || len(r.Errors) != 0 {
		t.Errorf("ok output: %+v", r)
	}
	r, err = ParseTLCOutput(strings.NewReader(tlcLasso))
	if err != nil {
		t.Fatal(err)
	}
	if r.NoError || len(r.Errors) != 2 || r.Errors[0] != "Temporal property Reach3 was violated." {
		t.Errorf("lasso errors: %q", r.Errors)
	}
	if len(r.Trace) != 3 || r.Trace[0].Action != "Init" || r.Trace[1].Action != "Next" || r.Trace[2].Action != "Back to state 1" {
		t.Fatalf("lasso trace: %+v", r.Trace)
	}
	y, _ := ParseTLAValue(`<<"a", "b">>`)
	if want := model.Record(model.Field{Name: "x", Value: model.Int(0)}, model.Field{Name: "y", Value: y}); !r.Trace[0].State.Equal(want) {
		t.Errorf("state 1 = %s", FormatState(r.Trace[0].State))
	}
}

func TestParseTLCOutputMalformed(t *testing.T) {
	tests := []struct{ name, in string }{
		{"empty", ""},
		{"garbage", "\x00\x01 nothing to see"},
		{"no version", strings.SplitN(tlcOK, "\n", 2)[1]},
		{"truncated before summary", tlcOK[:strings.Index(tlcOK, "16 states")]},
		{"bad trace state", strings.Replace(tlcLasso, `/\ x = 1`, `/\ x = <<1`, 1)},
		{"bad trace escape", strings.Replace(tlcLasso, `/\ x = 1`, `/\ x = "\k"`, 1)},
		{"unreadable step", strings.Replace(tlcLasso, "State 2: <Next line", "State 2: Next (line", 1)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if r, err := ParseTLCOutput(strings.NewReader(tt.in)); !errors.Is(err, ErrSyntax) {
				t.Fatalf("ParseTLCOutput = %+v, %v; want ErrSyntax", r, err)
			}
		})
	}
}

// FuzzParseTLCDot checks that ParseTLCDot never panics and that every
// error it returns wraps ErrSyntax; and that a graph it reads, labels with
// arguments included, makes a spec (Spec, ParseLabel) or an error that
// says why, without panicking.
func FuzzParseTLCDot(f *testing.F) {
	f.Add(tinyDot)
	f.Add(colorDot)
	f.Add(tinyDot[:200])
	f.Add(strings.NewReplacer(`label="Inc"`, `label="Inc(1, \"a\")"`, `label="Stay"`, `label="Stay(<<1, {2}>>)"`).Replace(tinyDot))
	f.Fuzz(func(t *testing.T, in string) {
		g, err := ParseTLCDot(strings.NewReader(in))
		if err != nil && !errors.Is(err, ErrSyntax) {
			t.Fatalf("error %v does not wrap ErrSyntax", err)
		}
		if err == nil {
			for _, e := range g.Edges {
				if e.From < 0 || e.From >= len(g.States) || e.To < 0 || e.To >= len(g.States) {
					t.Fatalf("edge %v outside %d states", e, len(g.States))
				}
				if a, args, err := ParseLabel(e.Action); err == nil {
					if b, again, err := ParseLabel(FormatLabel(a, args)); err != nil || b != a || len(again) != len(args) {
						t.Fatalf("label %q: FormatLabel %q reads back as %q, %v, %v", e.Action, FormatLabel(a, args), b, again, err)
					}
				}
			}
			if sp, err := Spec(g, "fuzz"); err == nil {
				for _, a := range sp.Actions {
					if a.Args != nil && len(g.States) > 0 {
						a.Args(0, 0)
					}
				}
			}
		}
	})
}
