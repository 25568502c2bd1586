// Package model is tracecheck's explicit-state engine and the home of the
// Go transcriptions of the bundled specs (model/program, model/session).
//
// A [Spec] is a pure state machine: initial states, named actions with
// guards, state invariants, action properties over steps, and optionally
// the states where the spec may stutter forever ([Spec.Terminal]). Nothing
// in this package or its transcriptions does I/O, reads a clock, or draws
// randomness, so exploration is deterministic and repeatable.
//
// [Explore] guarantees, for a spec whose functions are pure:
//
//   - breadth-first exploration of every reachable state, with the exact
//     number of distinct states and of distinct labelled transitions
//     (From, Action, To); explicit self-loops count, declared terminal
//     stuttering does not;
//   - every invariant checked in every reachable state, every property on
//     every non-stuttering step, and deadlock freedom when asked for;
//   - for each broken check, a shortest counterexample (breadth-first
//     order makes the first one found a shortest one), as states plus the
//     names of the actions between them;
//   - the whole graph as data ([Graph]), in discovery order, so that it can
//     be compared edge for edge with the graph TLC or FizzBee dumps.
//
// The same Spec serves trace validation (package check): its
// [Action.Guard] explains why an action is disabled, and [Spec.Valuation]
// renders states in the spec's vocabulary as [Value]s. [Value.String] is
// tracecheck's one printer of TLA+ values: every value of every state that
// tracecheck prints (reports, counterexamples, charts, conformance diffs)
// reads as TLC prints it.
package model
