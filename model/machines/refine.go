package machines

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/model/session"
)

// ErrNotRefinement reports a machine step whose projection is neither a
// stutter nor a step of the abstract spec, or an initial state whose
// projection the abstract spec cannot reach.
var ErrNotRefinement = errors.New("the projected behaviour is not allowed by the abstract spec")

// Refinement is what [Refines] found: how every reachable step of the
// machine maps onto the abstract spec.
type Refinement struct {
	// Machine and Abstract name the two specs.
	Machine, Abstract string
	// States and Steps count the machine's reachable states and steps
	// (graph edges); every step was checked.
	States, Steps int
	// Stutters counts the steps whose projection changes nothing.
	Stutters int
	// Mapped counts, for each machine action, the abstract actions its
	// steps project onto ("" for a stutter).
	Mapped map[string]map[string]int
	// Covered lists the abstract actions that some projected step takes,
	// sorted.
	Covered []string
}

// String summarises the refinement in one line per machine action.
func (r *Refinement) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s refines %s: %d states, %d steps (%d stutters)", r.Machine, r.Abstract, r.States, r.Steps, r.Stutters)
	actions := make([]string, 0, len(r.Mapped))
	for a := range r.Mapped {
		actions = append(actions, a)
	}
	slices.Sort(actions)
	for _, a := range actions {
		var parts []string
		targets := make([]string, 0, len(r.Mapped[a]))
		for t := range r.Mapped[a] {
			targets = append(targets, t)
		}
		slices.Sort(targets)
		for _, t := range targets {
			name := t
			if name == "" {
				name = "stutter"
			}
			parts = append(parts, fmt.Sprintf("%s×%d", name, r.Mapped[a][t]))
		}
		fmt.Fprintf(&b, "\n  %s -> %s", a, strings.Join(parts, ", "))
	}
	return b.String()
}

// Refines checks that machine refines abstract under the projection proj:
// every initial state of machine projects onto a reachable state of
// abstract (a machine may start in the middle of a session, as a response's
// TTS pipeline does), and every reachable step of machine projects onto a
// stutter (the projected state is unchanged) or onto a step of one of
// abstract's actions. If actions is not nil, it also says, for each of
// machine's actions, which of abstract's actions its steps may project
// onto ("" for a stutter), and each step must be one of those: a step
// whose projection is a stutter is then refused when its action should
// have been an abstract step (a second teardown, say, which changes no
// projected variable but which session.fizz does not allow). Both specs
// are explored whole. The error wraps ErrNotRefinement and names the first
// offending step (in breadth-first order) with a shortest machine
// behaviour reaching it.
func Refines[S, T comparable](ctx context.Context, machine *model.Spec[S], abstract *model.Spec[T], proj func(S) T,
	actions map[string][]string) (*Refinement, error) {
	mres, err := model.Explore(ctx, machine, model.Options{})
	if err != nil {
		return nil, fmt.Errorf("refinement: exploring %s: %w", machine.Name, err)
	}
	ares, err := model.Explore(ctx, abstract, model.Options{})
	if err != nil {
		return nil, fmt.Errorf("refinement: exploring %s: %w", abstract.Name, err)
	}
	reach := make(map[T]bool, len(ares.Graph.States))
	for _, s := range ares.Graph.States {
		reach[s] = true
	}
	g := &mres.Graph
	r := &Refinement{Machine: machine.Name, Abstract: abstract.Name, States: len(g.States), Steps: len(g.Edges),
		Mapped: map[string]map[string]int{}}
	for _, id := range g.Init {
		if p := proj(g.States[id]); !reach[p] {
			return r, fmt.Errorf("%s: initial state %s projects onto %s, which %s cannot reach: %w",
				machine.Name, machine.Format(g.States[id]), abstract.Format(p), abstract.Name, ErrNotRefinement)
		}
	}
	parent := bfsParents(g)
	covered := map[string]bool{}
	for _, e := range g.Edges {
		from, to := proj(g.States[e.From]), proj(g.States[e.To])
		target := ""
		if actions != nil {
			allowed, ok := actions[e.Action]
			if !ok {
				return r, fmt.Errorf("%s: action %s has no projection onto %s: %w", machine.Name, e.Action, abstract.Name, ErrNotRefinement)
			}
			target = "-"
			for _, a := range allowed {
				if (a == "" && from == to) || (a != "" && abstractStepBy(abstract, a, from, to)) {
					target = a
					break
				}
			}
			if target == "-" {
				return r, fmt.Errorf("%s: step %s projects onto %s -> %s, which is not %s (behaviour: %s): %w",
					machine.Name, e.Action, abstract.Format(from), abstract.Format(to),
					strings.Join(names(abstract.Name, allowed), " nor "), behaviour(g, parent, e), ErrNotRefinement)
			}
		} else if from != to {
			target = abstractStep(abstract, from, to)
			if target == "" {
				return r, fmt.Errorf("%s: step %s projects onto %s -> %s, which is no step of %s (behaviour: %s): %w",
					machine.Name, e.Action, abstract.Format(from), abstract.Format(to), abstract.Name,
					behaviour(g, parent, e), ErrNotRefinement)
			}
		}
		if target == "" {
			r.Stutters++
		} else {
			covered[target] = true
		}
		if r.Mapped[e.Action] == nil {
			r.Mapped[e.Action] = map[string]int{}
		}
		r.Mapped[e.Action][target]++
	}
	for a := range covered {
		r.Covered = append(r.Covered, a)
	}
	slices.Sort(r.Covered)
	return r, nil
}

