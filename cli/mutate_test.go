package cli_test

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/cli"
	"github.com/tracecheck/tracecheck/mutate"
)

// scratch writes a module with a function, its test, and a gate command.
func scratch(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{
		"go.mod":    "module example.com/m\n\ngo 1.26\n",
		"m.go":      "package m\n\n// Max returns the larger of a and b.\nfunc Max(a, b int) int {\n\tif a > b {\n\t\treturn a\n\t}\n\treturn b\n}\n",
		"m_test.go": "package m\n\nimport \"testing\"\n\nfunc TestMax(t *testing.T) {\n\tif Max(2, 1) != 2 || Max(1, 2) != 2 {\n\t\tt.Fatal(\"Max\")\n\t}\n}\n",
		"cmd/gate/main.go": "package main\n\nimport (\n\t\"fmt\"\n\t\"os\"\n\n\t\"example.com/m\"\n)\n\n" +
			"func main() {\n\tif fi, err := os.Stat(os.Args[2]); err != nil || !fi.IsDir() {\n\t\tfmt.Println(\"no run dir\")\n\t\tos.Exit(2)\n\t}\n" +
			"\tif m.Max(2, 1) != 2 {\n\t\tfmt.Println(\"stage max FAIL\")\n\t\tos.Exit(1)\n\t}\n}\n",
	} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// A team's own binary runs its own mutants with cli.MutateCommand: the kill
// matrix names what killed each, a survivor fails the command, and --gate
// builds the team's gate with each mutant ("{dir}" a fresh directory).
func TestMutateCommand(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP in -short: runs go test and go build on a scratch module")
	}
	root := scratch(t)
	cmd := cli.MutateCommand(cli.MutateConfig{
		Mutants: []mutate.Mutant{
			{Name: "max/negated", Doc: "a < b", File: "m.go", Old: "if a > b {", New: "if a < b {", Tests: []mutate.Test{{Package: "./..."}}},
			{Name: "max/equivalent", Doc: "a >= b", File: "m.go", Old: "if a > b {", New: "if a >= b {", Tests: []mutate.Test{{Package: "./..."}}},
		},
		Gate: &mutate.Test{Package: "./cmd/gate", Command: []string{"--dir", "{dir}"}},
		What: "the team's",
	})
	cfg := cli.Config{Commands: []cli.Command{cmd}}
	run := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := cli.Run(cfg, args, &out, &errb)
		return out.String(), errb.String(), code
	}
	cache := t.TempDir()
	out, errs, code := run("mutate", "--root", root, "--cache", cache)
	if code != cli.ExitViolation || !strings.Contains(out, "example.com/m.TestMax") || !strings.Contains(out, "SURVIVED") ||
		!strings.Contains(out, "2 mutants: 1 killed, 1 survived") {
		t.Fatalf("mutate: exit %d\n%s\n%s", code, out, errs)
	}
	out, errs, code = run("mutate", "--gate", "--root", root, "max/negated")
	if code != cli.ExitOK || !strings.Contains(out, "gate --dir: stage max FAIL") {
		t.Fatalf("mutate --gate: exit %d\n%s\n%s", code, out, errs)
	}
	if out, _, code := run("mutate", "--list", "max/*"); code != cli.ExitOK || !strings.Contains(out, "-\tif a > b {") && !strings.Contains(out, "-if a > b {") {
		t.Fatalf("--list: exit %d\n%s", code, out)
	}
	if _, errs, code := run("mutate", "nothing/*"); code != cli.ExitUsage || !strings.Contains(errs, "no mutant matches") {
		t.Fatalf("unknown pattern: exit %d %s", code, errs)
	}
	noGate := cli.Config{Commands: []cli.Command{cli.MutateCommand(cli.MutateConfig{Mutants: []mutate.Mutant{{Name: "x"}}})}}
	var errb bytes.Buffer
	if code := cli.Run(noGate, []string{"mutate", "--gate"}, &bytes.Buffer{}, &errb); code != cli.ExitUsage || !strings.Contains(errb.String(), "no gate") {
		t.Fatalf("--gate without a gate: exit %d %s", code, errb.String())
	}
}

