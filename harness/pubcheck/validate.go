package pubcheck

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/impl/checkpoint"
	"github.com/tracecheck/tracecheck/model/program"
)

// CheckJournal validates a publisher journal against model/program
// (spec/Program.tla) with check.
func CheckJournal(ctx context.Context, path string) (*check.Report, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return check.Check(ctx, program.Spec(), f, path, check.Options{})
}

// Coverage reports which of Program's transitions the reports exercised.
func Coverage(ctx context.Context, reports ...*check.Report) (*check.Coverage, error) {
	return check.CoverageOf(ctx, program.Spec(), reports...)
}

// ErrDisagree reports a publish directory or journal that disagrees with
// the run's final state.
var ErrDisagree = errors.New("publish directory disagrees with the run")

// Agrees checks that the publish directory, the staging directory and the
// journal agree with res: a Published run's checkpoint is at
// publishDir/name, names the run and verifies; any other run left no
// checkpoint of its own there and no staging directory; the journal holds
// the run's transitions (a prefix of them if a receipt failed) and, if
// complete, ends in the outcome.
func Agrees(ctx context.Context, res *checkpoint.Result, publishDir, name string) error {
	target := filepath.Join(publishDir, name)
	m, merr := checkpoint.ReadManifest(checkpoint.OSFS{}, target)
	ours := merr == nil && m.Run == res.RunID
	switch res.Outcome {
	case checkpoint.PhasePublished:
		if !ours {
			return fmt.Errorf("%w: outcome Published but %s is not run %s's checkpoint (%v)", ErrDisagree, target, res.RunID, merr)
		}
		if _, err := checkpoint.Verify(ctx, checkpoint.OSFS{}, target, nil); err != nil {
			return fmt.Errorf("%w: published checkpoint does not verify: %w", ErrDisagree, err)
		}
		if res.Checkpoint != target {
			return fmt.Errorf("%w: Result.Checkpoint %q, want %q", ErrDisagree, res.Checkpoint, target)
		}
	case checkpoint.PhaseFailed, checkpoint.PhaseInterrupted:
		if ours {
			return fmt.Errorf("%w: outcome %s but %s holds the run's checkpoint", ErrDisagree, res.Outcome, target)
		}
		if res.Checkpoint != "" {
			return fmt.Errorf("%w: outcome %s with Result.Checkpoint %q", ErrDisagree, res.Outcome, res.Checkpoint)
		}
	default:
		return fmt.Errorf("%w: outcome %s is not terminal", ErrDisagree, res.Outcome)
	}
	if res.Outcome == checkpoint.PhasePublished || res.StagingRemoved {
		if _, err := os.Lstat(res.Staging); !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("%w: staging directory %s still exists (%v)", ErrDisagree, res.Staging, err)
		}
	}
	f, err := os.Open(res.Journal)
	if err != nil {
		return err
	}
	defer f.Close()
	s, err := checkpoint.ReadJournal(f)
	if err != nil {
		return err
	}
	got := make([]string, 0, len(s.Events))
	for _, e := range s.Events[min(1, len(s.Events)):] {
		got = append(got, e.Action)
	}
	if res.JournalErr == nil {
		if !slices.Equal(got, res.Actions) {
			return fmt.Errorf("%w: journal actions %v, run took %v", ErrDisagree, got, res.Actions)
		}
		if s.Last != res.Outcome.String() {
			return fmt.Errorf("%w: journal ends in %s, outcome %s", ErrDisagree, s.Last, res.Outcome)
		}
	} else if len(got) > len(res.Actions) || !slices.Equal(got, res.Actions[:len(got)]) {
		return fmt.Errorf("%w: journal actions %v are not a prefix of %v", ErrDisagree, got, res.Actions)
	}
	return nil
}
