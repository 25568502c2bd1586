package trace_test

import (
	"fmt"
	"os"
	"strings"

	"github.com/tracecheck/tracecheck/trace"
)

// An ITF trace written by `quint run --mbt` becomes trace events: the first
// state is the Init event, each later state's action is its
// mbt::actionTaken.
func ExampleReadITF() {
	doc := `{
	  "vars": ["phase", "verified", "mbt::actionTaken"],
	  "states": [
	    {"#meta": {"index": 0}, "phase": "Ready", "verified": false, "mbt::actionTaken": "init"},
	    {"#meta": {"index": 1}, "phase": "Running", "verified": false, "mbt::actionTaken": "ExecutePython"}
	  ]
	}`
	events, err := trace.ReadITF(strings.NewReader(doc), "run-1")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, e := range events {
		fmt.Println(e.Instance, e.Seq, e.Action, e.State["phase"])
	}
	// Output:
	// run-1 0 Init Ready
	// run-1 1 ExecutePython Running
}

// WriteITF writes one instance's events as an ITF document.
func ExampleWriteITF() {
	events := []trace.Event{
		{V: 1, Instance: "run-1", Seq: 0, Action: trace.InitAction, State: map[string]any{"phase": "Ready"}},
		{V: 1, Instance: "run-1", Seq: 1, Action: "ExecutePython", State: map[string]any{"phase": "Running"}},
	}
	if err := trace.WriteITF(os.Stdout, events); err != nil {
		fmt.Println(err)
	}
	// Output:
	// {
	//   "#meta": {
	//     "format": "ITF",
	//     "format-description": "https://apalache-mc.org/docs/adr/015adr-trace.html",
	//     "instance": "run-1",
	//     "source": "tracecheck"
	//   },
	//   "vars": [
	//     "phase",
	//     "mbt::actionTaken"
	//   ],
	//   "states": [
	//     {
	//       "#meta": {
	//         "index": 0,
	//         "seq": 0
	//       },
	//       "mbt::actionTaken": "Init",
	//       "phase": "Ready"
	//     },
	//     {
	//       "#meta": {
	//         "index": 1,
	//         "seq": 1
	//       },
	//       "mbt::actionTaken": "ExecutePython",
	//       "phase": "Running"
	//     }
	//   ]
	// }
}
