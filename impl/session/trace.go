package session

import (
	"sync"
	"sync/atomic"

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
	seq      uint64
	errs     atomic.Int64
}

func newTracer(sink trace.Sink, instance string) *tracer {
	if sink == nil {
		return nil
	}
	return &tracer{sink: sink, instance: instance}
}

// emitStutterLocked emits one stutter event; the caller holds t.mu.
func (t *tracer) emitStutterLocked(action string, state, detail map[string]any) {
	e := trace.Event{V: trace.Version, Instance: t.instance, Seq: t.seq, Action: action, State: state, Detail: detail, Stutter: true}
	t.seq++
	if err := t.sink.Emit(e); err != nil {
		t.errs.Add(1)
	}
}

// emitLocked emits one event; the caller holds t.mu.
func (t *tracer) emitLocked(action string, state, detail map[string]any) {
	e := trace.Event{V: trace.Version, Instance: t.instance, Seq: t.seq, Action: action, State: state, Detail: detail}
	t.seq++
	if err := t.sink.Emit(e); err != nil {
		t.errs.Add(1)
	}
}
