package session

import (
	"errors"
	"fmt"
)

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

// Response is one response: its streamed TTS audio, what of it was
// played, and how it ended.
type Response struct {
	worker
	out audioOut
}

// ID is the response's number within its session (from 1).
func (r *Response) ID() uint64 { return r.id }

// Audio streams the response's synthesized PCM16 audio, up to
// Config.AudioBuffer chunks ahead of the reader; a full stream holds the
// pipeline back (back-pressure) until it is read. Read it until it is
// closed.
//
// When the response completes on its own (or its pipeline fails), the
// stream is closed after its last chunk, and the chunks still buffered are
// delivered. When the response is ended before that — canceled, preempted,
// finished, interrupted by the user's speech (barge-in) or torn down with
// its session — its TTS pipeline stops and the chunks still buffered are
// discarded, before the call that ended it returns and before Done is
// closed: from then on a reader sees the end of the stream, never a stale
// chunk.
func (r *Response) Audio() <-chan []byte { return r.out.ch }

// Played acknowledges that n more bytes of the response's audio have been
// played out to the user (by the transport: the audio it has sent, or the
// client's playback position). When the response is ended before it
// completes, only the text whose audio was acknowledged in full enters the
// session's history. It is safe to call from any goroutine, at any time;
// n <= 0 is ignored.
func (r *Response) Played(n int) {
	if n > 0 {
		r.out.played.Add(int64(n))
	}
}

// PlayedBytes is the audio acknowledged so far with Played.
func (r *Response) PlayedBytes() int64 { return r.out.played.Load() }

// Text is the response's text whose audio has been sent in full so far.
func (r *Response) Text() string { return r.out.text(false) }

// Heard is the response's text whose audio has been acknowledged as played
// in full (see Played): what the user heard.
func (r *Response) Heard() string { return r.out.text(true) }

// Done is closed when the response has ended: completed, finished,
// canceled, preempted, interrupted, or torn down with its session.
func (r *Response) Done() <-chan struct{} { return r.done }

// Err reports how the response ended, once Done is closed: nil when it
// completed or was finished, ErrCanceled (by CancelResponse, or by the
// user's speech: barge-in), ErrPreempted, ErrClosed, or the error
// (possibly wrapping ErrChildPanic) of its work.
func (r *Response) Err() error { return r.result() }

// halt is called, once, when the response ends, before its end is
// committed. cut says the coordinator ended it before its pipeline
// returned: its stream is cut (the pipeline stops, buffered audio is
// discarded) and the history keeps the text the user heard. Otherwise the
// pipeline has returned, its stream holds the rest of its audio, and the
// history keeps all of its text. A response torn down with its session
// leaves no item.
func (r *Response) halt(s *Session, cut bool, err error) {
	text := ""
	if cut {
		r.out.cut()
		text = r.Heard()
	} else {
		text = r.Text()
	}
	if text == "" || errors.Is(err, ErrClosed) {
		return
	}
	s.record(HistoryItemPrefix + text)
}

// HistoryItemPrefix prefixes the history item a response leaves: its text,
// or, when it was cut short, what of it the user heard.
const HistoryItemPrefix = "assistant: "

type respOp int8

const (
	opStart   respOp = iota
	opCancel         // cancel the given response
	opFinish         // finish the given response
	opBargeIn        // the user's speech interrupts the active response, if any
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
	case opBargeIn:
		if c.state != RespActive {
			return c, out[*Response]{err: fmt.Errorf("%w: none active", ErrNoResponse)}
		}
		id := c.active
		c.active, c.state = 0, RespIdle
		return c, respEnded(id, ErrCanceled, "barge-in")
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
	r := &Response{out: newAudioOut(c.s.cfg.AudioBuffer, c.s.cfg.Clock)}
	r.worker = newWorker(id, &pipeline{cfg: &c.s.cfg, resp: r, prompt: in.prompt})
	r.worker.halt = func(cut bool, err error) { r.halt(c.s, cut, err) }
	r.worker.audit = r.out.audit
	return r, &r.worker
}
