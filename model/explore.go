package model

import (
	"context"
	"errors"
	"fmt"
	"slices"
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
// shortest counterexample. An initial state that Init lists more than once
// is one state, listed once in Graph.Init. It returns an error only if ctx
// is cancelled or the state bound is passed.
func Explore[S comparable](ctx context.Context, sp *Spec[S], opt Options) (*Result[S], error) {
	return newExplorer(sp, opt).run(ctx)
}

// explorer is one run of [Explore]: the graph being built, the index from
// state to ID, the breadth-first tree that counterexamples are read from,
// and the checks already broken.
type explorer[S comparable] struct {
	sp  *Spec[S]
	opt Options
	r   *Result[S]
	g   *Graph[S] // &r.Graph
	ids map[S]int // state -> its index in g.States
	// parent and parentAct are the breadth-first tree: the state each state
	// was first reached from (-1 for an initial state) and the action.
	parent    []int
	parentAct []string
	broken    map[string]bool // checks already reported

	// The expansion in progress, which emit reads: the state expanded, its
	// ID, the level of its successors, the action taken, where its
	// out-edges start in g.Edges, and how many successors it has had.
	src               S
	cur, level, first int
	act               string
	out               int
	emitFn            func(S) // e.emit, bound once for every expansion
	err               error   // the state bound, passed during an expansion
}

func newExplorer[S comparable](sp *Spec[S], opt Options) *explorer[S] {
	e := &explorer[S]{sp: sp, opt: opt, r: &Result[S]{}, ids: make(map[S]int), broken: make(map[string]bool)}
	e.g = &e.r.Graph
	e.emitFn = e.emit
	for _, inv := range sp.Invariants {
		e.r.Checked = append(e.r.Checked, inv.Name)
	}
	for _, p := range sp.Properties {
		e.r.Checked = append(e.r.Checked, p.Name)
	}
	if sp.CheckDeadlock {
		e.r.Checked = append(e.r.Checked, "Deadlock")
	}
	return e
}

// run explores breadth-first. The queue is the state list itself:
// g.States[cur:] are found and not yet expanded.
func (e *explorer[S]) run(ctx context.Context) (*Result[S], error) {
	if err := e.initial(); err != nil {
		return nil, err
	}
	for cur := 0; cur < len(e.g.States); cur++ {
		if cur%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		if err := e.expand(cur); err != nil {
			return nil, err
		}
	}
	return e.r, nil
}

// initial adds the initial states, each once however often Init lists it.
func (e *explorer[S]) initial() error {
	for _, s := range e.sp.Init() {
		id, isNew, err := e.add(s, -1, "Init", 0)
		if err != nil {
			return err
		}
		if isNew {
			e.g.Init = append(e.g.Init, id)
		}
	}
	return nil
}

// add returns the ID of s, first adding it (found from state from by act,
// at breadth-first level level) and checking the invariants in it if it is
// new. It returns an error wrapping ErrTooManyStates if s is new and the
// bound is reached.
func (e *explorer[S]) add(s S, from int, act string, level int) (id int, isNew bool, err error) {
	if id, ok := e.ids[s]; ok {
		return id, false, nil
	}
	id = len(e.g.States)
	if e.opt.MaxStates > 0 && id >= e.opt.MaxStates {
		return -1, false, fmt.Errorf("%s: %w (%d)", e.sp.Name, ErrTooManyStates, e.opt.MaxStates)
	}
	e.ids[s] = id
	e.g.States = append(e.g.States, s)
	e.g.Level = append(e.g.Level, level)
	e.parent = append(e.parent, from)
	e.parentAct = append(e.parentAct, act)
	e.checkInvariants(id, s)
	return id, true, nil
}

// expand adds the successors of state cur under every enabled action, the
// edges to them, and notes a state without successors as terminal
// stuttering or a deadlock.
func (e *explorer[S]) expand(cur int) error {
	src := e.g.States[cur]
	e.src, e.cur, e.level, e.out, e.first = src, cur, e.g.Level[cur]+1, 0, len(e.g.Edges)
	for ai := range e.sp.Actions {
		a := &e.sp.Actions[ai]
		if a.Guard(src) != "" {
			continue
		}
		e.act = a.Name
		a.Next(src, e.emitFn)
		if e.err != nil {
			return e.err
		}
	}
	if e.out == 0 {
		e.stuck(cur)
	}
	e.r.Depth = max(e.r.Depth, e.level)
	return nil
}

// emit takes one successor t of the expansion in progress: it adds t, the
// edge to it unless this state already has it, and checks the properties
// on the step.
func (e *explorer[S]) emit(t S) {
	if e.err != nil {
		return
	}
	cur, act := e.cur, e.act
	to, _, err := e.add(t, cur, act, e.level)
	if err != nil {
		e.err = err
		return
	}
	e.out++
	for _, d := range e.g.Edges[e.first:] { // duplicates can only come from this state
		if d.To == to && d.Action == act {
			return
		}
	}
	e.g.Edges = append(e.g.Edges, Edge{cur, to, act})
	e.checkStep(t)
}

// checkInvariants reports every invariant (not just the first) broken in
// s, the new state id.
func (e *explorer[S]) checkInvariants(id int, s S) {
	for _, inv := range e.sp.Invariants {
		if !e.broken[inv.Name] && !inv.Holds(s) {
			e.report(InvariantViolation, inv.Name, e.trace(id))
		}
	}
}

// checkStep reports the properties broken by the step from the state being
// expanded to t under the current action. Stuttering satisfies every
// property.
func (e *explorer[S]) checkStep(t S) {
	src, act := e.src, e.act
	if src == t {
		return
	}
	for _, p := range e.sp.Properties {
		if !e.broken[p.Name] && !p.Holds(src, act, t) {
			e.report(PropertyViolation, p.Name, append(e.trace(e.cur), Step[S]{act, t}))
		}
	}
}

// stuck handles state id, which has no successor: declared terminal
// stuttering, or else a deadlock if the spec checks for them.
func (e *explorer[S]) stuck(id int) {
	switch {
	case e.sp.Terminal != nil && e.sp.Terminal(e.g.States[id]):
		e.g.Stutters = append(e.g.Stutters, id)
	case e.sp.CheckDeadlock:
		e.report(Deadlock, "Deadlock", e.trace(id))
	}
}

// report records the first violation of the check name; later ones are
// no shorter, breadth-first, and are dropped.
func (e *explorer[S]) report(kind ViolationKind, name string, t []Step[S]) {
	if e.broken[name] {
		return
	}
	e.broken[name] = true
	e.r.Violations = append(e.r.Violations, Violation[S]{kind, name, t})
}

// trace returns the breadth-first path from an initial state to state id:
// a shortest behaviour reaching it.
func (e *explorer[S]) trace(id int) []Step[S] {
	var rev []Step[S]
	for ; id >= 0; id = e.parent[id] {
		rev = append(rev, Step[S]{e.parentAct[id], e.g.States[id]})
	}
	slices.Reverse(rev)
	return rev
}
