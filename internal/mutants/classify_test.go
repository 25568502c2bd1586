package mutants_test

import (
	"os"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/internal/mutants"
	"github.com/tracecheck/tracecheck/mutate"
)

// tracecheck's own harness detectors: the durability oracle's report (a
// recorded output), the crash campaigns, and fault injection by name —
// unless the fault-injection test's failure is a divergence report, which
// is trace validation.
func TestClassifiers(t *testing.T) {
	durability, err := os.ReadFile("../../mutate/testdata/detectors/durability.txt")
	if err != nil {
		t.Fatal(err)
	}
	vad, err := os.ReadFile("../../mutate/testdata/detectors/trace-validation.txt")
	if err != nil {
		t.Fatal(err)
	}
	recorded := func(b []byte) (string, string) {
		det, out, _ := strings.Cut(string(b), "\n")
		return det, out
	}
	dDet, dOut := recorded(durability)
	vDet, vOut := recorded(vad)
	cases := []struct {
		name, detector, output, kind, evidence string
	}{
		{"durability oracle", dDet, dOut, mutate.KindDurability, "not durable: cut 39"},
		{"crash point", "harness/pubcheck.TestCrashPoints/publish", "    crashpoints_test.go:84: crash point 7 (rename staging/r1 published/r1): recovery failed its checks (journal in Verified)\n", mutate.KindCrash, "crash point 7"},
		{"crash campaign", "harness/pubcheck.TestCrashRecovery", "    crash_test.go:224: crash 3: a partial or unverified checkpoint is published: missing manifest\n", mutate.KindCrash, "crash 3: a partial"},
		{"start-up recovery", "harness/pubcheck.TestStartupRecovery", "    crash_test.go:383: staging leftovers: [r1]\n", mutate.KindCrash, "staging leftovers"},
		{"fault injection", "harness/pubcheck.TestFaultInjection/sync_manifest", "    fault_test.go:160: the fault never fired\n", mutate.KindFaultInjection, "the fault never fired"},
		{"fault injection caught by trace validation", vDet, vOut, mutate.KindTraceValidation, "run15: no Teardown successor"},
		{"ordinary assertion", "impl/checkpoint.TestPublish", "    publish_test.go:12: got Failed, want Published\n", mutate.KindAssertion, "got Failed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			kind, ev := mutate.Classify(mutants.Classifiers(), c.detector, c.output)
			if kind != c.kind || !strings.Contains(ev, c.evidence) {
				t.Errorf("%s, %q; want %s, %q", kind, ev, c.kind, c.evidence)
			}
		})
	}
}
