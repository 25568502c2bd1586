package model

import (
	"context"
	"errors"
	"fmt"
)

// Edge is one labelled transition of a [Graph]: From and To index States.
type Edge struct {
	From, To int
	Action   string
}

// Graph is the reachable state graph of a spec, as data.
type Graph[S comparable] struct {
	// States are the distinct reachable states in breadth-first discovery
	// order; a state's index is its ID.
	States []S
	// Level is each state's breadth-first depth (initial states are 0).
	Level []int
	// Init holds the IDs of the initial states.
	Init []int
	// Edges are the distinct (From, Action, To) transitions, in the order
	// found. Self-loops of explicit actions are edges; declared terminal
	// stuttering (Spec.Terminal) is not.
	Edges []Edge
	// Stutters holds the IDs of states with declared terminal stuttering.
	Stutters []int
}

// ViolationKind says what a [Violation] broke.
type ViolationKind uint8

// The kinds of violation Explore reports.
const (
	InvariantViolation ViolationKind = iota + 1
	PropertyViolation
	Deadlock
)

// String returns "invariant", "property" or "deadlock".
func (k ViolationKind) String() string {
	switch k {
	case InvariantViolation:
		return "invariant"
	case PropertyViolation:
		return "property"
	case Deadlock:
		return "deadlock"
	}
	return fmt.Sprintf("ViolationKind(%d)", k)
}

// Step is one step of a behaviour: the action taken and the state it
// reached. The first step of a behaviour has Action "Init".
type Step[S comparable] struct {
	Action string
	State  S
}

// Violation is a broken invariant, action property or deadlock, with the
// shortest behaviour that shows it.
type Violation[S comparable] struct {
	Kind ViolationKind
	// Name is the invariant's or property's name, or "Deadlock".
	Name string
	// Trace is a shortest behaviour from an initial state that ends in the
	// violating state (for a property: ends with the violating step).
	Trace []Step[S]
}

// Result is what [Explore] found.
type Result[S comparable] struct {
	Graph Graph[S]
	// Depth is the number of breadth-first levels, as TLC reports "the depth
	// of the complete state graph search".
	Depth int
	// Checked names what was checked: invariants, properties, and
	// "Deadlock" when the spec asks for it.
	Checked []string
	// Violations holds the first (shortest) violation of each broken
	// invariant or property, and of deadlock freedom.
	Violations []Violation[S]
}

// Transitions returns the number of distinct transitions (graph edges).
func (r *Result[S]) Transitions() int { return len(r.Graph.Edges) }

// States returns the number of distinct reachable states.
func (r *Result[S]) States() int { return len(r.Graph.States) }

// OK reports whether nothing was violated.
func (r *Result[S]) OK() bool { return len(r.Violations) == 0 }

// Options bound an exploration.
type Options struct {
	// MaxStates stops exploration with ErrTooManyStates once more states are
	// found. Zero means no bound.
	MaxStates int
}

// ErrTooManyStates is returned when exploration passes Options.MaxStates.
var ErrTooManyStates = errors.New("state bound exceeded")

// Explore computes the reachable state graph of sp breadth-first, counting
// distinct states and transitions exactly, and checks every invariant in
// every state, every property on every step, and (if sp.CheckDeadlock) that
// every state without successors is declared Terminal. It explores the whole
// graph even after a violation, and reports for each broken check the
// shortest counterexample. It returns an error only if ctx is cancelled or
// the state bound is passed.
func Explore[S comparable](ctx context.Context, sp *Spec[S], opt Options) (*Result[S], error) {
	r := &Result[S]{}
	g := &r.Graph
	ids := make(map[S]int)
	var parent []int       // BFS tree: the state each state was first reached from
	var parentAct []string // and the action that reached it
	broken := make(map[string]bool)

	for _, inv := range sp.Invariants {
		r.Checked = append(r.Checked, inv.Name)
	}
	for _, p := range sp.Properties {
		r.Checked = append(r.Checked, p.Name)
	}
	if sp.CheckDeadlock {
		r.Checked = append(r.Checked, "Deadlock")
	}

	trace := func(id int) []Step[S] {
		var rev []Step[S]
		for ; id >= 0; id = parent[id] {
			rev = append(rev, Step[S]{parentAct[id], g.States[id]})
		}
		for i, j := 0, len(rev)-1; i < j; i, j = i+1, j-1 {
			rev[i], rev[j] = rev[j], rev[i]
		}
		return rev
	}
	report := func(kind ViolationKind, name string, t []Step[S]) {
		if broken[name] {
			return
		}
		broken[name] = true
		r.Violations = append(r.Violations, Violation[S]{kind, name, t})
	}
	var boundErr error
	add := func(s S, from int, act string, level int) int {
		if id, ok := ids[s]; ok {
			return id
		}
		id := len(g.States)
		if opt.MaxStates > 0 && id >= opt.MaxStates {
			boundErr = fmt.Errorf("%s: %w (%d)", sp.Name, ErrTooManyStates, opt.MaxStates)
			return -1
		}
		ids[s] = id
		g.States = append(g.States, s)
		g.Level = append(g.Level, level)
		parent = append(parent, from)
		parentAct = append(parentAct, act)
		for _, inv := range sp.Invariants { // report every broken invariant, not just the first
			if !broken[inv.Name] && !inv.Holds(s) {
				report(InvariantViolation, inv.Name, trace(id))
			}
		}
		return id
	}

	for _, s := range sp.Init() {
		id := add(s, -1, "Init", 0)
		if id < 0 {
			return nil, boundErr
		}
		if len(g.Init) == 0 || g.Init[len(g.Init)-1] != id {
			g.Init = append(g.Init, id)
		}
	}
	// One emit function serves every expansion; it reads the state being
	// expanded and the action taken from these variables.
	var (
		cur, first, out int // first: this state's out-edges are g.Edges[first:]
		src             S
		act             string
	)
	emit := func(t S) {
		if boundErr != nil {
			return
		}
		to := add(t, cur, act, g.Level[cur]+1)
		if to < 0 {
			return
		}
		out++
		for _, d := range g.Edges[first:] { // duplicates can only come from this state
			if d.To == to && d.Action == act {
				return
			}
		}
		g.Edges = append(g.Edges, Edge{cur, to, act})
		if src == t {
			return // stuttering satisfies every property
		}
		for _, p := range sp.Properties {
			if !broken[p.Name] && !p.Holds(src, act, t) {
				report(PropertyViolation, p.Name, append(trace(cur), Step[S]{act, t}))
			}
		}
	}
	for cur = 0; cur < len(g.States); cur++ {
		if cur%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		src, out, first = g.States[cur], 0, len(g.Edges)
		for ai := range sp.Actions {
			a := &sp.Actions[ai]
			if a.Guard(src) != "" {
				continue
			}
			act = a.Name
			a.Next(src, emit)
			if boundErr != nil {
				return nil, boundErr
			}
		}
		if out == 0 {
			if sp.Terminal != nil && sp.Terminal(src) {
				g.Stutters = append(g.Stutters, cur)
			} else if sp.CheckDeadlock {
				report(Deadlock, "Deadlock", trace(cur))
			}
		}
		if l := g.Level[cur] + 1; l > r.Depth {
			r.Depth = l
		}
	}
	return r, nil
}
