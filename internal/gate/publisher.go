package gate

import "context"

// publisherStage runs the checkpoint publisher on real Python (to be
// written).
func publisherStage(ctx context.Context, r *run, s *stage) error {
	s.Verdict = Skip
	s.figure("not yet written")
	return nil
}
