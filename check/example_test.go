package check_test

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/model/program"
	"github.com/tracecheck/tracecheck/trace"
)

// Check a Program trace where the checkpoint is published before it was
// verified.
func ExampleCheck() {
	tr := `{"v":1,"instance":"run-1","seq":0,"action":"Init","state":{"phase":"Ready","verified":false,"published":false}}
{"v":1,"instance":"run-1","seq":1,"action":"ExecutePython","state":{"phase":"Running"}}
{"v":1,"instance":"run-1","seq":2,"action":"ProgramSucceeds","state":{"phase":"Staging"}}
{"v":1,"instance":"run-1","seq":3,"action":"AtomicPublication","state":{"phase":"Published","published":true}}
`
	rep, err := check.Check(context.Background(), program.Spec(), strings.NewReader(tr), "run-1.ndjson", check.Options{})
	if err != nil {
		fmt.Println("input error:", err)
		return
	}
	fmt.Println(rep.Verdict())
	d := rep.Instances[0].Divergence
	fmt.Printf("%s:%d: %s\n", d.File, d.Line, d.Reason)
	fmt.Println(d.Candidates[0].Why[0])
	// Output:
	// violation
	// run-1.ndjson:4: AtomicPublication is not enabled in any candidate state
	// AtomicPublication is not enabled: guard phase = "Verified" is false
}

// A Checker fed event by event: here a killed run whose journal stops in
// Staging is incomplete, never valid.
func ExampleNew() {
	c, err := check.New(program.Spec(), check.Options{})
	if err != nil {
		panic(err)
	}
	c.Emit(traceEvent(0, "Init", "Ready"))
	c.Emit(traceEvent(1, "ExecutePython", "Running"))
	c.Emit(traceEvent(2, "ProgramSucceeds", "Staging"))
	rep := c.Close()
	fmt.Println(rep.Verdict())
	fmt.Println(rep.Instances[0].Reason)
	rep.WriteText(os.Stdout)
	// Output:
	// incomplete
	// the trace ends in a state where the spec does not stop: phase = "Staging" /\ verified = FALSE /\ published = FALSE (enabled: ReloadAndVerify, SaveOrVerificationFails, Interrupt)
	// -: INCOMPLETE (model program, 3 events, 1 instance: 0 valid, 1 incomplete, 0 violation)
	//   run: incomplete, 3 events (lines 1-3): the trace ends in a state where the spec does not stop: phase = "Staging" /\ verified = FALSE /\ published = FALSE (enabled: ReloadAndVerify, SaveOrVerificationFails, Interrupt)
}

func traceEvent(seq uint64, action, phase string) trace.Event {
	return trace.Event{Instance: "run", Seq: seq, Action: action, State: map[string]any{"phase": phase}}
}

// Which of Program's transitions a trace exercised.
func ExampleCoverageOf() {
	tr := `{"v":1,"instance":"run-2","seq":0,"action":"Init","state":{"phase":"Ready","verified":false,"published":false}}
{"v":1,"instance":"run-2","seq":1,"action":"ExecutePython","state":{"phase":"Running"}}
{"v":1,"instance":"run-2","seq":2,"action":"ExecutionFails","state":{"phase":"Failed"}}
`
	sp := program.Spec()
	rep, err := check.Check(context.Background(), sp, strings.NewReader(tr), "run-2.ndjson", check.Options{})
	if err != nil {
		panic(err)
	}
	cov, err := check.CoverageOf(context.Background(), sp, rep)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s: %d/%d transitions\n", rep.Verdict(), cov.Exercised, cov.Total)
	for _, t := range cov.Edges {
		if t.Count > 0 {
			fmt.Println(t.Action)
		}
	}
	// Output:
	// valid: 2/15 transitions
	// ExecutePython
	// ExecutionFails
}
