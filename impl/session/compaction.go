package session

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"
)

// CompactionState is the state of the compaction coordinator (M4), with the
// spec's values.
type CompactionState int8

// Compaction states.
const (
	CompIdle       CompactionState = 0 // no compaction running
	CompRunning    CompactionState = 1 // a compaction is running
	CompTerminated CompactionState = 2 // canceled and joined at teardown
)

// String returns the state's name.
func (s CompactionState) String() string {
	switch s {
	case CompIdle:
		return "idle"
	case CompRunning:
		return "running"
	case CompTerminated:
		return "terminated"
	}
	return fmt.Sprintf("CompactionState(%d)", int8(s))
}

// CompactionJob is one compaction of the history.
type CompactionJob struct {
	id   uint64
	done chan struct{}
	err  error
}

// ID is the job's number within its session (from 1).
func (j *CompactionJob) ID() uint64 { return j.id }

// Done is closed when the job has ended and its result (if any) has been
// installed in the history.
func (j *CompactionJob) Done() <-chan struct{} { return j.done }

// Err reports, once Done is closed, how the job ended: nil when its result
// was installed, ErrClosed if teardown canceled it, or the compactor's
// error (possibly wrapping ErrChildPanic).
func (j *CompactionJob) Err() error {
	select {
	case <-j.done:
		return j.err
	default:
		return nil
	}
}

type compOp int8

const (
	opTrigger compOp = iota
	opCompDone
)

// compCore is M4's pure state.
type compCore struct {
	state CompactionState
	job   uint64 // the running job, 0 if none
	next  uint64
}

func (c compCore) step(op compOp, job uint64) (compCore, string, error) {
	if c.state == CompTerminated {
		return c, "", ErrClosed
	}
	switch op {
	case opTrigger:
		if c.state == CompRunning {
			return c, "", ErrBusy
		}
		c.next++
		c.job, c.state = c.next, CompRunning
		return c, ActCompTrigger, nil
	case opCompDone:
		if c.state != CompRunning || c.job != job {
			return c, "", nil
		}
		c.job, c.state = 0, CompIdle
		return c, ActCompFinish, nil
	}
	return c, "", fmt.Errorf("session: unknown compaction op %d", op)
}

func (c compCore) terminate() compCore {
	c.state, c.job = CompTerminated, 0
	return c
}

// Requests to the compaction coordinator besides its step's opTrigger.
const (
	reqTrigger = iota // TriggerCompaction
	reqAppend         // AppendHistory
	reqHistory        // History
)

type compReq struct {
	op    int // reqTrigger, reqAppend or reqHistory
	item  string
	reply chan compReply
}

type compReply struct {
	job     *CompactionJob
	history []string
	err     error
}

type compExit struct {
	job    uint64
	result []string
	err    error
}

// compCoord is the compaction coordinator (M4): one goroutine owns core and
// the conversation history.
type compCoord struct {
	s       *Session
	reqs    chan compReq
	exits   chan compExit
	stop    chan stopReq
	mutant  bool // Config.MutantFireAndForgetCompaction
	done    chan struct{}
	pub     atomic.Int32
	core    compCore
	history []string
	running *CompactionJob
	cutoff  int // history items the running job compacts
	cancel  context.CancelFunc
}

func newComp(s *Session) *compCoord {
	return &compCoord{s: s, reqs: make(chan compReq), exits: make(chan compExit),
		stop: make(chan stopReq), mutant: s.cfg.MutantFireAndForgetCompaction, done: make(chan struct{})}
}

func (c *compCoord) run() {
	defer close(c.done)
	kill := c.s.kill
	for {
		select {
		case r := <-c.reqs:
			r.reply <- c.handle(r)
		case ex := <-c.exits:
			c.exited(ex)
			if kill == nil && c.running == nil {
				return // the M4 mutant: the forgotten compaction ended by itself
			}
		case r := <-c.stop:
			res := c.shutdown(r.deadline)
			res.who = r.who
			r.reply <- res
			return
		case <-kill:
			if !c.mutant || c.running == nil {
				return
			}
			// The M4 mutant: nobody cancels or joins the in-flight
			// compaction; it runs on after its session, fire-and-forget.
			kill = nil
		}
	}
}

func (c *compCoord) handle(r compReq) compReply {
	switch r.op {
	case reqAppend:
		c.history = append(c.history, r.item)
		return compReply{}
	case reqHistory:
		return compReply{history: append([]string(nil), c.history...)}
	}
	next, action, err := c.core.step(opTrigger, 0)
	if err != nil {
		return compReply{err: err}
	}
	job := &CompactionJob{id: next.job, done: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	c.running, c.cutoff, c.cancel = job, len(c.history), cancel
	c.commit(next, action, nil)
	go c.work(ctx, job.id, append([]string(nil), c.history...))
	return compReply{job: job}
}

func (c *compCoord) work(ctx context.Context, id uint64, history []string) {
	result, err := c.compact(ctx, history)
	select {
	case c.exits <- compExit{job: id, result: result, err: err}:
	case <-c.done: // the coordinator is gone (it abandoned us)
	}
}

func (c *compCoord) compact(ctx context.Context, history []string) (result []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: compactor: %v", ErrChildPanic, r)
		}
	}()
	return c.s.cfg.Compactor.Compact(ctx, history)
}

func (c *compCoord) exited(ex compExit) {
	next, action, _ := c.core.step(opCompDone, ex.job)
	if action == "" {
		return
	}
	job := c.running
	if ex.err == nil {
		c.history = append(ex.result, c.history[c.cutoff:]...)
	}
	c.cancel()
	c.running, c.cutoff, c.cancel = nil, 0, nil
	c.commit(next, action, ex.err)
	job.err = ex.err
	close(job.done)
	if errors.Is(ex.err, ErrChildPanic) {
		c.s.fail(ex.err)
	}
}

func (c *compCoord) commit(next compCore, action string, workErr error) {
	tr := c.s.tr
	if tr == nil {
		c.core = next
		c.pub.Store(int32(next.state))
		return
	}
	tr.mu.Lock()
	job := c.core.job
	c.core = next
	c.pub.Store(int32(c.core.state))
	if action != "" {
		if action == ActCompTrigger {
			job = c.core.job
		}
		d := map[string]any{"job": job}
		if workErr != nil {
			d["error"] = workErr.Error()
		}
		tr.emitLocked(action, map[string]any{VarCompaction: int(c.core.state)}, d)
	}
	tr.mu.Unlock()
}

// shutdown cancels a running compaction and joins it by the deadline. If
// the compactor ignores cancellation the job is abandoned and the
// coordinator's real state stays CompRunning.
func (c *compCoord) shutdown(deadline time.Time) stopResult {
	if c.running != nil {
		c.cancel()
		timer := time.NewTimer(time.Until(deadline))
		defer timer.Stop()
	wait:
		for {
			select {
			case ex := <-c.exits:
				if ex.job == c.core.job {
					break wait
				}
			case <-timer.C:
				c.running.err = ErrClosed
				close(c.running.done)
				return stopResult{state: int8(c.core.state), abandoned: true}
			}
		}
		c.running.err = ErrClosed
		close(c.running.done)
		c.running = nil
	}
	c.commit(c.core.terminate(), "", nil)
	return stopResult{state: int8(c.core.state)}
}

func (c *compCoord) call(r compReq) compReply {
	r.reply = make(chan compReply, 1)
	select {
	case c.reqs <- r:
	case <-c.done:
		return compReply{err: ErrClosed}
	}
	return <-r.reply
}
