package session_test

import (
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestImportBoundary enforces that impl/session never reaches model/: the
// implementation is checked against the model, so it must not be derived
// from it. It follows every in-module import transitively (test files
// included) and allows only the trace package and this package's own.
func TestImportBoundary(t *testing.T) {
	const mod = "github.com/tracecheck/tracecheck/"
	allowed := map[string]bool{"trace": true, "impl/session": true, "impl/session/sessiontest": true}
	seen := map[string]bool{}
	queue := []string{"impl/session"}
	for len(queue) > 0 {
		dir := queue[0]
		queue = queue[1:]
		if seen[dir] {
			continue
		}
		seen[dir] = true
		files, err := filepath.Glob(filepath.Join("..", "..", dir, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("%s: no Go files (%v)", dir, err)
		}
		for _, f := range files {
			af, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatal(err)
			}
			for _, imp := range af.Imports {
				path, _ := strconv.Unquote(imp.Path.Value)
				rel, ok := strings.CutPrefix(path, mod)
				if !ok {
					continue
				}
				if !allowed[rel] {
					t.Errorf("%s imports %s: impl/session may use only %v of this module", f, path, allowed)
					continue
				}
				queue = append(queue, rel)
			}
		}
	}
}
