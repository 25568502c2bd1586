package trace_test

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/tracecheck/tracecheck/trace"
)

// Read a journal whose writer died mid-line: the events before are
// returned, then a truncation error naming file:line.
func ExampleDecoder() {
	journal := `{"v":1,"instance":"run-7","seq":0,"action":"Init","state":{"phase":"Ready"}}
{"v":1,"instance":"run-7","seq":1,"action":"ExecutePython","state":{"phase":"Running"}}
{"v":1,"instance":"run-7","seq":2,"action":"Progr`
	d := trace.NewDecoder(strings.NewReader(journal), "run-7.ndjson")
	for {
		r, err := d.Next()
		if err == io.EOF {
			break
		}
		if errors.Is(err, trace.ErrTruncated) {
			inst, _ := trace.PeekInstance(r.Line)
			fmt.Printf("%v (instance %s)\n", err, inst)
			break
		}
		if err != nil {
			fmt.Println(err)
			break
		}
		fmt.Printf("%s: %s seq %d %s\n", r.Pos, r.Instance, r.Seq, r.Action)
	}
	// Output:
	// run-7.ndjson:1: run-7 seq 0 Init
	// run-7.ndjson:2: run-7 seq 1 ExecutePython
	// run-7.ndjson:3: truncated: last line has no newline (49 bytes) (instance run-7)
}
