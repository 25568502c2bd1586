package session

import (
	"fmt"
	"maps"
	"sync"
	"sync/atomic"
	"time"

	"github.com/tracecheck/tracecheck/trace"
)

// Variable names of spec/session.fizz, as this package emits them.
const (
	VarConn       = "conn"
	VarVad        = "vad"
	VarResp       = "resp"
	VarCompaction = "compaction"
)

// Action names of spec/session.fizz, as this package emits them.
const (
	ActVadStart    = "VadStart"
	ActVadStop     = "VadStop"
	ActRespStart   = "RespStart"
	ActRespFinish  = "RespFinish"
	ActCompTrigger = "CompTrigger"
	ActCompFinish  = "CompFinish"
	ActTeardown    = "Teardown"
)

// ActTTSClosed names the stutter event ("stutter": true) emitted when a
// response's TTS pipeline (M5) has stopped and closed its audio stream.
// session.fizz does not see M5, so the event changes no spec variable; it
// lets a checker see that "resp terminated => tts closed" held.
const ActTTSClosed = "TTSClosed"

// tracer serializes a session's commits and their events: a coordinator
// publishes its new state and emits the event under mu, so the order of a
// session's events is the order of its commits. A nil *tracer is tracing
// off.
type tracer struct {
	mu       sync.Mutex
	sink     trace.Sink
	instance string
	clock    func() time.Time
	seq      uint64
	errs     atomic.Int64
}

func newTracer(sink trace.Sink, instance string, clock func() time.Time) *tracer {
	if sink == nil {
		return nil
	}
	return &tracer{sink: sink, instance: instance, clock: clock}
}

// emitLocked emits ev, a step or a stutter, with state, the variables
// read from the real state of whoever committed it; the caller holds t.mu.
func (t *tracer) emitLocked(ev event, state map[string]any) {
	e := trace.Event{V: trace.Version, Instance: t.instance, Seq: t.seq, Action: ev.action, State: state, Detail: ev.detail(), Stutter: ev.stutter,
		Time: t.clock().UTC()}
	t.seq++
	if err := t.sink.Emit(e); err != nil {
		t.errs.Add(1)
	}
}

// detail is the event's detail map; Init's has only the configuration
// (ev.extra).
func (ev event) detail() map[string]any {
	if ev.action == trace.InitAction {
		return ev.extra
	}
	d := map[string]any{}
	maps.Copy(d, ev.extra)
	if ev.audio != nil {
		d["audio"] = ev.audio
	}
	if ev.key != "" {
		d[ev.key] = ev.id
	}
	if ev.preempted != 0 {
		d["preempted"] = ev.preempted
	}
	if ev.cause != "" {
		d["cause"] = ev.cause
	}
	if ev.err != nil {
		d["error"] = ev.err.Error()
	}
	if len(ev.abandoned) > 0 {
		d["abandoned"] = ev.abandoned
	}
	return d
}

// enumName is the String of a small enum: names[v], or Type(v) when v is
// out of range.
func enumName[T ~int8](v T, typ string, names ...string) string {
	if v >= 0 && int(v) < len(names) {
		return names[v]
	}
	return fmt.Sprintf("%s(%d)", typ, int8(v))
}
