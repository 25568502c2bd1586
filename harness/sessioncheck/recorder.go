package sessioncheck

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/tracecheck/tracecheck/trace"
)

// Clock is a logical clock: an atomic counter that stamps operation calls,
// returns and trace events in one total order consistent with real time
// (a stamp taken after another, in happens-before order, is larger).
type Clock struct{ n atomic.Int64 }

// Now returns the next stamp.
func (c *Clock) Now() int64 { return c.n.Add(1) }

// Stamped is a trace event with the clock stamp of its emission.
type Stamped struct {
	At    int64
	Event trace.Event
}

// Recorder is a trace.Sink for tests: it stamps every event with Clock and
// records it in a [trace.Recorder]. It is safe for concurrent use.
type Recorder struct {
	Clock  *Clock
	mu     sync.Mutex
	stamps []int64 // stamps[i] is the stamp of rec's i-th event
	rec    trace.Recorder
}

// NewRecorder returns a Recorder stamping from clock.
func NewRecorder(clock *Clock) *Recorder { return &Recorder{Clock: clock} }

// Emit implements trace.Sink.
func (r *Recorder) Emit(e trace.Event) error {
	at := r.Clock.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.rec.Emit(e); err != nil {
		return err
	}
	r.stamps = append(r.stamps, at)
	return nil
}

// Events returns the events recorded so far, in emission order.
func (r *Recorder) Events() []Stamped {
	r.mu.Lock()
	defer r.mu.Unlock()
	evs := r.rec.Events()
	out := make([]Stamped, len(evs))
	for i, e := range evs {
		out[i] = Stamped{At: r.stamps[i], Event: e}
	}
	return out
}

// NDJSON returns the trace recorded so far.
func (r *Recorder) NDJSON() []byte { return r.rec.NDJSON() }

// Window is an operation's call/return window on the Clock.
type Window struct{ Call, Return int64 }

// Contains reports whether stamp t lies strictly inside w.
func (w Window) Contains(t int64) bool { return w.Call < t && t < w.Return }

// EventKey identifies the operation that caused an event: the instance,
// the action and the number in the event's detail that names the
// operation's result (the frame, response or job).
type EventKey struct {
	Instance string
	Action   string
	ID       uint64
}

// KeyOf returns the key of an event and whether it has one: VadStart and
// VadStop by "frame", RespStart by "response", RespFinish by "response" when
// its cause is a caller's ("finish" or "cancel"), CompTrigger by "job", and
// Teardown (ID 0). Other events (a response completing, a compaction
// finishing) have no caller.
func KeyOf(e trace.Event) (EventKey, bool) {
	k := EventKey{Instance: e.Instance, Action: e.Action}
	num := func(name string) (uint64, bool) {
		switch v := e.Detail[name].(type) {
		case uint64:
			return v, true
		case float64:
			return uint64(v), true
		}
		return 0, false
	}
	var ok bool
	switch e.Action {
	case "VadStart", "VadStop":
		k.ID, ok = num("frame")
	case "RespStart":
		k.ID, ok = num("response")
	case "RespFinish":
		if c := e.Detail["cause"]; c == "finish" || c == "cancel" {
			k.ID, ok = num("response")
		}
	case "CompTrigger":
		k.ID, ok = num("job")
	case "Teardown":
		ok = true
	}
	return k, ok
}

// Windows checks that every event with a caller (see KeyOf) lies inside the
// window of an operation that claims it: windows maps each key to the
// windows of the operations whose results name it. It returns one line per
// event that does not.
func Windows(events []Stamped, windows map[EventKey][]Window) []string {
	var bad []string
	for _, s := range events {
		k, ok := KeyOf(s.Event)
		if !ok {
			continue
		}
		ws := windows[k]
		inside := false
		for _, w := range ws {
			if w.Contains(s.At) {
				inside = true
				break
			}
		}
		if !inside {
			bad = append(bad, fmt.Sprintf("%s#%d %s %d at %d: in no caller's window (candidates %v)",
				s.Event.Instance, s.Event.Seq, k.Action, k.ID, s.At, ws))
		}
	}
	return bad
}
