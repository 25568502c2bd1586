package trace_test

import (
	"fmt"
	"os"

	"github.com/tracecheck/tracecheck/trace"
)

// A test hands a Recorder to the code it drives as that code's Sink, then
// looks at the events, or checks them as a trace.
func ExampleRecorder() {
	var rec trace.Recorder
	var sink trace.Sink = &rec // what an implementation's Config takes

	sink.Emit(trace.Event{Instance: "s1", Seq: 0, Action: trace.InitAction,
		State: map[string]any{"conn": 0, "vad": 0, "resp": 0, "compaction": 0}})
	sink.Emit(trace.Event{Instance: "s1", Seq: 1, Action: "VadStart", State: map[string]any{"vad": 1}})

	for _, e := range rec.Events() {
		fmt.Println(e.Instance, e.Seq, e.Action, e.State)
	}
	os.Stdout.Write(rec.NDJSON()) // what a trace.Writer would have written
	// Output:
	// s1 0 Init map[compaction:0 conn:0 resp:0 vad:0]
	// s1 1 VadStart map[vad:1]
	// {"v":1,"instance":"s1","seq":0,"action":"Init","state":{"compaction":0,"conn":0,"resp":0,"vad":0}}
	// {"v":1,"instance":"s1","seq":1,"action":"VadStart","state":{"vad":1}}
}
