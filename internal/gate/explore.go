package gate

import (
	"context"
	"fmt"

	"github.com/tracecheck/tracecheck/internal/bundled"
	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/model/program"
	"github.com/tracecheck/tracecheck/model/session"
)

// exploreStage explores both transcriptions (every invariant and property
// must hold, no deadlock) and every spec mutant (each must break the
// property it names: the card's mutation experiments, such as deleting
// the compaction teardown).
func exploreStage(ctx context.Context, r *run, s *stage) error {
	p, err := model.Explore(ctx, program.Spec(), model.Options{})
	if err != nil {
		return err
	}
	if !p.OK() {
		s.fail("program: %s is violated", p.Violations[0].Name)
	}
	s.figure("program: %d states, %d transitions", p.States(), p.Transitions())
	q, err := model.Explore(ctx, session.Spec(session.Options{}), model.Options{})
	if err != nil {
		return err
	}
	if !q.OK() {
		s.fail("session: %s is violated", q.Violations[0].Name)
	}
	s.figure("session: %d states, %d transitions", q.States(), q.Transitions())

	caught := 0
	for _, m := range program.Mutants {
		res, err := model.Explore(ctx, program.MutantSpec(m), model.Options{})
		if err != nil {
			return err
		}
		if got := firstViolation(res); got != m.Breaks() {
			s.fail("program mutant %s: want %s violated, got %q", m, m.Breaks(), got)
			continue
		}
		caught++
	}
	muts := bundled.SessionMutants()
	for _, o := range muts {
		res, err := model.Explore(ctx, session.Spec(o), model.Options{})
		if err != nil {
			return err
		}
		if got := firstViolation(res); got != "ChildrenDieWithParent" {
			s.fail("session mutant %s: want ChildrenDieWithParent violated, got %q", o, got)
			continue
		}
		caught++
	}
	s.figure("%d/%d spec mutants caught", caught, len(program.Mutants)+len(muts))
	return nil
}

func firstViolation[S comparable](res *model.Result[S]) string {
	if res.OK() {
		return ""
	}
	return res.Violations[0].Name
}

// pct is "n/m (p%)".
func pct(n, m int) string {
	if m == 0 {
		return fmt.Sprintf("%d/%d", n, m)
	}
	return fmt.Sprintf("%d/%d (%.0f%%)", n, m, 100*float64(n)/float64(m))
}
