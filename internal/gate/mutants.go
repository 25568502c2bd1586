package gate

import (
	"context"
	"fmt"

	"github.com/tracecheck/tracecheck/htmlreport"
	"github.com/tracecheck/tracecheck/internal/mutants"
	"github.com/tracecheck/tracecheck/mutate"
)

// mutantsStage runs every named code mutant (internal/mutants) through the
// mutation runner: each must be killed by its tests. The kill matrix goes
// in the report.
func mutantsStage(ctx context.Context, r *run, s *stage) error {
	all := mutants.Named()
	killed := 0
	for _, m := range all {
		fmt.Fprintf(r.opt.Progress, "gate:   mutant %s ...\n", m.Name)
		res := mutate.Run(ctx, m, mutate.Options{Root: r.opt.Root})
		k := htmlreport.Kill{Mutant: m.Name, File: m.File, Elapsed: res.Duration}
		switch {
		case res.Error != "":
			s.fail("%s: could not run: %s", m.Name, res.Error)
			k.KilledBy = "(error: " + res.Error + ")"
		case res.Killed:
			killed++
			k.KilledBy = res.Detector
		default:
			s.fail("%s SURVIVED: %s", m.Name, m.Doc)
		}
		r.mu.Lock()
		r.kills = append(r.kills, k)
		r.mu.Unlock()
	}
	s.figure("%d/%d code mutants killed", killed, len(all))
	return nil
}
