package mutate_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/mutate"
)

// fixture is the test subject module: a little code for every operator.
const fixture = "testdata/fixture"

// Every operator makes its mutants of the fixture, named by position, each
// applying exactly once and changing exactly the line it names; the one
// that does not type-check (a dropped call leaving a variable unused) is
// dropped before anything runs.
func TestGenerate(t *testing.T) {
	ms, st, err := mutate.Generate(fixture, ".")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct{ name, old, new string }{
		{"op/fixture.go:13:7/boundary", "\tif x < lo {", "\tif x <= lo {"},
		{"op/fixture.go:16:7/boundary", "\tif x > hi {", "\tif x >= hi {"},
		{"op/fixture.go:25:16/boundary", "\tfor i := 0; i < len(xs); i++ {", "\tfor i := 0; i <= len(xs); i++ {"},
		{"op/fixture.go:25:28/incdec", "\tfor i := 0; i < len(xs); i++ {", "\tfor i := 0; i < len(xs); i-- {"},
		{"op/fixture.go:26:12/cond-negate", "\t\tif xs[i] == -1 {", "\t\tif xs[i] != -1 {"},
		{"op/fixture.go:29:9/arith", "\t\ttotal += xs[i]", "\t\ttotal -= xs[i]"},
		{"op/fixture.go:43:2/call-drop", "\tc.mu.Lock()", "\t"},
		{"op/fixture.go:44:2/defer-drop", "\tdefer c.mu.Unlock()", "\t"},
		{"op/fixture.go:45:12/arith", "\tc.n = c.n + d", "\tc.n = c.n - d"},
		{"op/fixture.go:52:5/err-check", "\tif err != nil {", "\tif false {"},
		{"op/fixture.go:52:9/cond-negate", "\tif err != nil {", "\tif err == nil {"},
		{"op/fixture.go:60:2/call-drop", "\tc.finish()", "\t"},
		{"op/fixture.go:61:5/if-negate", "\tif !c.done {", "\tif !(!c.done) {"},
		{"op/fixture.go:62:3/call-drop", "\t\tpanic(\"not done\")", "\t\t"},
		{"op/fixture.go:70:3/incdec", "\tn--", "\tn++"},
		{"op/fixture.go:77:3/incdec", "\tn--", "\tn++"},
		{"op/fixture.go:90:9/boundary", "\tcase x < 0:", "\tcase x <= 0:"},
		{"op/fixture.go:92:9/cond-negate", "\tcase x == 0:", "\tcase x != 0:"},
	}
	if st.Candidates != len(want)+1 || st.Dropped != 1 {
		t.Errorf("stats %+v, want %d candidates, 1 dropped (println(s) in Dropped)", st, len(want)+1)
	}
	if len(ms) != len(want) {
		var names []string
		for _, m := range ms {
			names = append(names, m.Name)
		}
		t.Fatalf("%d mutants, want %d:\n%s", len(ms), len(want), strings.Join(names, "\n"))
	}
	orig, err := os.ReadFile(filepath.Join(fixture, "fixture.go"))
	if err != nil {
		t.Fatal(err)
	}
	origLines := strings.Split(string(orig), "\n")
	ops := map[string]bool{}
	for i, w := range want {
		t.Run(w.name, func(t *testing.T) {
			m := ms[i]
			if m.Name != w.name || m.File != "fixture.go" || m.Package != "." {
				t.Fatalf("mutant %d: %s in %s (package %s), want %s in fixture.go", i, m.Name, m.File, m.Package, w.name)
			}
			ops[m.Operator] = true
			// A case expression is in no coverage block: its switch is.
			if wantCover := strings.HasPrefix(w.old, "\tcase "); wantCover != (m.CoverLine == 89 && m.CoverCol == 2) {
				t.Errorf("coverage looked up at %d:%d", m.CoverLine, m.CoverCol)
			}
			if strings.Count(string(orig), m.Old) != 1 || !strings.Contains(m.Old, w.old+"\n") {
				t.Errorf("Old %q does not occur once or lacks %q", m.Old, w.old)
			}
			dir := t.TempDir()
			overlay, err := m.Apply(fixture, dir)
			if err != nil {
				t.Fatalf("Apply: %v", err)
			}
			if _, err := os.Stat(overlay); err != nil {
				t.Fatal(err)
			}
			matches, _ := filepath.Glob(filepath.Join(dir, "*fixture.go"))
			if len(matches) != 1 {
				t.Fatalf("mutated files %v", matches)
			}
			got, _ := os.ReadFile(matches[0])
			lines := strings.Split(string(got), "\n")
			if len(lines) != len(origLines) {
				t.Fatalf("%d lines, want %d", len(lines), len(origLines))
			}
			for n := range lines {
				switch {
				case n+1 == m.Line:
					if origLines[n] != w.old || lines[n] != w.new {
						t.Errorf("line %d: %q → %q, want %q → %q", n+1, origLines[n], lines[n], w.old, w.new)
					}
				case lines[n] != origLines[n]:
					t.Errorf("line %d changed too: %q → %q", n+1, origLines[n], lines[n])
				}
			}
		})
	}
	for _, op := range mutate.Operators {
		if op == mutate.OpBranchSwap {
			continue // the fixture has no else: TestBranchSwapAndLocks
		}
		if !ops[op] {
			t.Errorf("operator %s made no mutant", op)
		}
	}
}
