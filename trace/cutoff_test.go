package trace_test

import (
	"sync"
	"testing"

	"github.com/tracecheck/tracecheck/trace"
)

// Events before Cut reach the sink, from many goroutines at once; events
// after it are counted and dropped.
func TestCutoff(t *testing.T) {
	var rec trace.Recorder
	c := trace.NewCutoff(&rec)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 100 {
				if err := c.Emit(trace.Event{Instance: "i", Seq: uint64(g*100 + i), Action: "A"}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	if late := c.Cut(); late != 0 {
		t.Fatalf("late %d before any late event", late)
	}
	for range 3 {
		if err := c.Emit(trace.Event{Instance: "i", Action: "Late"}); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(rec.Events()); got != 800 || c.Late() != 3 {
		t.Fatalf("sink got %d events (want 800), late %d (want 3)", got, c.Late())
	}
}
