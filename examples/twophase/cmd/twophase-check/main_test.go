package main_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// The example's own binary, built from the library entry point, checks the
// example's traces: against the transcription, and against TLC's graph.
func TestBinary(t *testing.T) {
	bin := build(t)
	for _, c := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"explore", "twophase"}, 0, "288 distinct states found, 994 transitions"},
		{[]string{"check", "../../testdata/commit-ok.ndjson"}, 0, "VALID (model twophase"},
		{[]string{"check", "../../testdata/commit-early-bad.ndjson"}, 1, "guard tmPrepared = RM is false"},
		{[]string{"check", "--graph", "../../formal/tlc/states.dot", "../../testdata/commit-ok.ndjson"}, 0, "VALID (model graph:states.dot"},
		{[]string{"check", "--graph", "../../formal/tlc/states.dot", "../../testdata/commit-early-bad.ndjson"}, 1, "no TMCommit edge leaves this state in the TLC graph"},
		{[]string{"check", "../../testdata/commit-args-ok.ndjson"}, 0, "VALID (model twophase"},
		{[]string{"check", "../../testdata/prepare-wrong-args-bad.ndjson"}, 1, `action RMPrepare("r2"): no RMPrepare("r2") successor has the event's state, the successor after RMPrepare("r1") has it`},
		{[]string{"check", "--graph", "../../formal/tlc/states.dot", "../../testdata/commit-args-ok.ndjson"}, 0, "VALID (model graph:states.dot"},
		{[]string{"check", "--graph", "../../formal/tlc/states.dot", "../../testdata/prepare-wrong-args-bad.ndjson"}, 1, `action RMPrepare("r2"): no RMPrepare("r2") successor has the event's state, the successor after RMPrepare("r1") has it`},
		{[]string{"replay", "../../testdata/commit-args-ok.ndjson"}, 0, `t3  seq 2  RMPrepare("r3")`},
		{[]string{"replay", "--json", "../../testdata/commit-args-ok.ndjson"}, 0, `"seq":2,"action":"RMPrepare","args":["\"r3\""],"states"`},
		{[]string{"mutate", "--root", "../.."}, 0, "1 mutants: 1 killed, 0 survived"},
	} {
		out, code := runBin(t, bin, "", c.args...)
		if code != c.code || !strings.Contains(out, c.want) {
			t.Errorf("%v: exit %d (want %d), output lacks %q:\n%s", c.args, code, c.code, c.want, out)
		}
	}
}

