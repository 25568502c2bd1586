package gate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/cli"
	"github.com/tracecheck/tracecheck/internal/bundled"
)

// lookup returns the bundled model named name, as check --model names
// it (a spec, or one of its mutants).
func lookup(name string) (cli.Model, error) {
	if m, ok := cli.Lookup(bundled.Specs(), name); ok {
		return m, nil
	}
	return nil, fmt.Errorf("no bundled model %q", name)
}

// corpusStage replays the corpus (traces/EXPECTED.tsv): every trace must
// get its expected verdict, and a violation its first bad line and
// instance.
func corpusStage(ctx context.Context, r *run, s *stage) error {
	rows, err := readTSV(filepath.Join(r.opt.Root, "traces", "EXPECTED.tsv"))
	if err != nil {
		return err
	}
	ok := 0
	for _, row := range rows {
		if len(row) < 5 {
			s.fail("traces/EXPECTED.tsv: malformed row %q", row)
			continue
		}
		file, specName, want, line, inst := row[0], row[1], row[2], row[3], row[4]
		sp, err := lookup(specName)
		if err != nil {
			s.fail("%s: %v", file, err)
			continue
		}
		f, err := os.Open(filepath.Join(r.opt.Root, "traces", file))
		if err != nil {
			s.fail("%v", err)
			continue
		}
		rep, err := sp.Check(ctx, f, file, check.Options{})
		f.Close()
		got := ""
		switch {
		case errors.Is(err, check.ErrInput):
			got = "input-error"
		case err != nil:
			return err
		default:
			got = rep.Verdict().String()
		}
		if got != want {
			s.fail("traces/%s: %s, want %s", file, got, want)
			continue
		}
		if want == "violation" && line != "-" {
			n, _ := strconv.Atoi(line)
			found := false
			for _, in := range rep.Instances {
				if in.Verdict == check.Violation && in.Divergence != nil && in.Divergence.Line == n && in.Instance == inst {
					found = true
				}
			}
			if !found {
				s.fail("traces/%s: the violation is not at line %d in %s", file, n, inst)
				continue
			}
		}
		ok++
	}
	s.figure("%d/%d corpus traces get their expected verdict", ok, len(rows))
	cal, err := calibrate(ctx, s)
	if err != nil {
		return err
	}
	s.figure("checker calibrated: %d/%d traces of a nondeterministic reference spec", cal, len(calibration))
	return nil
}
