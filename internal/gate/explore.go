package gate

import (
	"context"
	"fmt"
	"strings"

	"github.com/tracecheck/tracecheck/cli"
	"github.com/tracecheck/tracecheck/internal/bundled"
	"github.com/tracecheck/tracecheck/model/machines"
)

// exploreStage explores every registered transcription (program, session
// and the five machine specs: every invariant and property must hold, no
// deadlock) and every spec mutant (each must break the property it names:
// the card's mutation experiments, such as deleting the compaction
// teardown), through the library gate's explore stage, the one a team's
// gate runs; then checks that each machine spec refines session.fizz.
func exploreStage(ctx context.Context, r *run, s *stage) error {
	dir, err := r.path("explore")
	if err != nil {
		return err
	}
	res, err := cli.RunGate(ctx, cli.GateConfig{Specs: bundled.Specs()},
		cli.GateOptions{Root: r.opt.Root, Dir: dir, Stages: []string{cli.StageExplore}})
	if err != nil {
		return err
	}
	for _, st := range res.Stages {
		if st.Name != cli.StageExplore {
			continue
		}
		s.figure("%s", st.Figures)
		for _, f := range st.Failures {
			s.fail("%s", f)
		}
	}
	refs, err := machines.SessionRefinements(ctx)
	if err != nil {
		s.fail("refinement: %v", err)
	}
	var names []string
	for _, ref := range refs {
		names = append(names, ref.Machine)
	}
	s.figure("%d/5 machine specs refine session.fizz (%s)", len(refs), strings.Join(names, ", "))
	return nil
}

// pct is "n/m (p%)".
func pct(n, m int) string {
	if m == 0 {
		return fmt.Sprintf("%d/%d", n, m)
	}
	return fmt.Sprintf("%d/%d (%.0f%%)", n, m, 100*float64(n)/float64(m))
}
