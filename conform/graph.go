package conform

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tracecheck/tracecheck/model"
)

// Edge is one labelled transition of a [Graph]; From and To index States.
type Edge struct {
	From, To int
	Action   string
}

// Graph is a labelled state graph in a spec's own vocabulary, whoever
// computed it: the Go model ([FromModel]), TLC ([ParseTLCDot]) or FizzBee
// ([ParseFizzGraph]). Each state is a record from variable name to value
// (see [State]); each edge carries the action's name as the spec spells it.
type Graph struct {
	// Source names who computed the graph, for diffs: "Go model", "TLC", ...
	Source string
	// States are the graph's states. A tool may (wrongly, for conformance)
	// list two nodes with the same variable assignment; Compare reports it.
	States []model.Value
	// Init holds the indices of the initial states.
	Init []int
	// Edges are the labelled transitions, self-loops of explicit actions
	// included.
	Edges []Edge
	// Stutters holds the indices of states where the spec stutters forever
	// without an action: the Go model's declared terminal stuttering
	// (model.Graph.Stutters), FizzBee's "end" link.
	Stutters []int
}

// State returns the variable assignment named by vars and vals as a record
// from variable name to value: the form every [Graph] state takes. It
// returns an error if the lengths differ or a name repeats.
func State(vars []string, vals []model.Value) (model.Value, error) {
	if len(vars) != len(vals) {
		return model.Value{}, fmt.Errorf("conform: %d variables but %d values", len(vars), len(vals))
	}
	fields := make([]model.Field, len(vars))
	for i, name := range vars {
		if slices.Contains(vars[:i], name) {
			return model.Value{}, fmt.Errorf("conform: variable %s named twice", name)
		}
		fields[i] = model.Field{Name: name, Value: vals[i]}
	}
	return model.Record(fields...), nil
}

// FromModel converts a graph explored by the Go engine (model.Explore's
// Result.Graph) into a [Graph], rendering each state with sp.Valuation
// under the names sp.Vars.
func FromModel[S comparable](sp *model.Spec[S], g *model.Graph[S]) (*Graph, error) {
	out := &Graph{
		Source:   "Go model",
		Init:     slices.Clone(g.Init),
		Stutters: slices.Clone(g.Stutters),
	}
	for _, s := range g.States {
		st, err := State(sp.Vars, sp.Valuation(s))
		if err != nil {
			return nil, fmt.Errorf("conform: spec %s: %w", sp.Name, err)
		}
		out.States = append(out.States, st)
	}
	for _, e := range g.Edges {
		out.Edges = append(out.Edges, Edge(e))
	}
	return out, nil
}

// Counts returns the number of distinct states (by variable assignment) and
// of distinct labelled edges.
func (g *Graph) Counts() (states, edges int) {
	s := make(map[string]bool)
	for _, st := range g.States {
		s[st.String()] = true
	}
	e := make(map[string]bool)
	for _, ed := range g.Edges {
		e[g.edgeKey(ed)] = true
	}
	return len(s), len(e)
}

func (g *Graph) key(i int) string {
	if i < 0 || i >= len(g.States) {
		return fmt.Sprintf("<no state %d>", i)
	}
	return FormatState(g.States[i])
}

func (g *Graph) edgeKey(e Edge) string {
	return "(" + g.key(e.From) + ")  --" + e.Action + "-->  (" + g.key(e.To) + ")"
}

// Diff is the difference between two graphs, want and got. Every list
// holds lines in TLA+ syntax, sorted.
type Diff struct {
	Want, Got string // the graphs' Sources
	// Vars notes variable names on one side only.
	Vars []string
	// MissingStates are in want but not got; ExtraStates in got only.
	MissingStates, ExtraStates []string
	// MissingInit and ExtraInit compare the initial states.
	MissingInit, ExtraInit []string
	// MissingEdges and ExtraEdges compare labelled transitions.
	MissingEdges, ExtraEdges []string
	// MissingStutters and ExtraStutters compare terminal stuttering.
	MissingStutters, ExtraStutters []string
	// Duplicates lists states that a graph holds more than once, and edges
	// that point outside its state list.
	Duplicates []string
}

