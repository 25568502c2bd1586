package cli_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var updateGolden = flag.Bool("update-check-golden", false, "rewrite testdata/check/*.txt from the current output")

// TestCheckGolden keeps the human reports of the hand-written corpus as
// golden files, so a change to a report shows up in review. Regenerate on
// purpose with: go test ./cmd/tracecheck -run TestCheckGolden -update-check-golden
func TestCheckGolden(t *testing.T) {
	paths, err := filepath.Glob(corpusDir + "*/*.ndjson")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no corpus: %v", err)
	}
	for _, p := range paths {
		rel := strings.TrimPrefix(filepath.ToSlash(p), corpusDir)
		golden := filepath.Join("testdata", "check", strings.ReplaceAll(strings.TrimSuffix(rel, ".ndjson"), "/", "-")+".txt")
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
			if os.IsNotExist(err) {
				t.Skipf("no golden report %s yet (write it with -update-check-golden)", golden)
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("report differs from %s (regenerate on purpose with -update-check-golden):\ngot:\n%s\nwant:\n%s", golden, got, want)
			}
		})
	}
}