// --operators generates the fixture's operator mutants and runs each
// against the tests covering it: the matrix goes to JSON and Markdown, the
// score is printed, --min-score decides the exit, equivalents leave the
// score, and --merge puts --shard runs back together.
func TestMutateOperators(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP in -short: runs go test on the mutate fixture module")
	}
	root := filepath.Join("..", "mutate", "testdata", "fixture")
	cfg := cli.Config{Commands: []cli.Command{cli.MutateCommand(cli.MutateConfig{})}}
	run := func(args ...string) (string, string, int) {
		var out, errb bytes.Buffer
		code := cli.Run(cfg, append([]string{"mutate"}, args...), &out, &errb)
		return out.String(), errb.String(), code
	}
	dir := t.TempDir()
	cache := filepath.Join(dir, "cache")
	common := []string{"--operators", "--root", root, "--cache", cache, "-j", "2"}
	js, md := filepath.Join(dir, "m.json"), filepath.Join(dir, "m.md")
	out, errs, code := run(append(common, "--json-file", js, "--markdown", md, "--title", "Fixture", ".")...)
	if code != cli.ExitViolation || !strings.Contains(out, "18 mutants: 13 killed, 2 survived, 3 not covered, 0 equivalent") ||
		!strings.Contains(out, "mutation score 72.2%") || !strings.Contains(out, "NOT COVERED") ||
		!strings.Contains(errs, "18/18 done") || !strings.Contains(errs, "18 operator mutants of . (19 candidates, 1 dropped") {
		t.Fatalf("mutate --operators: exit %d\n%s\n%s", code, out, errs)
	}
	whole, err := mutate.ReadMatrix(js)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(md); !strings.Contains(string(b), "# Fixture") || !strings.Contains(string(b), "| op/fixture.go:52:5/err-check |") {
		t.Fatalf("markdown:\n%s", b)
	}
	// --json prints the same matrix on stdout instead of the table (from
	// the cache: nothing reruns).
	if out, errs, code := run(append(common, "--json", ".")...); code != cli.ExitViolation {
		t.Errorf("--json: exit %d\n%s", code, errs)
	} else if m := new(mutate.Matrix); json.Unmarshal([]byte(out), m) != nil || len(m.Results) != len(whole.Results) {
		t.Errorf("--json printed no matrix of %d results:\n%.300s", len(whole.Results), out)
	}
	if _, _, code := run(append(common, "--min-score", "0.6", ".")...); code != cli.ExitOK {
		t.Errorf("--min-score 0.6 with a score of 0.72: exit %d", code)
	}
	eq := filepath.Join(dir, "equivalents")
	os.WriteFile(eq, []byte("op/fixture.go:13:7/boundary x == lo returns lo\nop/fixture.go:16:7/boundary x == hi returns hi\n"), 0o644)
	if out, errs, code := run(append(common, "--equivalents", eq, ".")...); code != cli.ExitViolation ||
		!strings.Contains(out, "2 equivalent") || !strings.Contains(out, "EQUIVALENT: x == lo returns lo") || !strings.Contains(out, "mutation score 81.2%") {
		t.Errorf("--equivalents: exit %d\n%s\n%s", code, out, errs)
	}
	var shards []string
	for _, s := range []string{"1/2", "2/2"} {
		f := filepath.Join(dir, "shard"+s[:1]+".json")
		if _, errs, code := run(append(common, "--shard", s, "--json-file", f, ".")...); code == cli.ExitUsage || code == cli.ExitInput {
			t.Fatalf("--shard %s: exit %d\n%s", s, code, errs)
		}
		shards = append(shards, f)
	}
	merged := filepath.Join(dir, "merged.json")
	if out, errs, code := run(append([]string{"--merge", "--json-file", merged}, shards...)...); code != cli.ExitViolation || !strings.Contains(out, "18 mutants: 13 killed") {
		t.Fatalf("--merge: exit %d\n%s\n%s", code, out, errs)
	}
	m, err := mutate.ReadMatrix(merged)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Results) != len(whole.Results) {
		t.Fatalf("merged %d results, want %d", len(m.Results), len(whole.Results))
	}
	for i, r := range m.Results {
		w := whole.Results[i]
		if r.Mutant != w.Mutant || r.Status != w.Status || r.Detector != w.Detector {
			t.Errorf("merged %d: %s %s %s, want %s %s %s", i, r.Mutant, r.Status, r.Detector, w.Mutant, w.Status, w.Detector)
		}
	}
	for _, bad := range [][]string{{"--operators"}, {"--merge"}, {"--operators", "--shard", "3/2", "."}} {
		if _, _, code := run(append([]string{"--root", root}, bad...)...); code != cli.ExitUsage {
			t.Errorf("%v: exit %d, want usage", bad, code)
		}
	}
}
