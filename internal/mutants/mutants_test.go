package mutants_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/tracecheck/tracecheck/internal/mutants"
	"github.com/tracecheck/tracecheck/mutate"
)

const root = "../.."

// Every named mutant still applies to the code (its text occurs exactly
// once), names tests to run, and has a unique name.
func TestNamedApply(t *testing.T) {
	seen := map[string]bool{}
	for _, m := range mutants.Named() {
		if seen[m.Name] {
			t.Errorf("%s named twice", m.Name)
		}
		seen[m.Name] = true
		if len(m.Tests) == 0 {
			t.Errorf("%s names no test to kill it", m.Name)
		}
		if _, err := m.Apply(root, t.TempDir()); err != nil {
			t.Errorf("%s: %v", m.Name, err)
		}
	}
}

// A short campaign: one named mutant runs through the overlay and is
// killed by the test expected to (`make mutants` runs them all).
func TestShortCampaign(t *testing.T) {
	for _, m := range mutants.Named() {
		if m.Name != "publisher/ignore-verify-command-status" {
			continue
		}
		abs, _ := filepath.Abs(root)
		r := mutate.Run(context.Background(), m, mutate.Options{Root: abs})
		if r.Error != "" || !r.Killed || r.Detector != "harness/pubcheck.TestRealRuns/badckpt_consumer_fails_the_verify_command" {
			t.Fatalf("%+v", r)
		}
		return
	}
	t.Fatal("the mutant of the short campaign is gone")
}
