package model

import (
	"errors"
	"fmt"
)

// Spec is a state machine transcribed from a formal specification. S is the
// state: a comparable Go value, so that states can be hashed and compared.
// Every function in a Spec must be pure and deterministic: no I/O, no clock,
// no randomness, and no mutation of its arguments.
type Spec[S comparable] struct {
	// Name names the spec, e.g. "program".
	Name string
	// Vars names the spec's variables in declaration order, exactly as the
	// spec spells them.
	Vars []string
	// Valuation returns the values of s's variables, in the order of Vars.
	Valuation func(s S) []Value
	// Init returns the initial states.
	Init func() []S
	// Actions are the spec's actions, named as the spec names them.
	Actions []Action[S]
	// Invariants must hold in every reachable state.
	Invariants []Invariant[S]
	// Properties must hold on every non-stuttering step, as [][P]_vars does.
	Properties []Property[S]
	// Terminal, if set, declares the states in which the spec may stutter
	// forever without being deadlocked. Declared stuttering adds no edge to
	// the graph and is not counted as a transition. Specs that model terminal
	// stuttering as an explicit action (as Program.tla does) leave it nil.
	Terminal func(s S) bool
	// CheckDeadlock asks Explore to report reachable states with no successor
	// that are not Terminal.
	CheckDeadlock bool
}

// Action is one action of a spec.
type Action[S comparable] struct {
	// Name is the action's name in the spec.
	Name string
	// Guard returns "" when the action is enabled in s, and otherwise the
	// failing part of its guard in the spec's words, e.g. `phase = "Ready"`.
	Guard func(s S) string
	// Next calls emit with each successor of s. It is called only when Guard
	// returns "".
	Next func(s S, emit func(S))
	// Args, if set, says that the action has parameters, as a TLA+ action
	// RMPrepare(r) taken as \E r \in RM : RMPrepare(r): it returns the
	// argument lists, each in the spec's parameter order, with which the
	// action steps from s to t (t a successor Next emits from s; one list
	// usually, several when several arguments lead from s to the same t,
	// none for a t that Next does not emit). TLC labels the same step
	// RMPrepare("r1") for the list [Str("r1")]. A trace event that gives
	// its action's arguments is matched only by the steps taken with them;
	// nil means the action takes no arguments, and an event that gives
	// some is an input error.
	Args func(s, t S) [][]Value
}

// Invariant is a predicate that must hold in every reachable state.
type Invariant[S comparable] struct {
	Name  string
	Holds func(s S) bool
}

// Property is a predicate over a step from one state to the next (an action
// property such as PublicationIsTerminal). It is evaluated on non-stuttering
// steps only.
type Property[S comparable] struct {
	Name  string
	Holds func(from S, action string, to S) bool
}

// ErrUnknownAction is returned for an action name the spec does not have.
var ErrUnknownAction = errors.New("unknown action")

// Action returns the named action.
func (sp *Spec[S]) Action(name string) (*Action[S], error) {
	for i := range sp.Actions {
		if sp.Actions[i].Name == name {
			return &sp.Actions[i], nil
		}
	}
	return nil, fmt.Errorf("%s: %w %q", sp.Name, ErrUnknownAction, name)
}

// Enabled returns the names of the actions enabled in s, in spec order.
func (sp *Spec[S]) Enabled(s S) []string {
	var out []string
	for i := range sp.Actions {
		if sp.Actions[i].Guard(s) == "" {
			out = append(out, sp.Actions[i].Name)
		}
	}
	return out
}

// Successors calls emit with each successor of s under the action a.
func (a *Action[S]) Successors(s S, emit func(S)) {
	if a.Guard(s) == "" {
		a.Next(s, emit)
	}
}

// Format returns s as a TLA+ conjunction list: `phase = "Ready" /\ ...`.
func (sp *Spec[S]) Format(s S) string {
	vals := sp.Valuation(s)
	out := ""
	for i, name := range sp.Vars {
		if i > 0 {
			out += ` /\ `
		}
		out += name + " = " + vals[i].String()
	}
	return out
}

// Check reports the first invariant that s violates, or "".
func (sp *Spec[S]) Check(s S) string {
	for _, inv := range sp.Invariants {
		if !inv.Holds(s) {
			return inv.Name
		}
	}
	return ""
}

// CheckStep reports the first property that the step violates, or "".
// Stuttering steps (from == to) satisfy every property.
func (sp *Spec[S]) CheckStep(from S, action string, to S) string {
	if from == to {
		return ""
	}
	for _, p := range sp.Properties {
		if !p.Holds(from, action, to) {
			return p.Name
		}
	}
	return ""
}