// Empty reports whether the graphs are equal.
func (d *Diff) Empty() bool {
	return len(d.Vars)+len(d.MissingStates)+len(d.ExtraStates)+len(d.MissingInit)+len(d.ExtraInit)+
		len(d.MissingEdges)+len(d.ExtraEdges)+len(d.MissingStutters)+len(d.ExtraStutters)+len(d.Duplicates) == 0
}

// String renders the difference for a person: one section per kind of
// mismatch, one state or edge per line, in TLA+ syntax. It is "" when the
// graphs are equal.
func (d *Diff) String() string {
	if d.Empty() {
		return ""
	}
	var sb strings.Builder
	section := func(title string, lines []string) {
		if len(lines) == 0 {
			return
		}
		fmt.Fprintf(&sb, "%s (%d):\n", title, len(lines))
		for _, l := range lines {
			sb.WriteString("  " + l + "\n")
		}
	}
	in := func(who string) string { return " only in " + who }
	section("variables", d.Vars)
	section("states"+in(d.Want), d.MissingStates)
	section("states"+in(d.Got), d.ExtraStates)
	section("initial states"+in(d.Want), d.MissingInit)
	section("initial states"+in(d.Got), d.ExtraInit)
	section("edges"+in(d.Want), d.MissingEdges)
	section("edges"+in(d.Got), d.ExtraEdges)
	section("terminal stuttering"+in(d.Want), d.MissingStutters)
	section("terminal stuttering"+in(d.Got), d.ExtraStutters)
	section("malformed graph", d.Duplicates)
	return sb.String()
}

// Compare compares two graphs as sets: the same states (as variable
// assignments), the same initial states, the same labelled edges (from,
// action, to) and the same states with terminal stuttering. State indices
// and the order of states and edges do not matter. A graph that lists one
// assignment under two indices, or has an edge to a state it does not list,
// never compares equal.
func Compare(want, got *Graph) *Diff {
	d := &Diff{Want: want.Source, Got: got.Source}
	wv, gv := varNames(want), varNames(got)
	for _, v := range setMinus(wv, gv) {
		d.Vars = append(d.Vars, v+" only in "+want.Source)
	}
	for _, v := range setMinus(gv, wv) {
		d.Vars = append(d.Vars, v+" only in "+got.Source)
	}
	sets := func(g *Graph) (states, init, edges, stutters map[string]bool) {
		states, init, edges, stutters = map[string]bool{}, map[string]bool{}, map[string]bool{}, map[string]bool{}
		for i := range g.States {
			k := g.key(i)
			if states[k] {
				d.Duplicates = append(d.Duplicates, g.Source+" lists a state twice: "+k)
			}
			states[k] = true
		}
		ok := func(i int) bool { return i >= 0 && i < len(g.States) }
		for _, i := range g.Init {
			if !ok(i) {
				d.Duplicates = append(d.Duplicates, fmt.Sprintf("%s: initial state %d does not exist", g.Source, i))
			}
			init[g.key(i)] = true
		}
		for _, e := range g.Edges {
			if !ok(e.From) || !ok(e.To) {
				d.Duplicates = append(d.Duplicates, fmt.Sprintf("%s: edge %d -> %d does not connect listed states", g.Source, e.From, e.To))
			}
			edges[g.edgeKey(e)] = true
		}
		for _, i := range g.Stutters {
			if !ok(i) {
				d.Duplicates = append(d.Duplicates, fmt.Sprintf("%s: stuttering state %d does not exist", g.Source, i))
			}
			stutters[g.key(i)] = true
		}
		return
	}
	ws, wi, we, wst := sets(want)
	gs, gi, ge, gst := sets(got)
	d.MissingStates, d.ExtraStates = setMinus(ws, gs), setMinus(gs, ws)
	d.MissingInit, d.ExtraInit = setMinus(wi, gi), setMinus(gi, wi)
	d.MissingEdges, d.ExtraEdges = setMinus(we, ge), setMinus(ge, we)
	d.MissingStutters, d.ExtraStutters = setMinus(wst, gst), setMinus(gst, wst)
	slices.Sort(d.Duplicates)
	return d
}

func varNames(g *Graph) map[string]bool {
	out := make(map[string]bool)
	for _, s := range g.States {
		for _, f := range s.Fields() {
			out[f.Name] = true
		}
	}
	return out
}

// setMinus returns the sorted keys of a that are not in b.
func setMinus(a, b map[string]bool) []string {
	var out []string
	for k := range a {
		if !b[k] {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}
