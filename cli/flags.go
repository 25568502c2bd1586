package cli

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// The usage texts of the flags several commands share. A flag has one name
// and one meaning on every command, and says it in the same words: the
// commands of this package and of the bundled binary define these flags
// with these texts (a test of cmd/tracecheck runs every command with -h
// and holds them to it). A command's description says what its JSON
// holds.
const (
	// UsageJSON is --json's: JSON instead of the text output.
	UsageJSON = "write JSON instead of text (its form is described above)"
	// UsageMutant is --mutant's, followed by the registered mutants.
	UsageMutant = "a spec `mutant`, by its name: "
	// UsageModel is --model's, followed by the registered specs.
	UsageModel = "the spec's `model` to check against: "
	// UsageInstance is --instance's: one instance of a trace.
	UsageInstance = "only the instance `ID`"
	// UsageMaxLine is --max-line's: the bound on a trace line.
	UsageMaxLine = "longest accepted trace line (one event) in `bytes`"
	// UsageMaxITF is --max-itf's: the bound on an ITF document.
	UsageMaxITF = "largest accepted ITF document in `bytes`"
	// UsageRoot is --root's: where the source tree is.
	UsageRoot = "the module's root `directory` (its go.mod)"
	// UsageSeed is --seed's: the seed of a randomised workload.
	UsageSeed = "`seed` of the randomised workload (the summary prints it)"
	// UsageTraceNATS is --trace-nats's: a copy of the events for tracecheck
	// monitor.
	UsageTraceNATS = "also publish the trace's events to NATS JetStream at `URL`, for tracecheck monitor (the trace file stays the record)"
)

// deprecated marks the usage text of a flag kept as an alias of another:
// usage texts leave it out, and using it prints a notice.
const deprecated = "\x00deprecated: "

// Deprecated defines the flag old on fs as a deprecated alias: usage texts
// do not list it, and when it is given, a one-line notice on stderr says
// to use instead (e.g. "--json"), then set receives its value. isBool makes
// it a flag without a value (set then receives "true").
func Deprecated(fs *flag.FlagSet, stderr io.Writer, old, instead string, isBool bool, set func(string) error) {
	notice := func(value string) {
		given := "--" + old
		if !isBool {
			given += " " + value
		}
		fmt.Fprintf(stderr, "tracecheck %s: %s is deprecated: use %s\n", fs.Name(), given, instead)
	}
	if isBool {
		fs.BoolFunc(old, deprecated+instead, func(v string) error { notice(v); return set(v) })
		return
	}
	fs.Func(old, deprecated+instead, func(v string) error { notice(v); return set(v) })
}

// printFlags prints fs's flags as flag.PrintDefaults does, without the
// deprecated aliases.
func printFlags(fs *flag.FlagSet, w io.Writer) {
	shown := flag.NewFlagSet(fs.Name(), flag.ContinueOnError)
	shown.SetOutput(w)
	fs.VisitAll(func(f *flag.Flag) {
		if strings.HasPrefix(f.Usage, deprecated) {
			return
		}
		shown.Var(f.Value, f.Name, f.Usage)
		shown.Lookup(f.Name).DefValue = f.DefValue
	})
	shown.PrintDefaults()
}
