package mutate_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/mutate"
)

// goLogger returns a go command that logs each invocation's arguments to a
// file, then runs the real go: the proof of what a campaign ran.
func goLogger(t *testing.T) (goCmd, log string) {
	t.Helper()
	dir := t.TempDir()
	log = filepath.Join(dir, "go.log")
	goCmd = filepath.Join(dir, "go")
	script := fmt.Sprintf("#!/bin/sh\necho \"$*\" >> %q\nexec go \"$@\"\n", log)
	if err := os.WriteFile(goCmd, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return goCmd, log
}

// logged returns the go invocations logged so far.
func logged(t *testing.T, log string) []string {
	t.Helper()
	b, err := os.ReadFile(log)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return strings.Fields(strings.ReplaceAll(strings.TrimSpace(string(b)), " ", "_"))
}

// countPrefix counts the logged invocations that start with prefix.
func countPrefix(lines []string, prefix string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// verdicts maps each mutant to its status, detector and tests run: what
// must agree between two runs of a campaign.
func verdicts(m *mutate.Matrix) map[string]string {
	out := map[string]string{}
	for _, r := range m.Results {
		out[r.Mutant] = fmt.Sprintf("%s %s %v", r.Status, r.Detector, r.Tests)
	}
	return out
}

func sameVerdicts(t *testing.T, what string, got, want *mutate.Matrix) {
	t.Helper()
	g, w := verdicts(got), verdicts(want)
	if len(g) != len(w) {
		t.Errorf("%s: %d results, want %d", what, len(g), len(w))
	}
	for name, v := range w {
		if g[name] != v {
			t.Errorf("%s: %s: %q, want %q", what, name, g[name], v)
		}
	}
}

// A campaign over the fixture's operator mutants: each runs only the tests
// whose coverage includes it, a mutant no test executes is not covered
// and runs nothing, a rerun takes every result from the cache (the go
// command is not run at all), -j 1 and -j 2 agree, shards merge back into
// the whole matrix, equivalents leave the score, and the checkout is never
// edited.
func TestCampaign(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP in -short: runs go test on the fixture module")
	}
	ctx := context.Background()
	orig, err := os.ReadFile(filepath.Join(fixture, "fixture.go"))
	if err != nil {
		t.Fatal(err)
	}
	ms, _, err := mutate.Generate(fixture, ".")
	if err != nil {
		t.Fatal(err)
	}
	goCmd, log := goLogger(t)
	cache := t.TempDir()
	opt := mutate.Options{Root: fixture, Go: goCmd, Short: true, NoVet: true}
	c2 := &mutate.Campaign{Options: opt, Jobs: 2, CacheDir: cache, Select: true}
	m2, err := c2.Run(ctx, ms)
	if err != nil {
		t.Fatal(err)
	}
	const pkg = "example.com/fixture."
	want := map[string]struct {
		status, detector string
		tests            []string
	}{
		"op/fixture.go:13:7/boundary":     {mutate.StatusSurvived, "", []string{"TestClamp"}},
		"op/fixture.go:16:7/boundary":     {mutate.StatusSurvived, "", []string{"TestClamp"}},
		"op/fixture.go:25:16/boundary":    {mutate.StatusKilled, pkg + "TestSum", []string{"TestSum"}},
		"op/fixture.go:25:28/incdec":      {mutate.StatusKilled, pkg + "TestSum", []string{"TestSum"}},
		"op/fixture.go:26:12/cond-negate": {mutate.StatusKilled, pkg + "TestSum", []string{"TestSum"}},
		"op/fixture.go:29:9/arith":        {mutate.StatusKilled, pkg + "TestSum", []string{"TestSum"}},
		"op/fixture.go:43:2/call-drop":    {mutate.StatusKilled, pkg + "TestCounter (crash)", []string{"TestCounter"}},
		"op/fixture.go:44:2/defer-drop":   {mutate.StatusKilled, pkg + "TestCounter", []string{"TestCounter"}},
		"op/fixture.go:45:12/arith":       {mutate.StatusKilled, pkg + "TestCounter", []string{"TestCounter"}},
		"op/fixture.go:52:5/err-check":    {mutate.StatusKilled, pkg + "TestParse", []string{"TestParse"}},
		"op/fixture.go:52:9/cond-negate":  {mutate.StatusKilled, pkg + "TestParse", []string{"TestParse"}},
		"op/fixture.go:60:2/call-drop":    {mutate.StatusKilled, pkg + "TestCounter", []string{"TestCounter"}},
		"op/fixture.go:61:5/if-negate":    {mutate.StatusKilled, pkg + "TestCounter", []string{"TestCounter"}},
		"op/fixture.go:62:3/call-drop":    {mutate.StatusNotCovered, "", nil},
		"op/fixture.go:70:3/incdec":       {mutate.StatusNotCovered, "", nil},
		"op/fixture.go:77:3/incdec":       {mutate.StatusNotCovered, "", nil},
		"op/fixture.go:90:9/boundary":     {mutate.StatusKilled, pkg + "TestSign", []string{"TestSign"}},
		"op/fixture.go:92:9/cond-negate":  {mutate.StatusKilled, pkg + "TestSign", []string{"TestSign"}},
	}
	if len(m2.Results) != len(want) {
		t.Fatalf("%d results, want %d", len(m2.Results), len(want))
	}
	for i, r := range m2.Results {
		w, ok := want[r.Mutant]
		if !ok || r.Mutant != ms[i].Name {
			t.Errorf("result %d is %s, want %s", i, r.Mutant, ms[i].Name)
			continue
		}
		if r.Status != w.status || r.Detector != w.detector || fmt.Sprint(r.Tests) != fmt.Sprint(w.tests) || r.Cached {
			t.Errorf("%s: %s by %q after %v (cached %v), want %s by %q after %v", r.Mutant, r.Status, r.Detector, r.Tests, r.Cached, w.status, w.detector, w.tests)
		}
		if r.Status == mutate.StatusNotCovered && r.Duration != 0 {
			t.Errorf("%s: not covered, yet took %v", r.Mutant, r.Duration)
		}
	}
	abs, _ := filepath.Abs(fixture)
	for _, r := range m2.Results {
		if strings.Contains(r.Output, abs) {
			t.Errorf("%s: the output names the checkout %s:\n%s", r.Mutant, abs, r.Output)
		}
		if r.Mutant == "op/fixture.go:43:2/call-drop" && !strings.Contains(r.Output, "\tfixture.go:") {
			t.Errorf("%s: the crash's stack names no relative fixture.go:\n%s", r.Mutant, r.Output)
		}
	}
	s := m2.Summary
	if s.Total != 18 || s.Killed != 13 || s.Survived != 2 || s.NotCovered != 3 || s.Score != 13.0/18 || s.TestRuns != 15 || s.CoverageRuns != 5 {
		t.Errorf("summary %+v", s)
	}
	runs := logged(t, log)
	if n := countPrefix(runs, "test_-json"); n != 15 {
		t.Errorf("%d go test runs of mutants, want 15 (one per covered mutant):\n%s", n, strings.Join(runs, "\n"))
	}
	if n := countPrefix(runs, "test_-c"); n != 1 {
		t.Errorf("%d coverage builds, want 1", n)
	}

	t.Run("cache hit on rerun", func(t *testing.T) {
		before := logged(t, log)
		again, err := (&mutate.Campaign{Options: opt, Jobs: 2, CacheDir: cache, Select: true}).Run(ctx, ms)
		if err != nil {
			t.Fatal(err)
		}
		if after := logged(t, log); countPrefix(after, "test") != countPrefix(before, "test") {
			t.Errorf("the rerun ran go test: %s", strings.Join(after[len(before):], "\n"))
		}
		sameVerdicts(t, "rerun", again, m2)
		if again.Summary.Cached != 15 || again.Summary.TestRuns != 0 || again.Summary.CoverageRuns != 0 {
			t.Errorf("rerun summary %+v, want 15 cached, nothing run", again.Summary)
		}
	})

	t.Run("-j 1 gives the same matrix as -j 2", func(t *testing.T) {
		m1, err := (&mutate.Campaign{Options: opt, Jobs: 1, Select: true}).Run(ctx, ms)
		if err != nil {
			t.Fatal(err)
		}
		sameVerdicts(t, "-j 1", m1, m2)
		for i := range m1.Results {
			if m1.Results[i].Mutant != m2.Results[i].Mutant || m1.Results[i].Cached {
				t.Errorf("result %d: %s (cached %v), want %s", i, m1.Results[i].Mutant, m1.Results[i].Cached, m2.Results[i].Mutant)
			}
		}
	})

	t.Run("shards merge into the whole matrix", func(t *testing.T) {
		var shards []*mutate.Matrix
		seen := map[string]int{}
		for i := 1; i <= 3; i++ {
			part := mutate.Shard(ms, i, 3)
			for _, m := range part {
				seen[m.Name]++
			}
			sm, err := (&mutate.Campaign{Options: opt, Jobs: 2, CacheDir: cache, Select: true}).Run(ctx, part)
			if err != nil {
				t.Fatal(err)
			}
			// Through JSON, as CI jobs hand their shards on.
			path := filepath.Join(t.TempDir(), "shard.json")
			var b bytes.Buffer
			if err := sm.WriteJSON(&b); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			read, err := mutate.ReadMatrix(path)
			if err != nil {
				t.Fatal(err)
			}
			shards = append(shards, read)
		}
		for _, m := range ms {
			if seen[m.Name] != 1 {
				t.Errorf("%s is in %d shards", m.Name, seen[m.Name])
			}
		}
		merged, err := mutate.Merge(shards)
		if err != nil {
			t.Fatal(err)
		}
		sameVerdicts(t, "merged", merged, m2)
		for i := range merged.Results {
			if merged.Results[i].Mutant != m2.Results[i].Mutant {
				t.Errorf("merged result %d: %s, want %s", i, merged.Results[i].Mutant, m2.Results[i].Mutant)
			}
		}
		if merged.Summary.Killed != s.Killed || merged.Summary.Score != s.Score {
			t.Errorf("merged summary %+v, want %+v", merged.Summary, s)
		}
		if _, err := mutate.Merge(append(shards, shards[0])); err == nil {
			t.Error("merging a shard twice: no error")
		}
	})

	t.Run("equivalents leave the score", func(t *testing.T) {
		eq, err := mutate.ParseEquivalents(strings.NewReader(`# Clamp's boundaries return the bound, which equals x there.
op/fixture.go:13:7/boundary  x == lo returns lo, which is x
op/fixture.go:16:7/boundary  x == hi returns hi, which is x
`))
		if err != nil {
			t.Fatal(err)
		}
		before := logged(t, log)
		me, err := (&mutate.Campaign{Options: opt, Jobs: 2, CacheDir: cache, Select: true, Equivalents: eq}).Run(ctx, ms)
		if err != nil {
			t.Fatal(err)
		}
		if after := logged(t, log); countPrefix(after, "test") != countPrefix(before, "test") {
			t.Errorf("ran go test: %v", after[len(before):])
		}
		if me.Summary.Equivalent != 2 || me.Summary.Survived != 0 || me.Summary.Score != 13.0/16 {
			t.Errorf("summary %+v, want 2 equivalent, none survived, score 13/16", me.Summary)
		}
		for _, r := range me.Results {
			if r.Mutant == "op/fixture.go:13:7/boundary" && (r.Status != mutate.StatusEquivalent || r.Reason != "x == lo returns lo, which is x") {
				t.Errorf("%s: %s (%q)", r.Mutant, r.Status, r.Reason)
			}
		}
		var md bytes.Buffer
		if err := me.WriteMarkdown(&md, "Fixture"); err != nil {
			t.Fatal(err)
		}
		for _, line := range []string{
			"# Fixture\n",
			"| op/fixture.go:13:7/boundary | `boundary: < → <=` | equivalent | x == lo returns lo, which is x |  |  |  |",
			"| op/fixture.go:52:5/err-check | `err-check: err != nil → false` | killed | example.com/fixture.TestParse | assertion | `fixture_test.go:37: Parse(x): no error` | TestParse |",
			"| op/fixture.go:43:2/call-drop | `call-drop: c.mu.Lock() → (nothing)` | killed | example.com/fixture.TestCounter (crash) | test-binary-crash | `fatal error: sync: unlock of unlocked mutex` | TestCounter |",
			"| op/fixture.go:60:2/call-drop | `call-drop: c.finish() → (nothing)` | killed | example.com/fixture.TestCounter | panic | `panic: not done [recovered, repanicked]` | TestCounter |",
			"| op/fixture.go:70:3/incdec | `incdec: -- → ++` | not-covered |  |  |  |  |",
			"Kills by kind of detector: assertion 8, panic 4, test-binary-crash 1.",
			"mutation score 81.2%",
		} {
			if !strings.Contains(md.String(), line) {
				t.Errorf("markdown lacks %q:\n%s", line, md.String())
			}
		}
		if _, err := mutate.ParseEquivalents(strings.NewReader("op/x.go:1:1/boundary\n")); err == nil {
			t.Error("an equivalent without a reason: no error")
		}
	})

	t.Run("without selection the whole suite runs", func(t *testing.T) {
		var part []mutate.Mutant
		for _, m := range ms {
			if m.Name == "op/fixture.go:62:3/call-drop" || m.Name == "op/fixture.go:25:16/boundary" {
				part = append(part, m)
			}
		}
		mn, err := (&mutate.Campaign{Options: opt, Jobs: 2}).Run(ctx, part)
		if err != nil {
			t.Fatal(err)
		}
		got := verdicts(mn)
		if got["op/fixture.go:62:3/call-drop"] != "survived  [.]" || got["op/fixture.go:25:16/boundary"] != "killed example.com/fixture.TestSum [.]" {
			t.Errorf("without selection: %v", got)
		}
	})

	t.Run("another package's tests count with TestPackages", func(t *testing.T) {
		var part []mutate.Mutant
		for _, m := range ms {
			if m.Name == "op/fixture.go:77:3/incdec" || m.Name == "op/fixture.go:70:3/incdec" || m.Name == "op/fixture.go:13:7/boundary" {
				part = append(part, m)
			}
		}
		mo, err := (&mutate.Campaign{Options: opt, Jobs: 2, Select: true, TestPackages: []string{"./other"}}).Run(ctx, part)
		if err != nil {
			t.Fatal(err)
		}
		got := verdicts(mo)
		for name, want := range map[string]string{
			"op/fixture.go:77:3/incdec":   "killed example.com/fixture/other.TestAlsoUnused [other.TestAlsoUnused]",
			"op/fixture.go:70:3/incdec":   "not-covered  []",
			"op/fixture.go:13:7/boundary": "survived  [TestClamp]",
		} {
			if got[name] != want {
				t.Errorf("%s: %q, want %q", name, got[name], want)
			}
		}
	})

	t.Run("the cache key takes in the tests' dependencies and testdata only", func(t *testing.T) {
		// A copy of the fixture, to edit.
		root := t.TempDir()
		for _, f := range []string{"go.mod", "fixture.go", "fixture_test.go", "other/other.go", "other/other_test.go"} {
			b, err := os.ReadFile(filepath.Join(fixture, f))
			if err != nil {
				t.Fatal(err)
			}
			os.MkdirAll(filepath.Dir(filepath.Join(root, f)), 0o755)
			if err := os.WriteFile(filepath.Join(root, f), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		var part []mutate.Mutant
		for _, m := range ms {
			if m.Name == "op/fixture.go:45:12/arith" {
				part = append(part, m)
			}
		}
		dir := t.TempDir()
		o := opt
		o.Root = root
		runs := func() int {
			before := countPrefix(logged(t, log), "test_-json")
			m, err := (&mutate.Campaign{Options: o, CacheDir: dir, Select: true}).Run(ctx, part)
			if err != nil || m.Results[0].Status != mutate.StatusKilled {
				t.Fatalf("%v %+v", err, m)
			}
			return countPrefix(logged(t, log), "test_-json") - before
		}
		edit := func(f string) {
			p := filepath.Join(root, f)
			b, _ := os.ReadFile(p)
			if err := os.WriteFile(p, append(b, "\n// edited\n"...), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if n := runs(); n != 1 {
			t.Fatalf("first run: %d go test runs", n)
		}
		edit("other/other.go") // not a dependency of the fixture package's tests
		if n := runs(); n != 0 {
			t.Errorf("after an edit outside the tests' dependencies: %d go test runs, want 0", n)
		}
		edit("fixture_test.go")
		if n := runs(); n != 1 {
			t.Errorf("after an edit of the tests: %d go test runs, want 1", n)
		}
		if err := os.MkdirAll(filepath.Join(root, "testdata"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, "testdata", "input"), []byte("a test input"), 0o644); err != nil {
			t.Fatal(err)
		}
		if n := runs(); n != 1 {
			t.Errorf("after a new testdata file: %d go test runs, want 1", n)
		}
	})

	if now, _ := os.ReadFile(filepath.Join(fixture, "fixture.go")); !bytes.Equal(now, orig) {
		t.Fatal("the checkout was edited")
	}
}

func TestParseShard(t *testing.T) {
	for _, c := range []struct {
		in   string
		i, n int
		ok   bool
	}{{"1/2", 1, 2, true}, {"2/2", 2, 2, true}, {"3/2", 0, 0, false}, {"0/2", 0, 0, false}, {"1/0", 0, 0, false}, {"1/2x", 0, 0, false}, {"x", 0, 0, false}} {
		i, n, err := mutate.ParseShard(c.in)
		if (err == nil) != c.ok || i != c.i || n != c.n {
			t.Errorf("ParseShard(%q) = %d, %d, %v", c.in, i, n, err)
		}
	}
}
