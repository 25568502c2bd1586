package model_test

import (
	"context"
	"fmt"

	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/model/program"
	"github.com/tracecheck/tracecheck/model/session"
)

// Explore the transcription of Program.tla and print what TLC reports.
func ExampleExplore() {
	r, err := model.Explore(context.Background(), program.Spec(), model.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(r.States(), "states,", r.Transitions(), "transitions, depth", r.Depth, "ok:", r.OK())
	// Output: 9 states, 15 transitions, depth 5 ok: true
}

// The M4 gap: without the compaction teardown, the shortest counterexample
// is Init → Teardown.
func ExampleExplore_counterexample() {
	sp := session.Spec(session.Options{NoCompactionTeardown: true})
	r, _ := model.Explore(context.Background(), sp, model.Options{})
	for _, v := range r.Violations {
		fmt.Println(v.Kind, v.Name)
		for _, st := range v.Trace {
			fmt.Printf("  %s: %s\n", st.Action, sp.Format(st.State))
		}
	}
	// Output:
	// invariant ChildrenDieWithParent
	//   Init: conn = 0 /\ vad = 0 /\ resp = 0 /\ compaction = 0
	//   Teardown: conn = 1 /\ vad = 2 /\ resp = 2 /\ compaction = 0
}