// abstractStep returns the first action of sp that steps from s to t, or "".
func abstractStep[T comparable](sp *model.Spec[T], s, t T) string {
	for i := range sp.Actions {
		if abstractStepBy(sp, sp.Actions[i].Name, s, t) {
			return sp.Actions[i].Name
		}
	}
	return ""
}

// abstractStepBy reports whether sp's action name steps from s to t.
func abstractStepBy[T comparable](sp *model.Spec[T], name string, s, t T) bool {
	a, err := sp.Action(name)
	if err != nil {
		return false
	}
	found := false
	a.Successors(s, func(u T) { found = found || u == t })
	return found
}

// names words the abstract actions: "a step of session's Teardown", ""
// as "a stutter".
func names(abstract string, actions []string) []string {
	out := make([]string, len(actions))
	for i, a := range actions {
		out[i] = "a step of " + abstract + "'s " + a
		if a == "" {
			out[i] = "a stutter"
		}
	}
	return out
}

// bfsParents returns, for each state of g, the edge that first reaches it
// breadth-first (-1 for initial states).
func bfsParents[S comparable](g *model.Graph[S]) []int {
	parent := make([]int, len(g.States))
	for i := range parent {
		parent[i] = -2
	}
	queue := slices.Clone(g.Init)
	for _, id := range g.Init {
		parent[id] = -1
	}
	out := make([][]int, len(g.States))
	for i, e := range g.Edges {
		out[e.From] = append(out[e.From], i)
	}
	for len(queue) > 0 {
		s := queue[0]
		queue = queue[1:]
		for _, i := range out[s] {
			if t := g.Edges[i].To; parent[t] == -2 {
				parent[t] = i
				queue = append(queue, t)
			}
		}
	}
	return parent
}

// behaviour formats a shortest behaviour of g that ends with edge e.
func behaviour[S comparable](g *model.Graph[S], parent []int, e model.Edge) string {
	steps := []string{e.Action}
	for s := e.From; parent[s] >= 0; s = g.Edges[parent[s]].From {
		steps = append(steps, g.Edges[parent[s]].Action)
	}
	steps = append(steps, "Init")
	slices.Reverse(steps)
	return strings.Join(steps, " -> ")
}

// RefinesSession checks machine against spec/session.fizz as written,
// projecting states with proj (the Session method of the machine's state
// type) and, if actions is not nil, actions with actions (the machine's
// ...SessionActions map).
func RefinesSession[S comparable](ctx context.Context, machine *model.Spec[S], proj func(S) session.State,
	actions map[string][]string) (*Refinement, error) {
	return Refines(ctx, machine, session.Spec(session.Options{}), proj, actions)
}

// SessionRefinements checks each machine spec as written, M1 to M5,
// against spec/session.fizz with its projection of states (the Session
// methods) and of actions (the ...SessionActions maps), and returns what
// each check found; the error is the first machine's that fails.
func SessionRefinements(ctx context.Context) ([]*Refinement, error) {
	checks := []func() (*Refinement, error){
		func() (*Refinement, error) {
			return RefinesSession(ctx, Connection(Written), ConnectionState.Session, ConnectionSessionActions)
		},
		func() (*Refinement, error) {
			return RefinesSession(ctx, Turn(Written), TurnState.Session, TurnSessionActions)
		},
		func() (*Refinement, error) {
			return RefinesSession(ctx, Response(Written), ResponseState.Session, ResponseSessionActions)
		},
		func() (*Refinement, error) {
			return RefinesSession(ctx, Compaction(Written), CompactionState.Session, CompactionSessionActions)
		},
		func() (*Refinement, error) {
			return RefinesSession(ctx, TTS(Written), TTSState.Session, TTSSessionActions)
		},
	}
	var out []*Refinement
	for _, c := range checks {
		r, err := c()
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}
