// Command twophase-check is tracecheck for spec/TwoPhase.tla: the whole
// tracecheck command line (explore, chart, check, replay, coverage,
// export) with the two-phase commit spec registered, the mutate command
// with this team's named code mutants, and the verify command, this
// team's gate, built from the library entry point as any team's own would
// be.
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"

	"example.com/twophase/model"
	"example.com/twophase/tpc"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/cli"
	"github.com/tracecheck/tracecheck/mutate"
	"github.com/tracecheck/tracecheck/trace"
)

// mutants are bugs the implementation's tests must catch (run from the
// module root: twophase-check mutate).
var mutants = []mutate.Mutant{{
	Name:  "tpc/commit-on-a-majority",
	Doc:   "the TM commits once a majority of the RMs have prepared, not all of them",
	File:  "tpc/tpc.go",
	Old:   "\tif prepared == len(RMs) {\n",
	New:   "\tif 2*prepared > len(RMs) {\n",
	Tests: []mutate.Test{{Package: "./tpc/"}},
}}

// specs are the specs this binary registers.
var specs = []cli.Spec{{
	Name:  "twophase",
	Doc:   "two-phase commit with three resource managers (spec/TwoPhase.tla)",
	Files: []string{"spec/TwoPhase.tla", "spec/TwoPhase.cfg"},
	Model: cli.Of(model.Spec()),
}}

// gate is this team's CI gate (twophase-check verify, run from the module
// root): the spec explored; its transcription equal to the graph TLC
// dumped (formal/tlc, produced by formal/run.sh); the tpc tests, and 300
// concurrent transactions of the implementation traced into the run
// directory; every trace checked (the hand-written examples valid, the
// known-bad ones violations, the implementation's valid) and the valid
// ones covering every action and at least 4% of the 966 transitions that
// are not terminal self-loops (300 transactions take 60 to 140 of them,
// depending on the scheduling: most of the graph is interleavings of the
// RMs' messages); and, with --mutants, the named code mutant killed.
var gate = cli.GateConfig{
	Program: "twophase-check",
	Specs:   specs,
	Conformance: []cli.GateConformance{{
		Spec:       "twophase",
		Graph:      "formal/tlc/states.dot",
		Report:     "formal/tlc",
		Regenerate: "TLA2TOOLS=/path/to/tla2tools.jar bash formal/run.sh",
	}},
	Steps: []cli.GateStep{
		{Name: "tpc tests", Argv: []string{"go", "test", "-count=1", "./tpc/"}},
		{Name: "tpc transactions", Run: transactions},
	},
	Traces: []cli.GateTraces{
		{Name: "examples", Spec: "twophase", Files: []string{"testdata/*-ok.ndjson"}},
		{Name: "known-bad", Spec: "twophase", Files: []string{"testdata/*-bad.ndjson"}, Want: check.Violation},
		{Name: "tpc", Spec: "twophase", Files: []string{"{dir}/tpc/*.ndjson"}},
	},
	Coverage: []cli.GateCoverage{{Spec: "twophase", Min: 0.04, Actions: true}},
	Mutants:  mutants,
}

// transactions runs 300 transactions of the implementation at once, a
// tenth of the RMs giving up, traced into dir/tpc/transactions.ndjson for
// the gate's traces stage.
func transactions(ctx context.Context, dir string, log io.Writer) error {
	if err := os.MkdirAll(filepath.Join(dir, "tpc"), 0o755); err != nil {
		return fmt.Errorf("transactions: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, "tpc", "transactions.ndjson"))
	if err != nil {
		return fmt.Errorf("transactions: %w", err)
	}
	w := trace.NewWriter(f)
	if err := w.WriteHeader(trace.Header{Spec: "twophase", Emitter: "example.com/twophase/tpc"}); err != nil {
		f.Close()
		return fmt.Errorf("transactions: %w", err)
	}
	const n = 300
	var mu sync.Mutex
	outcomes := map[tpc.Outcome]int{}
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			o := tpc.Run(ctx, tpc.Config{ID: fmt.Sprintf("tx%03d", i), Sink: w, AbortChance: 0.1, Seed: uint64(i)})
			mu.Lock()
			outcomes[o]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if err := f.Close(); err != nil {
		return fmt.Errorf("transactions: %w", err)
	}
	fmt.Fprintf(log, "%d transactions: %v\n", n, outcomes)
	return ctx.Err()
}

func main() {
	os.Exit(cli.Run(cli.Config{
		Specs: specs,
		Commands: []cli.Command{
			cli.MutateCommand(cli.MutateConfig{Mutants: mutants, What: "two-phase commit's",
				Gate: &mutate.Test{Package: "./cmd/twophase-check", Command: []string{"verify", "--quick", "--dir", "{dir}"}}}),
			cli.GateCommand(gate),
		},
	}, os.Args[1:], os.Stdout, os.Stderr))
}
