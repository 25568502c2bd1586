// Command twophase-check is tracecheck for spec/TwoPhase.tla: the whole
// tracecheck command line (explore, chart, check, replay, coverage,
// export) with the two-phase commit spec registered, and the mutate
// command with this team's named code mutants, built from the library
// entry point as any team's own would be.
package main

import (
	"os"

	"example.com/twophase/model"

	"github.com/tracecheck/tracecheck/cli"
	"github.com/tracecheck/tracecheck/mutate"
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

func main() {
	os.Exit(cli.Run(cli.Config{
		Specs: []cli.Spec{{
			Doc:   "two-phase commit with three resource managers (spec/TwoPhase.tla)",
			Files: []string{"spec/TwoPhase.tla", "spec/TwoPhase.cfg"},
			Model: cli.Of(model.Spec()),
		}},
		Commands: []cli.Command{cli.MutateCommand(cli.MutateConfig{Mutants: mutants, What: "two-phase commit's"})},
	}, os.Args[1:], os.Stdout, os.Stderr))
}
