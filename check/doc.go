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
// ([model.Spec.Properties]); an event that gives its action's arguments
// ("args", for an action with [model.Action.Args]) must be a step taken
// with them. Stutter events ("stutter": true) must leave
// every variable they carry unchanged. Composite steps (parts "begin",
// "step", "end") are merged and checked as one spec step at "end".
//
// Each instance ends with a [Verdict]: [Valid] if it ends where the spec
// may stop (a Terminal state, or one whose only enabled actions stutter),
// [Violation] at its first offending event with a [Divergence] report
// (its [DivergenceKind] says what did not fit: a guard, the state, the
// arguments, an invariant...), and [Incomplete] otherwise. Incomplete is never reported
// as valid.
//
// Entry points:
//
//   - [Check] reads a whole NDJSON stream (docs/trace-format.md) and
//     returns a [Report]; bad input is an error matching [ErrInput].
//   - [New] returns a [Checker] to feed events one at a time
//     ([Checker.Feed], or [Checker.Emit] as a trace.Sink in-process): a
//     live monitor. [Options.OnViolation] reports a violation as it
//     happens.
//   - [Options.OnResult] streams each instance's result as soon as it is
//     final instead of listing it in the [Report]; with [Options.Forget],
//     finished instances are also dropped, so memory follows the live
//     instances. [TextStream] prints streamed results as `tracecheck
//     check` does.
//   - [CoverageOf] says which transitions of the spec's graph the traces
//     exercised.
//
// Memory is bounded by the number of live instances, not the trace length:
// the checker keeps each instance's candidate states and its last few
// matched events (for the report), and bounded memos of what it asks the
// spec (successors, valuations, whether the spec may stop in a state) and
// of parsed values. An instance is small (96 bytes for the bundled specs,
// about 150 with its share of the instance table; BenchmarkCheckInstances):
// its usual single candidate state is inline, and when the input can be
// read again (a regular file, a bytes.Reader: [Check] sees an io.ReaderAt
// and io.Seeker) its last matched events are kept as positions in the
// input and read back for a divergence report; otherwise as copies of the
// lines.
package check
