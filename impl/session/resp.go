package session

import "fmt"

// RespState is the state of the response coordinator (M3), with the spec's
// values.
type RespState int8

// Response coordinator states.
const (
	RespIdle       RespState = 0 // no response active
	RespActive     RespState = 1 // a response is being generated and spoken
	RespTerminated RespState = 2 // shut down: no response will start again
)

// String returns the state's name.
func (s RespState) String() string { return enumName(s, "RespState", "idle", "active", "terminated") }

// Response is one response: its streamed TTS audio, and how it ended.
type Response struct {
	worker
	audio chan []byte
}

// ID is the response's number within its session (from 1).
func (r *Response) ID() uint64 { return r.id }

// Audio streams the response's synthesized PCM16 audio. It is closed when
// the response's TTS pipeline has stopped, which may be shortly before or
// after Done. Read it until it is closed: a full stream holds the pipeline
// back (back-pressure) until it is read, or the response is finished,
// canceled, preempted or torn down.
func (r *Response) Audio() <-chan []byte { return r.audio }

// Done is closed when the response has ended: completed, finished,
// canceled, preempted, or torn down with its session.
func (r *Response) Done() <-chan struct{} { return r.done }

// Err reports how the response ended, once Done is closed: nil when it
// completed or was finished, ErrCanceled, ErrPreempted, ErrClosed, or the
// error (possibly wrapping ErrChildPanic) of its work.
func (r *Response) Err() error { return r.result() }

type respOp int8

const (
	opStart  respOp = iota
	opCancel        // cancel the given response
	opFinish        // finish the given response
)

// respIn is a request to the response coordinator.
type respIn struct {
	op     respOp
	id     uint64 // the response to cancel or finish
	prompt string // the response to start
}

// respCore is M3's pure state.
type respCore struct {
	state  RespState
	active uint64 // the active response, 0 if none
	next   uint64 // last response number handed out
}

// step is the transition for a caller's request: start a response
// (preempting the active one), or cancel or finish the active one.
func (c respCore) step(in respIn) (respCore, out[*Response]) {
	if c.state == RespTerminated {
		return c, out[*Response]{err: ErrClosed}
	}
	switch in.op {
	case opStart:
		o := out[*Response]{ev: event{action: ActRespStart, key: "response"}}
		if c.state == RespActive {
			o.end, o.endErr, o.ev.preempted = c.active, ErrPreempted, c.active
		}
		c.next++
		c.active, c.state = c.next, RespActive
		o.start, o.ev.id = c.next, c.next
		return c, o
	case opCancel, opFinish:
		if c.state != RespActive || c.active != in.id {
			return c, out[*Response]{err: fmt.Errorf("%w: %d", ErrNoResponse, in.id)}
		}
		c.active, c.state = 0, RespIdle
		if in.op == opCancel {
			return c, respEnded(in.id, ErrCanceled, "cancel")
		}
		return c, respEnded(in.id, nil, "finish")
	}
	return c, out[*Response]{err: fmt.Errorf("session: unknown response op %d", in.op)}
}

// exited is the step taken when response ex.id's pipeline has returned:
// the response completes, unless it already ended (preempted, canceled).
func (c respCore) exited(ex exit) (respCore, out[*Response]) {
	if c.state != RespActive || c.active != ex.id {
		return c, out[*Response]{} // a preempted or canceled pipeline ending late
	}
	c.active, c.state = 0, RespIdle
	if ex.err != nil {
		o := respEnded(ex.id, ex.err, "error")
		o.ev.err = ex.err
		return c, o
	}
	return c, respEnded(ex.id, nil, "complete")
}

// respEnded is the output of a step that ends response id with err.
func respEnded(id uint64, err error, cause string) out[*Response] {
	return out[*Response]{end: id, endErr: err, ev: event{action: ActRespFinish, key: "response", id: id, cause: cause}}
}

// ttsClosed is the event of response id's pipeline having stopped and
// closed its audio stream. M5 is invisible to the spec, so it is a
// stutter, carrying resp unchanged.
func ttsClosed(id uint64) event {
	return event{action: ActTTSClosed, stutter: true, key: "response", id: id}
}

// terminate is the step taken once every pipeline has been joined.
func (c respCore) terminate() respCore {
	c.state, c.active = RespTerminated, 0
	return c
}

func (c respCore) published() int8 { return int8(c.state) }

// respCoord is the response coordinator (M3): the coordinator shape over
// respCore, whose workers are the responses' TTS pipelines (M5).
type respCoord struct {
	*coord[respCore, respIn, *Response]
}

func newResp(s *Session) respCoord {
	c := respCoord{newCoord[respCore, respIn, *Response](s, VarResp, respCore{})}
	c.withWorkers(c.spawn, respCore.exited, ttsClosed)
	return c
}

// spawn makes response id and its TTS pipeline.
func (c respCoord) spawn(id uint64, in respIn, _ respCore) (*Response, *worker) {
	r := &Response{audio: make(chan []byte, c.s.cfg.AudioBuffer)}
	r.worker = newWorker(id, &pipeline{cfg: &c.s.cfg, resp: r, prompt: in.prompt})
	return r, &r.worker
}
