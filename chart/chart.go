// Package chart renders a spec's explored state graph for people and tools:
// a Mermaid stateDiagram-v2 (the form seed 000's chart takes), Graphviz DOT,
// or JSON with every state and labelled edge.
//
// Mermaid and DOT draw a projection of the graph: each state is drawn as
// its [Style.State] label, so states that a label does not tell apart (for
// Program, the two Failed states that differ only in verified) merge into
// one node, and each edge is drawn once with its [Style.Edge] label.
// Terminal self-loops (self-loops of states with no other way out, such as
// Program's Terminated) are hidden, as seed 000's chart hides them. JSON
// is the whole graph, unprojected.
package chart

import (
	"encoding/json"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/tracecheck/tracecheck/model"
)

// Style says how to label a spec's states and edges.
type Style[S comparable] struct {
	// State labels a state; nil labels it with the spec's variables.
	State func(S) string
	// Edge labels an action; nil labels it with the action's name.
	Edge func(action string) string
}

type projected struct {
	nodes []string // labels in discovery order
	init  []string
	edges []pedge
}

type pedge struct{ from, to, label string }

func project[S comparable](sp *model.Spec[S], g *model.Graph[S], st Style[S]) projected {
	label := st.State
	if label == nil {
		label = func(s S) string { return varsLabel(sp, s) }
	}
	edgeLabel := st.Edge
	if edgeLabel == nil {
		edgeLabel = func(a string) string { return a }
	}
	// A terminal self-loop: an edge From == To where From has no edge out.
	leaves := make([]bool, len(g.States))
	for i := range leaves {
		leaves[i] = true
	}
	for _, e := range g.Edges {
		if e.From != e.To {
			leaves[e.From] = false
		}
	}
	var p projected
	seen := map[string]bool{}
	addNode := func(l string) {
		if !seen[l] {
			seen[l] = true
			p.nodes = append(p.nodes, l)
		}
	}
	for _, id := range g.Init {
		l := label(g.States[id])
		addNode(l)
		p.init = append(p.init, l)
	}
	seenEdge := map[pedge]bool{}
	for _, e := range g.Edges {
		if e.From == e.To && leaves[e.From] {
			continue
		}
		pe := pedge{label(g.States[e.From]), label(g.States[e.To]), edgeLabel(e.Action)}
		addNode(pe.from)
		addNode(pe.to)
		if !seenEdge[pe] {
			seenEdge[pe] = true
			p.edges = append(p.edges, pe)
		}
	}
	for _, s := range g.States {
		addNode(label(s))
	}
	return p
}

func varsLabel[S comparable](sp *model.Spec[S], s S) string {
	vals := sp.Valuation(s)
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = sp.Vars[i] + "=" + v.String()
	}
	return strings.Join(parts, " ")
}

var ident = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// Mermaid writes the graph as a Mermaid stateDiagram-v2.
func Mermaid[S comparable](w io.Writer, sp *model.Spec[S], g *model.Graph[S], st Style[S]) error {
	p := project(sp, g, st)
	ids := map[string]string{}
	var b strings.Builder
	b.WriteString("stateDiagram-v2\n")
	for i, n := range p.nodes {
		if ident.MatchString(n) {
			ids[n] = n
			continue
		}
		ids[n] = "s" + strconv.Itoa(i)
		fmt.Fprintf(&b, "    %s : %s\n", ids[n], strings.ReplaceAll(n, ":", "#58;"))
	}
	for _, n := range p.init {
		fmt.Fprintf(&b, "    [*] --> %s\n", ids[n])
	}
	for _, e := range p.edges {
		fmt.Fprintf(&b, "    %s --> %s: %s\n", ids[e.from], ids[e.to], e.label)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// DOT writes the graph in Graphviz DOT.
func DOT[S comparable](w io.Writer, sp *model.Spec[S], g *model.Graph[S], st Style[S]) error {
	p := project(sp, g, st)
	var b strings.Builder
	fmt.Fprintf(&b, "digraph %s {\n    node [shape=box, style=rounded];\n    __init [shape=point];\n", strconv.Quote(sp.Name))
	for _, n := range p.nodes {
		fmt.Fprintf(&b, "    %s;\n", strconv.Quote(n))
	}
	for _, n := range p.init {
		fmt.Fprintf(&b, "    __init -> %s;\n", strconv.Quote(n))
	}
	for _, e := range p.edges {
		fmt.Fprintf(&b, "    %s -> %s [label=%s];\n", strconv.Quote(e.from), strconv.Quote(e.to), strconv.Quote(e.label))
	}
	b.WriteString("}\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// JSONGraph is the JSON form of a whole graph.
type JSONGraph struct {
	Spec     string              `json:"spec"`
	Vars     []string            `json:"vars"`
	States   []map[string]string `json:"states"` // variable -> value in TLA+ syntax; index = state ID
	Init     []int               `json:"init"`
	Edges    []JSONEdge          `json:"edges"`
	Stutters []int               `json:"stutters"` // states with declared terminal stuttering
}

// JSONEdge is one labelled transition.
type JSONEdge struct {
	From   int    `json:"from"`
	To     int    `json:"to"`
	Action string `json:"action"`
}

// JSON writes the whole, unprojected graph as indented JSON.
func JSON[S comparable](w io.Writer, sp *model.Spec[S], g *model.Graph[S]) error {
	out := JSONGraph{Spec: sp.Name, Vars: sp.Vars, Init: g.Init, Stutters: g.Stutters,
		States: make([]map[string]string, len(g.States)), Edges: make([]JSONEdge, len(g.Edges))}
	if out.Stutters == nil {
		out.Stutters = []int{}
	}
	for i, s := range g.States {
		m := map[string]string{}
		for j, v := range sp.Valuation(s) {
			m[sp.Vars[j]] = v.String()
		}
		out.States[i] = m
	}
	for i, e := range g.Edges {
		out.Edges[i] = JSONEdge{e.From, e.To, e.Action}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
