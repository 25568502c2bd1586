// Command twophase-check is tracecheck for spec/TwoPhase.tla: the whole
// tracecheck command line (explore, chart, check, replay, coverage,
// export) with the two-phase commit spec registered, built from the
// library entry point as any team's own would be.
package main

import (
	"example.com/twophase/model"

	"github.com/tracecheck/tracecheck/cli"
)

func main() {
	cli.Main(cli.Spec{
		Doc:   "two-phase commit with three resource managers (spec/TwoPhase.tla)",
		Files: []string{"spec/TwoPhase.tla", "spec/TwoPhase.cfg"},
		Model: cli.Of(model.Spec()),
	})
}
