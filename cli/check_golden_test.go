package cli_test

import (
	"errors"
	"flag"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update-check-golden", false, "rewrite testdata/check/*.txt from the current output")

// regenerateGolden is how the golden reports are written, on purpose.
const regenerateGolden = "go test ./cli -run TestCheckGolden -update-check-golden"

// TestCheckGolden keeps the human reports of the hand-written corpus
// (traces/*/*.ndjson) as golden files in testdata/check/, so that a change
// to a report shows up in review. A trace without its golden report fails,
// and so does a golden report without its trace. Write or regenerate them
// on purpose, then review the diff: go test ./cli -run TestCheckGolden -update-check-golden
func TestCheckGolden(t *testing.T) {
	paths, err := filepath.Glob(corpusDir + "*/*.ndjson")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	goldens := map[string]bool{}
	for _, p := range paths {
		rel := strings.TrimPrefix(filepath.ToSlash(p), corpusDir)
		golden := filepath.Join("testdata", "check", strings.ReplaceAll(strings.TrimSuffix(rel, ".ndjson"), "/", "-")+".txt")
		goldens[golden] = true
		t.Run(rel, func(t *testing.T) {
			out, errs, code := runCLI(t, "check", p)
			got := out + errs + "exit " + string(rune('0'+code)) + "\n"
			if *updateGolden {
				if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("the corpus trace %s has no golden report %s: write it with `%s`, review it, and commit it with the trace", p, golden, regenerateGolden)
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("report differs from %s (regenerate on purpose with `%s`):\ngot:\n%s\nwant:\n%s", golden, regenerateGolden, got, want)
			}
		})
	}
	// A golden report outliving its trace (renamed or deleted) would be
	// checked against nothing.
	all, err := filepath.Glob(filepath.Join("testdata", "check", "*.txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range all {
		if !goldens[g] {
			t.Errorf("golden report %s has no trace in %s: delete it, or restore its trace", g, corpusDir)
		}
	}
}
