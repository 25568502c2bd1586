// Package tlccross cross-checks tracecheck's trace validation with TLC's.
//
// spec/TraceProgram.tla is a TLC trace-validation spec in the style of
// etcd-raft's tla/Traceetcdraft.tla: it reads one NDJSON trace through the
// TLA+ CommunityModules' ndJsonDeserialize and searches for a behaviour of
// spec/Program.tla that matches it. formal-verification/tlc-traces.sh
// (make tlc-traces) runs the real TLC over every Program trace in
// traces/program/ and testdata/ (edge cases named after their verdicts),
// one instance a file, and retains its verdicts in
// formal-verification/tlc-traces/verdicts.tsv. This package reads that file
// ([ReadVerdicts]), splits traces per instance the way the script does
// ([SplitInstances]), and computes tracecheck's verdict on each piece
// ([Verdict]); its test asserts that the two agree on every trace and that
// the retained verdicts are those of the current spec and traces.
//
// [TLCVerdict] maps a TLC run's exit code and output to a verdict, as the
// script does. With TLA2TOOLS set, TestTLCDifferential (make tlc-diff)
// runs TLC and tracecheck on random valid and mutated traces,
// TestTLCOnTraces on any traces (TLC_TRACES=glob), and
// BenchmarkTLCTraceValidation (make bench-tlc) times TLC against
// tracecheck on 100 generated Program traces, one file at a time as
// etcd-raft validates them.
package tlccross
