// Package check validates traces against a spec's Go transcription, the
// way TLC trace validation does, but streaming and with reports a person
// can act on.
//
// For each instance (a run, a session) of a trace, the checker keeps the
// set of spec states consistent with the instance's events so far. An
// event names a spec action and the state after it, in full or in part (a
// variable the event leaves out is unconstrained), so several states may
// fit: nondeterminism and partial states are handled by keeping them all.
// The first event must be "Init" and fit an initial state; every later
// event must be a successor, under the named action, of some candidate,
// keeping every invariant ([model.Spec.Invariants]) and action property
// ([model.Spec.Properties]). Stutter events ("stutter": true) must leave
// every variable they carry unchanged. Composite steps (parts "begin",
// "step", "end") are merged and checked as one spec step at "end".
//
// Each instance ends with a [Verdict]: [Valid] if it ends where the spec
// may stop (a Terminal state, or one whose only enabled actions stutter),
// [Violation] at its first offending event with a [Divergence] report, and
// [Incomplete] otherwise. Incomplete is never reported as valid.
//
// Entry points:
//
//   - [Check] reads a whole NDJSON stream (docs/trace-format.md) and
//     returns a [Report]; bad input is an error matching [ErrInput].
//   - [New] returns a [Checker] to feed events one at a time
//     ([Checker.Feed], or [Checker.Emit] as a trace.Sink in-process): a
//     live monitor. [Options.OnViolation] reports a violation as it
//     happens.
//   - [CoverageOf] says which transitions of the spec's graph the traces
//     exercised.
//
// Memory is bounded by the number of instances, not the trace length: the
// checker keeps each instance's candidate states and its last few matched
// events (for the report), and bounded caches of successors and values.
package check