// build builds the binary into a temporary directory.
func build(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "twophase-check")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// runBin runs the binary in dir ("": here) and returns its combined
// output and exit code.
func runBin(t *testing.T, bin, dir string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if e, ok := err.(*exec.ExitError); ok {
		return string(out), e.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return string(out), 0
}

// The team's gate passes on the committed tree, every stage run (the
// mutants stage with --mutants only), and its JSON summary says so.
func TestVerify(t *testing.T) {
	bin := build(t)
	out, code := runBin(t, bin, "", "verify", "--root", "../..", "--dir", t.TempDir())
	if code != 0 {
		t.Fatalf("verify: exit %d:\n%s", code, out)
	}
	for _, want := range []string{
		"explore      PASS", "twophase: 288 states, 994 transitions",
		"conformance  PASS", "twophase: 288 states, 994 edges equal to TLC's",
		"commands     PASS", "2/2 steps passed",
		"traces       PASS", "examples: 2/2 files valid", "known-bad: 2/2 files violation", "tpc: 1/1 files valid (300 instances",
		"twophase: 7/7 actions",
		"mutants      SKIP", "verify: PASS",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("verify's output lacks %q:\n%s", want, out)
		}
	}
	dir := t.TempDir()
	out, code = runBin(t, bin, "", "verify", "--json", "--quick", "--root", "../..", "--dir", dir)
	if code != 0 {
		t.Fatalf("verify --json: exit %d:\n%s", code, out)
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sum struct {
		Verdict string
		Stages  []struct{ Name, Verdict string }
		// Coverage is [exercised, counted].
		Coverage map[string][2]int
	}
	if err := json.Unmarshal(b, &sum); err != nil {
		t.Fatalf("summary.json: %v\n%s", err, b)
	}
	cov := sum.Coverage["twophase"]
	if sum.Verdict != "PASS" || len(sum.Stages) != 5 || cov[1] != 966 || 25*cov[0] < cov[1] {
		t.Errorf("summary: %+v", sum)
	}
	if !strings.Contains(out, `"verdict": "PASS"`) {
		t.Errorf("--json prints no summary:\n%s", out)
	}
	// the code mutant, killed by the tpc tests through package mutate
	out, code = runBin(t, bin, "", "verify", "--mutants", "--stages", "mutants", "--root", "../..", "--dir", t.TempDir())
	if code != 0 || !strings.Contains(out, "mutants      PASS") || !strings.Contains(out, "1/1 code mutants killed") {
		t.Errorf("verify --mutants: exit %d:\n%s", code, out)
	}
	// the gate is a gate: built with the code mutant, its transactions
	// commit on a majority and their traces fail the traces stage
	out, code = runBin(t, bin, "", "mutate", "--gate", "--root", "../..")
	if code != 0 || !strings.Contains(out, "1 killed") || !regexp.MustCompile(`traces\s+FAIL`).MatchString(out) {
		t.Errorf("mutate --gate: exit %d:\n%s", code, out)
	}
}

// copyModule copies the example module into a temporary directory, its
// replace directive pointing at this repository, and returns the copy.
func copyModule(t *testing.T) string {
	t.Helper()
	src, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	dst := t.TempDir()
	err = filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if rel == "go.mod" {
			b = regexp.MustCompile(`=> \.\./\.\.`).ReplaceAll(b, []byte("=> "+filepath.Dir(filepath.Dir(src))))
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// edit rewrites a file of the copy.
func edit(t *testing.T, path string, f func(string) string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	after := f(string(b))
	if after == string(b) {
		t.Fatalf("%s: the edit changed nothing", path)
	}
	if err := os.WriteFile(path, []byte(after), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The gate fails, exit 1, naming the stage and what to run, when a trace
// of the tree is broken, when the retained TLC graph disagrees with the
// transcription (one edge removed, the manifest updated as if TLC had
// written it), when that graph changed behind its manifest's back
// (stale), and when it is missing.
func TestVerifyFails(t *testing.T) {
	bin := build(t)
	// the first RMPrepare of t1's state now says TMCommit: its TM commits
	// before anyone prepared.
	brokenTrace := func(root string) {
		edit(t, filepath.Join(root, "testdata", "commit-ok.ndjson"), func(s string) string {
			return strings.Replace(s, `"seq":1,"action":"RMPrepare"`, `"seq":1,"action":"TMCommit"`, 1)
		})
	}
	dropEdge := func(root string) string {
		dot := filepath.Join(root, "formal", "tlc", "states.dot")
		var removed string
		edit(t, dot, func(s string) string {
			lines := strings.Split(s, "\n")
			for i, l := range lines {
				if strings.Contains(l, " -> ") && strings.Contains(l, "TMCommit") {
					removed = l
					return strings.Join(append(lines[:i:i], lines[i+1:]...), "\n")
				}
			}
			return s
		})
		return removed
	}
	for _, c := range []struct {
		name   string
		break_ func(root string)
		args   []string
		want   []string
	}{
		{"broken trace", brokenTrace, nil, []string{
			"traces       FAIL", "FAIL traces: trace set examples: ", "commit-ok.ndjson is violation, want valid",
			"reproduce: twophase-check check --model twophase ", "reproduce: twophase-check replay --model twophase --instance t1",
			"conformance  PASS", "commands     PASS"}},
		{"graph differs", func(root string) {
			dropEdge(root)
			dot := filepath.Join(root, "formal", "tlc", "states.dot")
			b, err := os.ReadFile(dot)
			if err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(b)
			edit(t, filepath.Join(root, "formal", "tlc", "manifest.json"), func(s string) string {
				return regexp.MustCompile(`("path": "states.dot", "sha256": ")[0-9a-f]+`).ReplaceAllString(s, "${1}"+hex.EncodeToString(sum[:]))
			})
		}, []string{"--stages", "explore,conformance"}, []string{
			"conformance  FAIL", "FAIL conformance: twophase: the transcription's state graph is not the one the tool computed",
			"TMCommit", "reproduce: twophase-check chart twophase --format dot", "explore      PASS", "traces       SKIP"}},
		{"stale graph", func(root string) { dropEdge(root) }, []string{"--stages", "conformance"}, []string{
			"conformance  FAIL", "retained report is stale", "regenerate it: TLA2TOOLS="}},
		{"missing graph", func(root string) {
			if err := os.Remove(filepath.Join(root, "formal", "tlc", "states.dot")); err != nil {
				t.Fatal(err)
			}
		}, []string{"--stages", "conformance"}, []string{
			"conformance  FAIL", "twophase: no retained tool output at ", "states.dot"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			root := copyModule(t)
			c.break_(root)
			args := append([]string{"verify", "--root", root, "--dir", t.TempDir()}, c.args...)
			out, code := runBin(t, bin, "", args...)
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			for _, w := range append(c.want, "verify: FAIL") {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q", w)
				}
			}
			if t.Failed() {
				t.Logf("output:\n%s", out)
			}
		})
	}
}
