package trace_test

import (
	"os"
	"path/filepath"
	"testing"
)

// corpusFiles returns the contents of the traces/ corpus, as fuzz seeds.
func corpusFiles(tb testing.TB) [][]byte {
	tb.Helper()
	paths, err := filepath.Glob("../traces/*/*.ndjson")
	if err != nil {
		tb.Fatal(err)
	}
	more, _ := filepath.Glob("../traces/*/*/*.ndjson")
	var out [][]byte
	for _, p := range append(paths, more...) {
		b, err := os.ReadFile(p)
		if err != nil {
			tb.Fatal(err)
		}
		out = append(out, b)
	}
	if len(out) == 0 {
		tb.Fatal("no corpus under ../traces")
	}
	return out
}
