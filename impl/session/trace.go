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

// emitLocked emits one event; the caller holds t.mu.
func (t *tracer) emitLocked(action string, state, detail map[string]any) {
	e := trace.Event{V: trace.Version, Instance: t.instance, Seq: t.seq, Action: action, State: state, Detail: detail}
	t.seq++
	if err := t.sink.Emit(e); err != nil {
		t.errs.Add(1)
	}
}
