package mutate_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/mutate"
)

// Each recorded output of a failing test (testdata/detectors: the first
// line is the failing test's name as the runner reports it, the rest its
// go test output, recorded from real runs: the race detector, goleak and
// rapid on a scratch package, the others from named mutants of this
// module) is classified as the detector that produced it, with the line
// that shows it as evidence.
func TestDetectRecorded(t *testing.T) {
	cases := []struct {
		file, kind string
		evidence   []string // substrings of the evidence
	}{
		{"race.txt", mutate.KindRace, []string{"WARNING: DATA RACE", "Read at 0x", "example.com/rec.TestRace.func1()"}},
		{"goleak.txt", mutate.KindGoroutineLeak, []string{"found unexpected goroutines", "Goroutine 9 in state sleep"}},
		{"rapid.txt", mutate.KindProperty, []string{"[rapid] failed after 1 tests: stack of 3 popped", "[rapid] draw xs: []int{0, 0, 0}", `[rapid] draw op: "pop"`}},
		{"porcupine.txt", mutate.KindLinearizability, []string{"porcupine: Illegal over 1201 operations"}},
		{"trace-validation.txt", mutate.KindTraceValidation, []string{"run15: no Teardown successor has the event's state"}},
		{"trace-validation-m4.txt", mutate.KindTraceValidation, []string{"m4: no Teardown successor has the event's state"}},
		{"verdict-mismatch.txt", mutate.KindTraceValidation, []string{"want 16 × violation, got 16 instances: 16 valid"}},
		{"corpus-verdict.txt", mutate.KindTraceValidation, []string{"verdict incomplete, want violation"}},
		{"durability.txt", mutate.KindAssertion, []string{"not durable: cut 39"}}, // the oracle is a project classifier (internal/mutants)
		{"assertion.txt", mutate.KindAssertion, []string{"bargein_test.go:70: frame 11: barge-in did not interrupt"}},
	}
	for _, c := range cases {
		t.Run(c.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "detectors", c.file))
			if err != nil {
				t.Fatal(err)
			}
			det, out, _ := strings.Cut(string(b), "\n")
			kind, ev := mutate.Classify(nil, det, out)
			if kind != c.kind {
				t.Errorf("kind %q, want %q (evidence %q)", kind, c.kind, ev)
			}
			for _, s := range c.evidence {
				if !strings.Contains(ev, s) {
					t.Errorf("evidence %q lacks %q", ev, s)
				}
			}
			if len(ev) > 410 {
				t.Errorf("evidence of %d bytes, want it clipped", len(ev))
			}
		})
	}
}

// The runner's own detectors (build, timeout, a crashed test binary),
// goleak's report from TestMain (a package, not a test, fails), and a
// campaign's own classifiers, tried before the defaults, by test name
// and by line.
func TestDetectKinds(t *testing.T) {
	own := []mutate.Classifier{
		{Kind: "oracle", Line: regexp.MustCompile(`not durable: `)},
		{Kind: "chaos", Test: regexp.MustCompile(`\.TestChaos\b`)},
	}
	cases := []struct {
		name             string
		classifiers      []mutate.Classifier
		detector, output string
		kind, evidence   string
	}{
		{"build", nil, "build", "# example.com/m\n./m.go:5:2: undefined: x\nFAIL\texample.com/m [build failed]\n", mutate.KindBuild, "./m.go:5:2: undefined: x"},
		{"timeout", nil, "timeout", "=== RUN   TestX\npanic: test timed out after 2m0s\n\trunning tests:\n", mutate.KindTimeout, "panic: test timed out after 2m0s"},
		{"crashed binary", nil, "m.TestX (crash)", "=== RUN   TestX\nfatal error: sync: unlock of unlocked mutex\n\ngoroutine 7 [running]:\n", mutate.KindCrashed, "fatal error: sync: unlock of unlocked mutex"},
		{"goleak in TestMain", nil, "harness/sessioncheck", "PASS\ngoleak: Errors on successful test run: found unexpected goroutines:\n[Goroutine 21 in state chan receive, with impl/session.(*Session).run on top of the stack:\n", mutate.KindGoroutineLeak, "[Goroutine 21 in state chan receive"},
		{"own classifier by line", own, "p.TestDurability/first", "    d_test.go:68: not durable: cut 3 (before rename a b)\n", "oracle", "d_test.go:68: not durable: cut 3"},
		{"own classifier by name", own, "p.TestChaos/seed_4", "=== RUN   TestChaos/seed_4\n    chaos_test.go:40: the store lost key 7\n", "chaos", "chaos_test.go:40: the store lost key 7"},
		{"own classifiers first", own, "p.TestChaos", "    chaos_test.go:40: porcupine: Illegal over 3 operations\n", "chaos", "porcupine: Illegal"},
		{"defaults without own", nil, "p.TestChaos", "    chaos_test.go:40: porcupine: Illegal over 3 operations\n", mutate.KindLinearizability, "porcupine: Illegal"},
		{"a name mismatch does not match", own, "p.TestChaosless", "    x_test.go:1: boom\n", mutate.KindAssertion, "x_test.go:1: boom"},
		{"model invariant", nil, "check.TestX", "    x_test.go:9: the initial state breaks invariant TypeOK\n", mutate.KindInvariant, "breaks invariant TypeOK"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			kind, ev := mutate.Classify(c.classifiers, c.detector, c.output)
			if kind != c.kind || !strings.Contains(ev, c.evidence) {
				t.Errorf("%s, %q; want %s, %q", kind, ev, c.kind, c.evidence)
			}
		})
	}
}
