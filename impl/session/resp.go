package session

import (
	"errors"
	"fmt"
	"runtime"
	"sync/atomic"
	"time"
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
func (s RespState) String() string {
	switch s {
	case RespIdle:
		return "idle"
	case RespActive:
		return "active"
	case RespTerminated:
		return "terminated"
	}
	return fmt.Sprintf("RespState(%d)", int8(s))
}

// Response is one response: its streamed TTS audio, and how it ended.
type Response struct {
	id    uint64
	audio chan []byte
	done  chan struct{}
	err   error
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
func (r *Response) Err() error {
	select {
	case <-r.done:
		return r.err
	default:
		return nil
	}
}

type respOp int8

const (
	opStart        respOp = iota
	opCancel              // cancel the given response
	opFinish              // finish the given response
	opFinishActive        // finish whatever is active (TestOnlyRacyFinish)
	opCompleted           // a pipeline's work returned
)

// respCore is M3's pure state.
type respCore struct {
	state  RespState
	active uint64 // the active response, 0 if none
	next   uint64 // last response number handed out
}

// respOut is what one step of respCore asks its goroutine to do.
type respOut struct {
	err    error  // the caller's result
	id     uint64 // the started response
	action string // the spec action committed, or ""
	cause  string // why a response ended
	end    uint64 // the response that ended (its pipeline is stopped)
	endErr error  // that response's Err
}

func (c respCore) step(op respOp, id uint64, workErr error) (respCore, respOut) {
	if c.state == RespTerminated {
		return c, respOut{err: ErrClosed}
	}
	switch op {
	case opStart:
		var out respOut
		if c.state == RespActive {
			out.end, out.endErr, out.cause = c.active, ErrPreempted, "preempt"
		}
		c.next++
		c.active, c.state = c.next, RespActive
		out.id, out.action = c.next, ActRespStart
		return c, out
	case opCancel, opFinish, opFinishActive:
		if op == opFinishActive {
			id = c.active
		}
		if c.state != RespActive || c.active != id {
			return c, respOut{err: fmt.Errorf("%w: %d", ErrNoResponse, id)}
		}
		out := respOut{action: ActRespFinish, end: id, cause: "finish"}
		if op == opCancel {
			out.endErr, out.cause = ErrCanceled, "cancel"
		}
		c.active, c.state = 0, RespIdle
		return c, out
	case opCompleted:
		if c.state != RespActive || c.active != id {
			return c, respOut{} // a preempted or canceled pipeline ending late
		}
		c.active, c.state = 0, RespIdle
		cause := "complete"
		if workErr != nil {
			cause = "error"
		}
		return c, respOut{action: ActRespFinish, end: id, endErr: workErr, cause: cause}
	}
	return c, respOut{err: fmt.Errorf("session: unknown response op %d", op)}
}

// terminate is the step taken once every pipeline has been joined.
func (c respCore) terminate() respCore {
	c.state, c.active = RespTerminated, 0
	return c
}

type respReq struct {
	op     respOp
	id     uint64
	prompt string
	reply  chan respReply
}

type respReply struct {
	resp *Response
	err  error
}

type pipelineExit struct {
	id  uint64
	err error
}

// respCoord is the response coordinator (M3): one goroutine owns core and
// the TTS pipelines (M5) of its responses.
type respCoord struct {
	s         *Session
	reqs      chan respReq
	exits     chan pipelineExit
	stop      chan stopReq
	done      chan struct{}
	pub       atomic.Int32  // core.state
	activePub atomic.Uint64 // core.active (read only by TestOnlyRacyFinish)
	core      respCore
	live      map[uint64]*pipeline // pipelines whose work has not returned
}

func newResp(s *Session) *respCoord {
	return &respCoord{s: s, reqs: make(chan respReq), exits: make(chan pipelineExit),
		stop: make(chan stopReq), done: make(chan struct{}), live: map[uint64]*pipeline{}}
}

func (c *respCoord) run() {
	defer close(c.done)
	for {
		select {
		case r := <-c.reqs:
			r.reply <- c.handle(r)
		case ex := <-c.exits:
			c.exited(ex)
		case r := <-c.stop:
			res := c.shutdown(r.deadline)
			res.who = r.who
			r.reply <- res
			return
		case <-c.s.kill:
			return
		}
	}
}

func (c *respCoord) handle(r respReq) respReply {
	next, out := c.core.step(r.op, r.id, nil)
	if out.err != nil {
		return respReply{err: out.err}
	}
	var p *pipeline
	if out.id != 0 {
		p = newPipeline(c, out.id, r.prompt)
	}
	c.commit(next, out)
	if p != nil {
		c.live[p.resp.id] = p
		p.start()
		return respReply{resp: p.resp}
	}
	return respReply{}
}

func (c *respCoord) exited(ex pipelineExit) {
	c.ttsClosed(ex.id)
	next, out := c.core.step(opCompleted, ex.id, ex.err)
	if out.action != "" {
		c.commit(next, out) // ends the response
	}
	delete(c.live, ex.id)
	if errors.Is(ex.err, ErrChildPanic) {
		c.s.fail(ex.err)
	}
}

// ttsClosed records that response id's TTS pipeline (M5) has stopped and
// closed its audio stream. The spec does not see M5 (it is internal to
// resp), so the event is a stutter: it carries resp, unchanged.
func (c *respCoord) ttsClosed(id uint64) {
	tr := c.s.tr
	if tr == nil {
		return
	}
	tr.mu.Lock()
	tr.emitStutterLocked(ActTTSClosed, map[string]any{VarResp: int(c.core.state)}, map[string]any{"response": id})
	tr.mu.Unlock()
}

// commit installs next, ends the response out.end (stopping its pipeline)
// and emits out.action with the state read back from the core.
func (c *respCoord) commit(next respCore, out respOut) {
	if tr := c.s.tr; tr != nil {
		tr.mu.Lock()
		c.install(next)
		if out.action != "" {
			d := map[string]any{"response": out.id}
			if out.action == ActRespFinish {
				d["response"], d["cause"] = out.end, out.cause
			} else if out.end != 0 {
				d["preempted"] = out.end
			}
			if out.endErr != nil && out.cause == "error" {
				d["error"] = out.endErr.Error()
			}
			tr.emitLocked(out.action, map[string]any{VarResp: int(c.core.state)}, d)
		}
		tr.mu.Unlock()
	} else {
		c.install(next)
	}
	if p := c.live[out.end]; out.end != 0 && p != nil {
		p.cancel()
		p.end(out.endErr)
	}
}

func (c *respCoord) install(next respCore) {
	c.core = next
	c.activePub.Store(next.active)
	c.pub.Store(int32(next.state))
}

// shutdown cancels every pipeline and joins them by the deadline. Only if
// all are joined does the coordinator reach RespTerminated; otherwise its
// real state stays what it was and the result says abandoned.
func (c *respCoord) shutdown(deadline time.Time) stopResult {
	for _, p := range c.live {
		p.cancel()
		p.end(ErrClosed)
	}
	var timer *time.Timer
	if len(c.live) > 0 {
		timer = time.NewTimer(time.Until(deadline))
		defer timer.Stop()
	}
	for len(c.live) > 0 {
		select {
		case ex := <-c.exits:
			c.ttsClosed(ex.id)
			delete(c.live, ex.id)
		case <-timer.C:
			return stopResult{state: int8(c.core.state), abandoned: true}
		}
	}
	c.commit(c.core.terminate(), respOut{})
	return stopResult{state: int8(c.core.state)}
}

func (c *respCoord) call(r respReq) respReply {
	r.reply = make(chan respReply, 1)
	select {
	case c.reqs <- r:
	case <-c.done:
		return respReply{err: ErrClosed}
	}
	return <-r.reply
}

func (c *respCoord) finishRacy(id uint64) error {
	if RespState(c.pub.Load()) == RespTerminated {
		return ErrClosed
	}
	if c.activePub.Load() != id { // check ...
		return fmt.Errorf("%w: %d", ErrNoResponse, id)
	}
	runtime.Gosched()                                      // ... (widening the window) ...
	return c.call(respReq{op: opFinishActive, id: id}).err // ... then act on whatever is active now
}
