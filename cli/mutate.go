package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/tracecheck/tracecheck/mutate"
)

// MutateConfig says what a mutate command runs.
type MutateConfig struct {
	// Mutants are the named code mutants (package mutate), in the order
	// the kill matrix lists them.
	Mutants []mutate.Mutant
	// Gate, if set, is the detector --gate uses instead of each mutant's
	// tests: a command built with the mutant (Test.Command set), such as
	// a gate binary's quick mode. An argument "{dir}" is replaced by a
	// fresh empty temporary directory for each mutant (a run directory).
	Gate *mutate.Test
	// What names the system the mutants belong to, in the summary line.
	What string
}

const mutateSynopsis = `[--list] [--json] [--gate] [--timeout D] [--race] [--root DIR] [PATTERN...]

Runs the named code mutants: each is a bug made in the real source (one
small rewrite of one file) that the test suite must catch. Each is applied
only through go's -overlay flag, never in the checkout, and its tests (those
expected to kill it) run until one fails. PATTERNs select mutants by name
(path.Match, e.g. 'publisher/*'); none means all. It prints a progress line
per mutant on stderr, then the kill matrix: each mutant, the file it
mutates, what killed it (the first failing test, "build", "timeout", or the
gate's first FAIL line) and the time taken; a mutant that survived is a bug
nothing catches. --json prints the matrix as JSON. --gate uses the gate
instead of each mutant's tests, when the program has one: the gate is built
with the mutant and must fail. Run it from the module root (or name it with
--root).

Exit codes: 0 every mutant killed; 1 a mutant survived; 2 usage; 3 a
mutant no longer applies (the code it rewrites changed) or could not run.`

// MutateCommand returns the mutate command for cfg's mutants: a team's
// own binary adds it to Config.Commands to run its mutants, and the kill
// matrix, as tracecheck does for its bundled systems.
func MutateCommand(cfg MutateConfig) Command {
	what := cfg.What
	if what == "" {
		what = "the"
	}
	return Command{Name: "mutate", Summary: "run " + what + " named code mutants and print the kill matrix",
		Run: func(args []string, stdout, stderr io.Writer) int { return runMutate(cfg, args, stdout, stderr) }}
}

func runMutate(cfg MutateConfig, args []string, stdout, stderr io.Writer) int {
	fs := NewFlagSet("mutate", mutateSynopsis, stderr)
	list := fs.Bool("list", false, "list the mutants and their diffs; run nothing")
	asJSON := fs.Bool("json", false, "print the kill matrix as JSON")
	timeout := fs.Duration("timeout", 10*time.Minute, "bound on one test run of a mutant (a deadlock is killed as \"timeout\")")
	race := fs.Bool("race", false, "run the tests under the race detector")
	root := fs.String("root", ".", "the module root")
	useGate := fs.Bool("gate", false, "detect with the gate, built with the mutant, instead of the mutant's tests")
	patterns, code := Parse(fs, args)
	if code >= 0 {
		return code
	}
	var chosen []mutate.Mutant
	for _, m := range cfg.Mutants {
		if len(patterns) == 0 {
			chosen = append(chosen, m)
			continue
		}
		for _, p := range patterns {
			if ok, err := path.Match(p, m.Name); err != nil {
				fmt.Fprintf(stderr, "tracecheck mutate: bad pattern %q: %v\n", p, err)
				return ExitUsage
			} else if ok || p == m.Name {
				chosen = append(chosen, m)
				break
			}
		}
	}
	if *useGate && cfg.Gate == nil {
		fmt.Fprintln(stderr, "tracecheck mutate: --gate: this program has no gate")
		return ExitUsage
	}
	if len(chosen) == 0 {
		fmt.Fprintf(stderr, "tracecheck mutate: no mutant matches %q\n", patterns)
		return ExitUsage
	}
	if *list {
		for _, m := range chosen {
			fmt.Fprintf(stdout, "%s: %s\n%s\n", m.Name, m.Doc, m.Diff())
		}
		return ExitOK
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	opt := mutate.Options{Root: *root, Timeout: *timeout, Race: *race}
	var results []mutate.Result
	killed, survived, broken := 0, 0, 0
	start := time.Now()
	for i, m := range chosen {
		if ctx.Err() != nil {
			fmt.Fprintln(stderr, "tracecheck mutate: interrupted; the checkout is untouched")
			return ExitInput
		}
		var r mutate.Result
		if *useGate {
			r = gateRun(ctx, m, *cfg.Gate, opt)
		} else {
			r = mutate.Run(ctx, m, opt)
		}
		results = append(results, r)
		switch {
		case r.Error != "":
			broken++
		case r.Killed:
			killed++
		default:
			survived++
		}
		elapsed := time.Since(start)
		eta := elapsed / time.Duration(i+1) * time.Duration(len(chosen)-i-1)
		fmt.Fprintf(stderr, "tracecheck mutate: %d/%d done, %d killed, %d survived, %d not run; %s: %s (%s); ETA %s\n",
			i+1, len(chosen), killed, survived, broken, m.Name, verdict(r), r.Duration.Round(time.Second), eta.Round(time.Second))
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(results)
	} else {
		tw := tabwriter.NewWriter(stdout, 2, 8, 2, ' ', 0)
		fmt.Fprintln(tw, "MUTANT\tFILE\tKILLED BY\tTIME")
		for _, r := range results {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.Mutant, r.File, verdict(r), r.Duration.Round(100*time.Millisecond))
		}
		tw.Flush()
		fmt.Fprintf(stdout, "%d mutants: %d killed, %d survived, %d not run (%s)\n", len(results), killed, survived, broken, time.Since(start).Round(time.Second))
	}
	switch {
	case broken > 0:
		for _, r := range results {
			if r.Error != "" {
				fmt.Fprintf(stderr, "tracecheck mutate: %s: %s\n", r.Mutant, r.Error)
			}
		}
		return ExitInput
	case survived > 0:
		return ExitViolation
	}
	return ExitOK
}

// gateRun runs m with gate as its only detector, "{dir}" in its
// arguments a fresh temporary directory.
func gateRun(ctx context.Context, m mutate.Mutant, gate mutate.Test, opt mutate.Options) mutate.Result {
	dir, err := os.MkdirTemp("", "tracecheck-gate-")
	if err != nil {
		return mutate.Result{Mutant: m.Name, File: m.File, Error: err.Error()}
	}
	defer os.RemoveAll(dir)
	gate.Command = append([]string(nil), gate.Command...)
	for i, a := range gate.Command {
		gate.Command[i] = strings.ReplaceAll(a, "{dir}", dir)
	}
	m.Tests = []mutate.Test{gate}
	return mutate.Run(ctx, m, opt)
}

// verdict says what became of a mutant, in a word or two.
func verdict(r mutate.Result) string {
	switch {
	case r.Error != "":
		return "NOT RUN: " + strings.SplitN(r.Error, "\n", 2)[0]
	case r.Killed:
		return r.Detector
	}
	return "SURVIVED"
}
