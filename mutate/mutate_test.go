package mutate_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracecheck/tracecheck/mutate"
)

// module writes a small module: a function and a test that pins it.
func module(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"go.mod": "module example.com/m\n\ngo 1.26\n",
		"m.go": `package m

// Max returns the larger of a and b.
func Max(a, b int) int {
	if a > b {
		return a
	}
	return b
}
`,
		"m_test.go": `package m

import "testing"

func TestMax(t *testing.T) {
	t.Run("first", func(t *testing.T) {
		if Max(2, 1) != 2 {
			t.Fatal("Max(2, 1)")
		}
	})
}

func TestOther(t *testing.T) {}
`,
		// A gate: a command that exits 1, saying FAIL, when Max is wrong.
		"cmd/gate/main.go": `package main

import (
	"fmt"
	"os"

	"example.com/m"
)

func main() {
	if m.Max(2, 1) != 2 {
		fmt.Println("stage max FAIL: Max(2, 1) is not 2")
		os.Exit(1)
	}
	fmt.Println("PASS")
}
`,
	}
	for name, body := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A mutant is killed by the test that fails, by the build if it does not
// compile, by the timeout if it deadlocks, or survives; one that does not
// apply is refused; the checkout is never edited.
func TestRun(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP in -short: runs go test on a scratch module")
	}
	root := module(t)
	orig, _ := os.ReadFile(filepath.Join(root, "m.go"))
	tests := []mutate.Test{{Package: "./..."}}
	for _, c := range []struct {
		name     string
		old, new string
		timeout  time.Duration
		killed   bool
		detector string
		err      error
	}{
		{"negated condition", "if a > b {", "if a < b {", 0, true, "example.com/m.TestMax/first", nil},
		{"equivalent", "if a > b {", "if a >= b {", 0, false, "", nil},
		{"does not compile", "return b\n", "return\n", 0, true, "build", nil},
		{"deadlock", "if a > b {", "for {\n\t}\n\tif a > b {", 13 * time.Second, true, "timeout", nil},
		{"does not apply", "if a != b {", "", 0, false, "", mutate.ErrNotApplicable},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := mutate.Mutant{Name: "m/" + strings.ReplaceAll(c.name, " ", "-"), File: "m.go", Old: c.old, New: c.new, Tests: tests}
			r := mutate.Run(context.Background(), m, mutate.Options{Root: root, Timeout: c.timeout})
			if c.err != nil {
				if !strings.Contains(r.Error, "does not apply") {
					t.Fatalf("Error %q, want %v", r.Error, c.err)
				}
				if _, err := m.Apply(root, t.TempDir()); !errors.Is(err, c.err) {
					t.Fatalf("Apply = %v, want %v", err, c.err)
				}
				return
			}
			if r.Error != "" || r.Killed != c.killed || r.Detector != c.detector {
				t.Fatalf("Run = %+v, want killed %v by %q", r, c.killed, c.detector)
			}
			if r.Duration <= 0 {
				t.Errorf("Duration %v", r.Duration)
			}
		})
	}
	if now, _ := os.ReadFile(filepath.Join(root, "m.go")); string(now) != string(orig) {
		t.Fatal("the checkout was edited")
	}
}

// A command is a detector too: the mutant is built into it, and a
// non-zero exit kills the mutant, named by the line that says FAIL.
func TestRunCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP in -short: builds a scratch module")
	}
	root := module(t)
	gate := []mutate.Test{{Package: "./cmd/gate", Command: []string{"--quick"}}}
	for _, c := range []struct {
		name, old, new, detector string
		killed                   bool
	}{
		{"caught", "if a > b {", "if a < b {", "gate --quick: stage max FAIL: Max(2, 1) is not 2", true},
		{"survives", "if a > b {", "if a >= b {", "", false},
		{"does not compile", "return b\n", "return\n", "build", true},
	} {
		t.Run(c.name, func(t *testing.T) {
			m := mutate.Mutant{Name: "m/" + strings.ReplaceAll(c.name, " ", "-"), File: "m.go", Old: c.old, New: c.new, Tests: gate}
			r := mutate.Run(context.Background(), m, mutate.Options{Root: root})
			if r.Error != "" || r.Killed != c.killed || r.Detector != c.detector {
				t.Fatalf("Run = %+v, want killed %v by %q", r, c.killed, c.detector)
			}
		})
	}
}
