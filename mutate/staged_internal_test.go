package mutate

import (
	"slices"
	"strings"
	"testing"
	"time"
)

// A test binary's -test.v=test2json output becomes the events go test
// -json would give: the failing subtest first, each test's output, and a
// crash (an exit with tests still running) blamed on the running test.
func TestFramedEvents(t *testing.T) {
	const (
		ip = "example.com/rec"
		v  = "\x16"
	)
	cases := []struct {
		name    string
		out     string
		exitErr bool
		failed  string // the detector
		output  string // in its output
	}{
		{"failing subtest", v + "=== RUN   TestSub\n" + v + "=== RUN   TestSub/a\n" + v + "=== PAUSE TestSub/a\n" + v + "=== NAME  TestSub\n" +
			v + "=== RUN   TestSub/b\n" + v + "=== PAUSE TestSub/b\n" + v + "=== CONT  TestSub/a\n    sub_test.go:6: in a\n" +
			v + "--- PASS: TestSub/a (0.00s)\n" + v + "=== CONT  TestSub/b\n    sub_test.go:7: bad b\n" +
			v + "--- FAIL: TestSub/b (0.00s)\n" + v + "--- FAIL: TestSub (0.00s)\n" + v + "=== NAME  \n" + v + "FAIL\n",
			true, "example.com/rec.TestSub/b", "sub_test.go:7: bad b"},
		{"rapid", v + "=== RUN   TestProperty\n    rec_test.go:29: [rapid] failed after 2 tests: stack of 3 popped\n" +
			"    rec_test.go:30: [rapid] draw xs: []int{0, 0, 0}\n" + v + "--- FAIL: TestProperty (0.01s)\n" + v + "FAIL\n",
			true, "example.com/rec.TestProperty", "[rapid] draw xs"},
		{"crash", v + "=== RUN   TestStore\nfatal error: sync: unlock of unlocked mutex\n\ngoroutine 7 [running]:\n",
			true, "example.com/rec.TestStore (crash)", "fatal error: sync: unlock of unlocked mutex"},
		{"pass", v + "=== RUN   TestAbs\n" + v + "--- PASS: TestAbs (0.00s)\n" + v + "PASS\n", false, "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			failed, outputs := parseTestJSON(framedEvents(strings.NewReader(c.out), ip, c.exitErr))
			if c.failed == "" {
				if len(failed) > 0 {
					t.Fatalf("failed %v, want none", failed)
				}
				return
			}
			if len(failed) == 0 || failed[0] != c.failed || !strings.Contains(outputs[failed[0]], c.output) {
				t.Fatalf("failed %v (output %q), want %s first with %q", failed, outputs[c.failed], c.failed, c.output)
			}
		})
	}
}

// Staged selection runs the quick covering tests of every package first
// (the package whose quick tests take least first), then the slow ones;
// unstaged, a run per package, the mutated package's own first.
func TestSelectionWaves(t *testing.T) {
	tests := []TestCoverage{ // fastest first, as Covering returns them
		{Name: "TestA", Duration: 100 * time.Millisecond},
		{Name: "TestH", Package: "./harness", Duration: 200 * time.Millisecond},
		{Name: "TestB", Duration: 400 * time.Millisecond},
		{Name: "TestSlowH", Package: "./harness", Duration: 9 * time.Second},
		{Name: "TestSlow", Duration: 2 * time.Second},
	}
	str := func(runs []Test) []string {
		var out []string
		for _, r := range runs {
			out = append(out, r.Package+" "+r.Run)
		}
		return out
	}
	runs, names := selection("./pkg", tests, true)
	want := []string{"./harness ^(TestH)$", "./pkg ^(TestA|TestB)$", "./pkg ^(TestSlow)$", "./harness ^(TestSlowH)$"}
	if !slices.Equal(str(runs), want) {
		t.Errorf("staged runs %q, want %q", str(runs), want)
	}
	if want := []string{"TestA", "harness.TestH", "TestB", "harness.TestSlowH", "TestSlow"}; !slices.Equal(names, want) {
		t.Errorf("staged names %q, want %q", names, want)
	}
	runs, names = selection("./pkg", tests, false)
	want = []string{"./pkg ^(TestA|TestB|TestSlow)$", "./harness ^(TestH|TestSlowH)$"}
	if !slices.Equal(str(runs), want) {
		t.Errorf("runs %q, want %q", str(runs), want)
	}
	if want := []string{"TestA", "TestB", "TestSlow", "harness.TestH", "harness.TestSlowH"}; !slices.Equal(names, want) {
		t.Errorf("names %q, want %q", names, want)
	}
}
