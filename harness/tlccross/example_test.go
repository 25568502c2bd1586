package tlccross_test

import (
	"context"
	"fmt"

	"github.com/tracecheck/tracecheck/harness/tlccross"
)

// Split a trace of two instances the way tlc-traces.sh does before TLC
// reads it, and get tracecheck's verdict on each piece.
func ExampleSplitInstances() {
	data := []byte(`{"v":1,"instance":"a","seq":0,"action":"Init","state":{"phase":"Ready","verified":false,"published":false}}
{"v":1,"instance":"b","seq":0,"action":"Init","state":{"phase":"Ready"}}
{"v":1,"instance":"a","seq":1,"action":"ExecutePython","state":{"phase":"Running"}}
{"v":1,"instance":"a","seq":2,"action":"ExecutionFails","state":{"phase":"Failed"}}
{"v":1,"instance":"b","seq":1,"action":"AtomicPublication","state":{"phase":"Published"}}
`)
	order, pieces := tlccross.SplitInstances(data)
	for _, inst := range order {
		v, err := tlccross.Verdict(context.Background(), pieces[inst], "run.ndjson")
		fmt.Println(inst, v, err)
	}
	// Output:
	// a valid <nil>
	// b violation <nil>
}

// TLC's exit code and output map to tracecheck's verdicts.
func ExampleTLCVerdict() {
	for _, run := range []struct {
		exit int
		out  string
	}{
		{0, "Model checking completed. No error has been found."},
		{12, "Error: Invariant TraceComplete is violated."},
		{10, "Error: Postcondition TraceMatched at line 206, col 5 to line 208, col 94 of module TraceProgram is false."},
		{10, "Error: Evaluating assumption line 88, col 8 to line 105, col 85 of module TraceProgram failed."},
		{150, "***Parse Error***"},
	} {
		fmt.Println(tlccross.TLCVerdict(run.exit, run.out))
	}
	// Output:
	// valid true
	// incomplete true
	// violation true
	// input-error true
	//  false
}
