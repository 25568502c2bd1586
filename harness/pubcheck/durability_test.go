package pubcheck_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracecheck/tracecheck/harness/pubcheck"
	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

// TestDurability runs the publisher on a filesystem that records every
// create, write, fsync, rename and directory fsync, and checks what a
// power cut before each of them could leave on disk (POSIX: unsynced file
// contents and unsynced directory entries may be lost), and what recovery
// makes of it: a crash at every filesystem operation of the run, in order,
// each once.
func TestDurability(t *testing.T) {
	for _, tc := range []struct {
		name     string
		program  string
		outcome  checkpoint.Phase
		firstRun bool
	}{
		{"published", "good", checkpoint.PhasePublished, false},
		{"program fails", "fail", checkpoint.PhaseFailed, false},
		{"first run published", "good", checkpoint.PhasePublished, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// The publish directory exists, durably, as the model assumes
			// of what is there when it starts: on a first run, empty; else
			// with the publisher's own directories.
			base := t.TempDir()
			pub := filepath.Join(base, "pub")
			dirs := []string{filepath.Join(pub, checkpoint.MetaDir, "runs"), filepath.Join(pub, checkpoint.MetaDir, "staging")}
			if tc.firstRun {
				dirs = []string{pub}
			}
			for _, d := range dirs {
				if err := os.MkdirAll(d, 0o755); err != nil {
					t.Fatal(err)
				}
			}
			dfs, err := pubcheck.NewDurableFS(base)
			if err != nil {
				t.Fatal(err)
			}
			res, err := checkpoint.Publish(context.Background(), checkpoint.Config{PublishDir: pub, Name: "model",
				Command: []string{"true", tc.program}, Runner: fakeRunner(), SkipRecovery: true, FS: dfs})
			if err != nil {
				t.Fatal(err)
			}
			if res.Outcome != tc.outcome {
				t.Fatalf("outcome %s, want %s: %v", res.Outcome, tc.outcome, res.Err)
			}
			if len(res.Warnings) > 0 { // they would excuse a checkpoint lost to a power cut
				t.Errorf("warnings: %q", res.Warnings)
			}
			cuts, err := dfs.End()
			if err != nil {
				t.Fatal(err)
			}
			errs := pubcheck.CheckDurability(context.Background(), dfs, cuts, pubcheck.DurabilityRun{
				Result: res, PublishDir: pub, Name: "model", Scratch: t.TempDir()})
			for _, e := range errs {
				t.Error(e)
			}
			t.Logf("%d operations, %d distinct cuts, 3 views each", dfs.Ops(), len(cuts))
		})
	}
}
