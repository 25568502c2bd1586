package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tracecheck/tracecheck/cli"
	"github.com/tracecheck/tracecheck/internal/gate"
)

const verifySynopsis = `[--quick | --full] [--mutants] [--dir DIR] [--json] [--seed N] [--root DIR]

The whole gate on the bundled specs and implementations, with no external
service; what make verify runs. Stages, each with a live progress line and
a row in the summary table (stage, verdict, time, figures):

  explore              both transcriptions explored (every invariant and
                       property, no deadlock); every spec mutant caught
  conformance          the transcriptions equal the retained TLC/FizzBee
                       reports (graphs, counterexamples; stale reports
                       fail); TLC's trace validation agrees; with --full
                       and TLA2TOOLS, FIZZ set, the tools rerun live
  corpus               every trace of traces/ gets its expected verdict
  publisher            the checkpoint publisher on real Python
  sessions             the session coordinators under a concurrent workload
  traces and coverage  every trace written above checked (a violation's
                       report goes in the HTML report) and the spec
                       transitions it exercised counted: every transition
                       but terminal self-loops must be exercised
  code mutants         with --mutants: every named code mutant killed

--quick is for pre-commit (small workloads), --full for nightly runs
(large ones, tools live). The run directory (--dir, default
bin/verify-TIMESTAMP; it must be new or empty) keeps the traces,
summary.json and report.html, a self-contained HTML report: statecharts
coloured by coverage, each stage, each divergence with its replay command,
the kill matrix. --json prints summary.json on stdout instead of the
table. --seed N seeds the randomised stages (default 0: a seed from the
clock; the summary records it, and --seed N repeats the run). Run it from
the repository root (or name it with --root).

Exit codes: 0 every stage passed; 1 a stage failed (a divergence, a stale
report, a coverage gap, a surviving mutant); 2 usage; 3 the run could not
happen (the run directory).`

func init() {
	register(cli.Command{Name: "verify", Summary: "run the whole gate on the bundled specs and implementations, with an HTML report", Run: runVerify})
}

func runVerify(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("verify", verifySynopsis, stderr)
	quick := fs.Bool("quick", false, "small workloads, for pre-commit")
	full := fs.Bool("full", false, "large workloads and TLC/FizzBee live (TLA2TOOLS, FIZZ), for nightly runs")
	muts := fs.Bool("mutants", false, "also run every named code mutant (needs go and the source tree)")
	dir := fs.String("dir", "", "the run `directory` (default bin/verify-TIMESTAMP)")
	asJSON := fs.Bool("json", false, cli.UsageJSON)
	seed := fs.Int64("seed", 0, cli.UsageSeed)
	root := fs.String("root", ".", cli.UsageRoot)
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tracecheck verify: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	}
	if *quick && *full {
		fmt.Fprintln(stderr, "tracecheck verify: --quick and --full exclude each other")
		return exitUsage
	}
	mode := gate.Default
	switch {
	case *quick:
		mode = gate.Quick
	case *full:
		mode = gate.Full
	}
	if *dir == "" {
		*dir = filepath.Join(*root, "bin", "verify-"+time.Now().UTC().Format("20060102T150405Z"))
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := gate.Run(ctx, gate.Options{Root: *root, Dir: *dir, Mode: mode, Mutants: *muts, Seed: *seed,
		Progress: stderr, Command: "tracecheck verify " + strings.Join(args, " ")})
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck verify: %v\n", err)
		if res == nil {
			return exitInput
		}
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(res)
	} else {
		gate.WriteTable(stdout, res)
	}
	if err != nil {
		return exitInput
	}
	if res.Verdict != gate.Pass {
		return exitViolation
	}
	return exitOK
}
