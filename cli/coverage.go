package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"

	"github.com/tracecheck/tracecheck/check"
)

const coverageSynopsis = `[--model SPEC] [--mutant NAME] [--json] [--projections] FILE|DIR...|-

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

--projections also prints the coverage of each spec the traces' spec
projects onto (check --projections; the bundled session onto its machine
specs connection, turn, response, compaction and tts), by the projected
traces, each after a line "projected onto SPEC:"; with --json the output
is then {"coverage": ..., "projections": [{"spec", "coverage"}]}.

Exit codes: 0 the coverage was computed (whatever the verdicts), 3 input
error, 2 usage.`

func (a *app) runCoverage(args []string, stdout, stderr io.Writer) int {
	fs := NewFlagSet("coverage", coverageSynopsis, stderr)
	tf := a.addTraceFlags(fs)
	asJSON := fs.Bool("json", false, UsageJSON)
	projections := fs.Bool("projections", false, "also the coverage of each spec the traces' spec projects onto, by the projected traces")
	files, code := a.traceArgs(fs, tf, args, stderr, "no trace given", func(n int) bool { return n > 0 })
	if code >= 0 {
		return code
	}
	files, err := expandDirs(files)
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck coverage: %v\n", err)
		return ExitInput
	}
	if *projections && slices.Contains(files, "-") {
		fmt.Fprintln(stderr, "tracecheck coverage: --projections reads each trace twice: name files, not standard input")
		return ExitUsage
	}
	ctx := context.Background()
	var reports []*check.Report
	var projected []*Projected
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
		if *projections && m.spec != nil && len(m.spec.Projections) > 0 {
			pr, pname, _, closeAgain, err := a.openTrace(file, modelName, *tf.maxLine, *tf.maxITF)
			if err != nil {
				fmt.Fprintf(stderr, "tracecheck coverage: %v\n", err)
				return ExitInput
			}
			spec := *m.spec
			spec.Monitors = nil
			p, err := CheckProjections(ctx, a.specs, &spec, pr, pname, check.Options{MaxLine: *tf.maxLine}, nil, false)
			closeAgain()
			if err != nil {
				fmt.Fprintf(stderr, "tracecheck coverage: %v\n", err)
				return ExitInput
			}
			projected = append(projected, p)
		}
	}
	cov, err := m.model.Coverage(ctx, reports)
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck coverage: %v\n", err)
		return ExitInput
	}
	var pcovs []ProjectedCoverage
	if len(projected) > 0 {
		if pcovs, err = Coverage(ctx, projected...); err != nil {
			fmt.Fprintf(stderr, "tracecheck coverage: %v\n", err)
			return ExitInput
		}
	}
	switch {
	case *asJSON && *projections:
		out := struct {
			Coverage    *check.Coverage     `json:"coverage"`
			Projections []ProjectedCoverage `json:"projections"`
		}{Coverage: cov, Projections: append([]ProjectedCoverage{}, pcovs...)}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(out)
	case *asJSON:
		err = cov.WriteJSON(stdout)
	default:
		err = cov.WriteText(stdout)
		for _, c := range pcovs {
			if err == nil {
				_, err = fmt.Fprintf(stdout, "projected onto %s:\n", c.Spec)
			}
			if err == nil {
				err = c.Coverage.WriteText(stdout)
			}
		}
	}
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck coverage: %v\n", err)
		return ExitInput
	}
	return ExitOK
}
