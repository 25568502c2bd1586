// Package cli is tracecheck's command line as a library: a team builds its
// own tracecheck binary for its own specs by registering them, the way
// golang.org/x/tools' multichecker builds a vet-like tool from analyzers.
//
//	package main
//
//	import (
//		"github.com/tracecheck/tracecheck/cli"
//		"example.com/twophase/model"
//	)
//
//	func main() {
//		cli.Main(cli.Spec{
//			Name:  "twophase",
//			Doc:   "two-phase commit with three resource managers",
//			Files: []string{"spec/TwoPhase.tla", "spec/TwoPhase.cfg"},
//			Model: cli.Of(model.Spec()),
//		})
//	}
//
// The binary then has every command of tracecheck's own for that spec:
//
//	explore   explore the transcription exhaustively and check its properties, as TLC does
//	chart     draw its state graph (Mermaid, DOT or JSON)
//	check     validate NDJSON or ITF traces against it: valid, violation or incomplete
//	replay    replay a trace step by step, with the spec state and the enabled actions
//	coverage  say which transitions of its state graph the traces exercised
//	export    convert traces between NDJSON and ITF
//	version   print the binary's module version, VCS revision and Go version
//	completion  print a bash, zsh or fish completion script for the binary
//
// with the same flags, output and exit codes (0 ok, 1 violation, 2 usage,
// 3 input error, 4 incomplete). A flag has one name and one meaning on every
// command ([UsageJSON] and the other Usage texts): --json for JSON output,
// --mutant NAME for a spec's mutant; old spellings are kept as
// [Deprecated] aliases that say what to type instead. A [Spec] is the one value that registers a
// spec: its name, its files, its transcription ([Of] wraps a model.Spec)
// and its mutants; every argument, usage text and the inference of a
// trace's spec derive from the registered specs. [Run] is the same command
// line as a function (for tests, and for programs that add commands of
// their own: tracecheck's bundled binary is cli.Run with the bundled specs
// and the commands run, recover, inspect and session-demo).
package cli
