package sessioncheck_test

import (
	"context"
	"fmt"
	"os"

	"github.com/tracecheck/tracecheck/harness/sessioncheck"
)

// Validate a trace recorded from the M4 gap (the code mutant
// session/fire-and-forget-compaction) against the spec and against the
// mutant spec.
func ExampleCheck() {
	for _, mutant := range []bool{false, true} {
		f, err := os.Open("../../traces/session/recorded/m4-mutant-compaction-outlives-bad.ndjson")
		if err != nil {
			panic(err)
		}
		rep, err := sessioncheck.Check(context.Background(), f, "m4.ndjson", mutant)
		f.Close()
		if err != nil {
			panic(err)
		}
		d := rep.Instances[0].Divergence
		fmt.Printf("mutant spec %v: %v at line %d (%s): %s\n", mutant, rep.Verdict(), d.Line, d.Action, d.Kind)
	}
	// Output:
	// mutant spec false: violation at line 3 (Teardown): state
	// mutant spec true: violation at line 3 (Teardown): invariant
}
