package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/tracecheck/tracecheck/check"
)

const coverageSynopsis = `[--model SPEC] [--mutant NAME] [--json] FILE|DIR...|-

Checks the traces against a registered spec and prints how many of the
spec's transitions (the edges of its reachable state graph, as tracecheck
explore counts them) the traces exercised, e.g. "exercised 12/15
transitions", and lists the ones never exercised. The final-state
stutters (self-loops of a state with no other way out, such as Program's
Terminated: a finished run's trace ends in that state and need not record
them) are listed apart, with the reason, and left out of the count and the
percentage; --json has them under "not_required", and the counts over the
others as "required" and "required_exercised" ("total" and "exercised"
count every transition). A directory stands for
the traces under it. A step counts only if exactly one transition fits
it; steps after a violation count for nothing. All files must be traces
of the same model (--model, or inferred from the first).

Exit codes: 0 the coverage was computed (whatever the verdicts), 3 input
error, 2 usage.`

func (a *app) runCoverage(args []string, stdout, stderr io.Writer) int {
	fs := NewFlagSet("coverage", coverageSynopsis, stderr)
	tf := a.addTraceFlags(fs)
	asJSON := fs.Bool("json", false, UsageJSON)
	files, code := a.traceArgs(fs, tf, args, stderr, "no trace given", func(n int) bool { return n > 0 })
	if code >= 0 {
		return code
	}
	files, err := expandDirs(files)
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck coverage: %v\n", err)
		return ExitInput
	}
	ctx := context.Background()
	var reports []*check.Report
	var m namedModel
	modelName := *tf.model
	for _, file := range files {
		r, name, fm, closeFile, err := a.openTrace(file, modelName, *tf.maxLine, *tf.maxITF)
		if err != nil {
			fmt.Fprintf(stderr, "tracecheck coverage: %v\n", err)
			return ExitInput
		}
		for _, w := range fm.warnings {
			fmt.Fprintf(stderr, "tracecheck coverage: warning: %s\n", w)
		}
		if m.model == nil {
			m, modelName = fm, fm.name
		}
		// Only the transitions taken are needed: the instances' results
		// are not kept.
		rep, err := m.check(ctx, r, name, check.Options{MaxLine: *tf.maxLine, OnResult: func(check.InstanceResult) {}})
		closeFile()
		if err != nil {
			fmt.Fprintf(stderr, "tracecheck coverage: %v\n", fm.inputHint(err))
			return ExitInput
		}
		reports = append(reports, rep)
	}
	cov, err := m.model.Coverage(ctx, reports)
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck coverage: %v\n", err)
		return ExitInput
	}
	if *asJSON {
		err = cov.WriteJSON(stdout)
	} else {
		err = cov.WriteText(stdout)
	}
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck coverage: %v\n", err)
		return ExitInput
	}
	return ExitOK
}
