// Package conform is tracecheck's conformance gate: it proves that the Go
// transcriptions in model/ have exactly the state graphs that the real TLC
// and FizzBee compute from the specs in spec/.
//
// It compares whole labelled graphs, not counts. A [Graph] is a set of
// states, each a variable assignment (a record from variable name to
// [model.Value]), the initial states, the labelled edges (from, action,
// to), and the states with terminal stuttering. [FromModel] builds one from
// model.Explore's Result.Graph (states rendered by Spec.Valuation under
// Spec.Vars); [ParseTLCDot] from TLC's `-dump dot,actionlabels` file;
// [ParseFizzGraph] from FizzBee's nodes and adjacency-list files. [Compare]
// returns a [Diff] that is empty exactly when the graphs are equal, and
// otherwise lists the missing and extra states and edges in TLA+ syntax.
//
// # Parsers
//
//   - [ParseTLAValue] and [ParseState]: TLA+ values and states as TLC
//     prints them (strings with TLC's escapes, booleans, integers, records,
//     sequences, sets, functions, nested). They are printed back the way
//     TLC prints them by [model.Value.String], the one TLA+ printer of
//     tracecheck; [FormatState] prints a state as a conjunction with it.
//   - [ParseTLCDot] and [ParseTLCOutput]: TLC's DOT dump and its standard
//     output (version, counts, verdict, error trace).
//   - [ParseFizzGraph], [ParseFizzOutput] and [ParseFizzErrorGraph]:
//     FizzBee's protobuf graph files, its standard output (verdict line,
//     counts, failure trace) and its error-graph.json.
//
// Every parser returns an error wrapping [ErrSyntax] on malformed input
// (or [ErrUnsupported] on input it deliberately does not handle) and never
// panics.
//
// # Mapping TLC onto the model
//
// TLC's graph needs no mapping: a node label is the state, `style = filled`
// marks an initial state, an edge label is the action, with its arguments
// when it has parameters (`RMPrepare("r1")`: [ParseLabel], [FormatLabel];
// [Spec] gives the graph's actions the arguments of their labels, and
// [FromModelWithArgs] labels a transcription's graph with its actions'
// Args, so that both compare with TLC's labels as written). Program.tla models
// terminal stuttering as the explicit action Terminated, so its self-loops
// are edges on both sides and neither side has declared stuttering.
//
// # Mapping FizzBee onto the model
//
// As model/session's package doc states, and exactly so:
//
//   - A state is the fields of the role instance (conn, vad, resp,
//     compaction) by bare name; the global `s`, which only holds the role
//     reference created by `s = Session()`, is not a variable.
//   - The first node of FizzBee's node file is its root, the state after
//     Init: the one initial state.
//   - The link "Session#0.RespStart" is the edge RespStart. A link names
//     the action alone (its labels field is empty in the retained dump), so
//     a FizzBee graph's actions take no arguments. FizzBee's
//     re-assignment `resp = 1` when a response is already active is a real
//     self-loop on both sides (4 of the 36 edges).
//   - FizzBee adds one link named "end" from each node without successors
//     to itself. It corresponds to the model's declared terminal stuttering
//     (Spec.Terminal, Graph.Stutters): a stutter, not an edge, and not
//     counted. The torn-down state is the only such state, so FizzBee's 37
//     links are the model's 36 edges plus one stutter.
//   - Everything else must match one to one. FizzBee graphs this package
//     cannot map faithfully are refused with [ErrUnsupported] rather than
//     approximated: internal (non-yield) nodes of non-atomic actions, live
//     threads, several instances of one role, links of another type.
//
// # Retained reports
//
// formal-verification/run.sh runs the real tools and writes each report
// with a [Manifest]: the tool's version, the exact command line, the exit
// code, the verdict line, and sha256 sums of the specs read and the files
// written. [Report.Verify] fails with [ErrStale], and a command to
// regenerate, when a spec was edited after its report was produced. The
// package's tests load the retained reports; when a report is absent they
// skip and say so. TestLive runs the same checks against fresh output in
// CONFORM_LIVE_DIR, which `make formal` sets.
package conform
