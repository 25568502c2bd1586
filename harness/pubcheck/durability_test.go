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
		name    string
		program string
		outcome checkpoint.Phase
	}{
		{"published", "good", checkpoint.PhasePublished},
		{"program fails", "fail", checkpoint.PhaseFailed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// A publish directory that has had runs before: its own
			// directories exist, durably, as the model assumes of what is
			// there when it starts (see the report's first-run gap).
			base := t.TempDir()
			pub := filepath.Join(base, "pub")
			if err := os.MkdirAll(filepath.Join(pub, checkpoint.MetaDir, "runs"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Join(pub, checkpoint.MetaDir, "staging"), 0o755); err != nil {
				t.Fatal(err)
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
