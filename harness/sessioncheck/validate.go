package sessioncheck

import (
	"context"
	"io"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/model"
	msession "github.com/tracecheck/tracecheck/model/session"
)

// Spec returns the model the session implementation is checked against:
// spec/session.fizz, or with mutant set its M4 mutant (no compaction
// teardown).
func Spec(mutant bool) *model.Spec[msession.State] {
	return msession.Spec(msession.Options{NoCompactionTeardown: mutant})
}

// Check validates the session trace read from r against spec/session.fizz
// (or, with mutant set, its M4 mutant). See check.Check.
func Check(ctx context.Context, r io.Reader, name string, mutant bool) (*check.Report, error) {
	return check.Check(ctx, Spec(mutant), r, name, check.Options{})
}
