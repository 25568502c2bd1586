package session

import (
	"context"
	"errors"
	"maps"
	"sync/atomic"
	"time"
)

// This file is the one coordinator shape, written once. In the style of
// etcd-raft (RawNode and Node), each child coordinator is
//
//   - a pure state machine: a small value S (vadCore, respCore, compCore)
//     whose steps take an input (a request, or the end of a worker) and
//     return the next value and what the step produced, as data (out): the
//     caller's reply, the trace event, the work to start or end; and
//   - coord[S], one generic goroutine that owns the value and is its only
//     writer. It takes requests (call), commits each step and emits its
//     event (commit), runs the workers a step starts and feeds their exits
//     back as steps (exited), and answers teardown (shutdown).
//
// A coordinator supplies only its pure step logic and the little that is
// not pure: how to turn a request into the step's input (M2 runs its
// detector) and what a started worker runs (M3 a TTS pipeline, M4 the
// compactor).

// stepper is the pure part of a coordinator: a value S and deterministic
// steps over it. None of its methods reads a clock, starts a goroutine or
// does I/O; what a step wants done, it returns.
type stepper[S, In, R any] interface {
	// step is the transition for one request. A refused request (out.err
	// set) returns the state unchanged.
	step(in In) (S, out[R])
	// terminate is the state once the coordinator has stopped with no
	// work left running.
	terminate() S
	// published is the value of its spec variable, which the coordinator
	// publishes after each commit for readers outside its goroutine.
	published() int8
}

// out is what one step produced, as data.
type out[R any] struct {
	reply  R      // to the caller
	err    error  // to the caller: the request is refused and nothing changed
	ev     event  // the trace event of the transition, if ev.action != ""
	start  uint64 // the worker to start, numbered start (0: none)
	end    uint64 // the worker whose work ends (0: none): it is canceled, and its Err is endErr
	endErr error
}

// event is a trace event as a step describes it: the action and its
// detail. The state it carries is read from the coordinator's real state
// when it is emitted; its maps are built only when tracing is on.
type event struct {
	action    string // "" is no event
	stutter   bool   // a change the spec does not see (M5)
	key       string // the detail naming the operation's number: "frame", "response" or "job"
	id        uint64
	preempted uint64   // RespStart: the response it preempted
	cause     string   // RespFinish: why the response ended; Teardown: why the session did
	err       error    // the work's error
	abandoned []string // Teardown: the children abandoned
	// For the machine specs' projections (docs/trace-format.md, "One
	// trace, every spec"); set only when tracing is on.
	audio map[string]any // the audio stream of the response the event ends (or whose pipeline returned)
	extra map[string]any // more detail: Init's configuration, Teardown's exit path and start, the VAD's frame counts
}

// task is the work a worker runs (a response's TTS pipeline, a compaction
// job). It must return when ctx is done, with what it produced (a
// compaction's history) and its error.
type task interface {
	run(ctx context.Context) (result []string, err error)
}

// taskFunc is a task that is a function.
type taskFunc func(ctx context.Context) ([]string, error)

func (f taskFunc) run(ctx context.Context) ([]string, error) { return f(ctx) }

// worker is one task a coordinator runs in its own goroutine, and what the
// caller holds of it (a Response, a CompactionJob embed it): its number
// and, once done is closed, how it ended. Its other fields belong to the
// coordinator's goroutine.
type worker struct {
	id     uint64
	done   chan struct{}
	err    error // set before done is closed
	task   task
	ctx    context.Context
	cancel context.CancelFunc
	ended  bool
	// halt, if set, is called once, when the work ends and before that end
	// is committed: cut says the coordinator ends it before it returned
	// (a response's stream is then cut), err is the error its caller sees.
	halt   func(cut bool, err error)
	halted bool
	// audit, if set, describes the work's output for the trace (a
	// response's audio stream), read from its real state; ended says
	// that the coordinator ended the work before it returned (its output
	// must then hold nothing more for a reader).
	audit func(ended bool) map[string]any
	// returned is set when the work has returned (before its end reaches
	// the coordinator), closed when teardown ended it (shutdown): for the
	// trace.
	returned atomic.Bool
	closed   bool
	// running: teardown ended it before it had returned (for the trace).
	running bool
}

func newWorker(id uint64, t task) worker {
	ctx, cancel := context.WithCancel(context.Background())
	return worker{id: id, done: make(chan struct{}), task: t, ctx: ctx, cancel: cancel}
}

// result is the work's error once done is closed, and nil before.
func (w *worker) result() error {
	select {
	case <-w.done:
		return w.err
	default:
		return nil
	}
}

// end cancels the work and, the first time, ends it for the caller with
// err.
func (w *worker) end(err error) {
	w.stop(true, err)
	w.cancel()
	if !w.ended {
		w.ended = true
		w.err = err
		close(w.done)
	}
}

// stop halts the work's output, the first time (see worker.halt).
func (w *worker) stop(cut bool, err error) {
	if w.halt != nil && !w.halted {
		w.halted = true
		w.halt(cut, err)
	}
}

// exit is a worker's end as its coordinator is told: which worker, what
// its work produced (a compaction's history) and its error.
type exit struct {
	id     uint64
	result []string
	err    error
}

// stopReq asks a child coordinator to stop; it answers by the deadline.
type stopReq struct {
	deadline time.Time
	who      int // echoed in the result
	reply    chan<- stopResult
}

// stopResult is a child's answer to stopReq: whether it had to abandon work
// that ignored cancellation.
type stopResult struct {
	who       int
	abandoned bool
}

// child is what the connection coordinator (M1) sees of a child
// coordinator.
type child struct {
	name string       // its spec variable, and its name in TeardownReport.Abandoned
	pub  atomic.Int32 // stepper.published, stored after each commit
	stop chan stopReq
	done chan struct{} // closed when its goroutine has returned
}

// spec is the child's spec variable's value, as last published.
func (c *child) spec() int8 { return int8(c.pub.Load()) }

type request[In, R any] struct {
	in    In
	reply chan reply[R]
}

type reply[R any] struct {
	v   R
	err error
}

// coord is the one coordinator shape: a goroutine (run) that owns a
// stepper's state and is the only writer of it.
type coord[S stepper[S, In, R], In, R any] struct {
	child
	s     *Session
	state S
	reqs  chan request[In, R]
	exits chan exit          // nil if the coordinator runs no workers
	live  map[uint64]*worker // workers whose goroutine has not ended
	// input turns a request into the step's input, in the coordinator's
	// goroutine (M2 runs its detector there); nil keeps it as it is.
	input func(In) (In, error)
	// What a coordinator that runs workers adds (withWorkers):
	spawn  func(id uint64, in In, next S) (R, *worker) // makes the worker a step starts, and the caller's reply
	ended  func(S, exit) (S, out[R])                   // the core's (pure) step for a worker's end
	joined func(id uint64) event                       // the stutter event a worker's end emits; nil: none
}

func newCoord[S stepper[S, In, R], In, R any](s *Session, name string, init S) *coord[S, In, R] {
	c := &coord[S, In, R]{s: s, state: init, reqs: make(chan request[In, R])}
	c.name, c.stop, c.done = name, make(chan stopReq), make(chan struct{})
	c.pub.Store(int32(init.published()))
	return c
}

// withWorkers makes c a coordinator that runs workers: spawn makes them,
// ended is its core's step for a worker's end, and joined (nil: none) is
// the stutter event that end emits.
func (c *coord[S, In, R]) withWorkers(spawn func(uint64, In, S) (R, *worker),
	ended func(S, exit) (S, out[R]), joined func(uint64) event) {
	c.spawn, c.ended, c.joined, c.exits = spawn, ended, joined, make(chan exit)
}

// run is the coordinator's goroutine.
func (c *coord[S, In, R]) run() {
	defer close(c.done)
	for {
		select {
		case r := <-c.reqs:
			v, err := c.serve(r.in)
			r.reply <- reply[R]{v, err}
		case ex := <-c.exits:
			c.exited(ex)
		case r := <-c.stop:
			r.reply <- stopResult{who: r.who, abandoned: c.shutdown(r.deadline)}
			return
		case <-c.s.kill: // teardown abandoned us: we took no stop request
			// Our work still ends: its callers are told ErrClosed and its
			// goroutines stop (they report to no one: done is closing).
			for _, w := range c.live {
				w.end(ErrClosed)
			}
			return
		}
	}
}

// call sends in to the coordinator's goroutine and returns its reply, or
// ErrClosed once the coordinator is gone.
func (c *coord[S, In, R]) call(in In) (R, error) { return c.callUnless(in, nil) }

// callUnless is call, except that it gives up (ErrClosed) if abort is
// closed before the coordinator takes the request (a nil abort never is).
func (c *coord[S, In, R]) callUnless(in In, abort <-chan struct{}) (R, error) {
	r := request[In, R]{in: in, reply: make(chan reply[R], 1)}
	select {
	case c.reqs <- r:
	case <-c.done:
		var zero R
		return zero, ErrClosed
	case <-abort:
		var zero R
		return zero, ErrClosed
	}
	rep := <-r.reply
	return rep.v, rep.err
}

// serve steps the state over one request and carries out the step.
func (c *coord[S, In, R]) serve(in In) (R, error) {
	if c.input != nil {
		var err error
		if in, err = c.input(in); err != nil {
			var zero R
			return zero, err
		}
	}
	next, o := c.state.step(in)
	if o.err != nil {
		return o.reply, o.err
	}
	var w *worker
	if o.start != 0 {
		o.reply, w = c.spawn(o.start, in, next)
	}
	c.halt(o.end, o.endErr, true)
	c.audit(o.end, true, &o.ev)
	c.commit(next, o.ev)
	c.end(o.end, o.endErr)
	if w != nil {
		c.launch(w)
	}
	return o.reply, nil
}

// exited carries out the end of a worker: its stutter, then its step.
func (c *coord[S, In, R]) exited(ex exit) {
	c.stutter(ex.id)
	next, o := c.ended(c.state, ex)
	c.halt(o.end, o.endErr, false)
	c.audit(o.end, false, &o.ev)
	c.commit(next, o.ev)
	c.end(o.end, o.endErr)
	delete(c.live, ex.id)
	if errors.Is(ex.err, ErrChildPanic) {
		c.s.fail(ex.err)
	}
}

// commit makes next the coordinator's real state, publishes it, and emits
// ev — a step, or a stutter when next is the state it had — carrying the
// coordinator's variable read back from the real state. Commits and
// emission share the tracer's lock, so a session's events are in commit
// order.
func (c *coord[S, In, R]) commit(next S, ev event) {
	tr := c.s.tr
	if tr == nil || ev.action == "" {
		c.state = next
		c.pub.Store(int32(next.published()))
		return
	}
	if ConnState(c.s.conn.Load()) == ConnTorn { // a commit after teardown began: the machine specs' ConnTorn
		ev.extra = maps.Clone(ev.extra)
		if ev.extra == nil {
			ev.extra = map[string]any{}
		}
		ev.extra["torn"] = true
	}
	tr.mu.Lock()
	c.state = next
	c.pub.Store(int32(c.state.published()))
	tr.emitLocked(ev, map[string]any{c.name: int(c.spec())})
	tr.mu.Unlock()
}

// stutter emits the stutter event of worker id's end, if the coordinator
// has one: a commit that changes nothing.
func (c *coord[S, In, R]) stutter(id uint64) {
	if c.joined != nil {
		ev := c.joined(id)
		c.audit(id, c.live[id] != nil && c.live[id].ended, &ev)
		c.commit(c.state, ev)
	}
}

// audit adds to ev, when tracing is on, what worker id's audit says of
// its output (id 0: none); ended as for worker.audit.
func (c *coord[S, In, R]) audit(id uint64, ended bool, ev *event) {
	if w := c.live[id]; id != 0 && w != nil && w.audit != nil && c.s.tr != nil && ev.action != "" {
		ev.audio = w.audit(ended)
		if w.returned.Load() {
			ev.audio["returned"] = true
		}
		if w.closed {
			ev.audio["closed"] = true
			if w.running {
				ev.audio["running"] = true
			}
		}
	}
}

// halt halts the output of worker id, whose work ends with err, before
// that end is committed (id 0: none); cut says the work had not returned.
func (c *coord[S, In, R]) halt(id uint64, err error, cut bool) {
	if w := c.live[id]; id != 0 && w != nil {
		w.stop(cut, err)
	}
}

// end ends worker id's work with err (id 0: none).
func (c *coord[S, In, R]) end(id uint64, err error) {
	if w := c.live[id]; id != 0 && w != nil {
		w.end(err)
	}
}

// launch runs w in its own goroutine.
func (c *coord[S, In, R]) launch(w *worker) {
	if c.live == nil {
		c.live = make(map[uint64]*worker)
	}
	c.live[w.id] = w
	go c.work(w)
}

// work is a worker's goroutine: it runs the task and reports its end on
// exits.
func (c *coord[S, In, R]) work(w *worker) {
	result, err := w.task.run(w.ctx)
	w.returned.Store(true)
	w.cancel()
	select {
	case c.exits <- exit{id: w.id, result: result, err: err}:
	case <-c.done: // the coordinator is gone (it abandoned us)
	}
}

// shutdown ends every worker with ErrClosed and joins them by the
// deadline. Only if all are joined does the coordinator reach its
// terminated state; otherwise its real state stays what it was, and
// shutdown reports that it abandoned work.
func (c *coord[S, In, R]) shutdown(deadline time.Time) (abandoned bool) {
	if len(c.live) > 0 {
		for _, w := range c.live {
			w.closed, w.running = true, !w.returned.Load()
			w.end(ErrClosed)
		}
		timer := time.NewTimer(time.Until(deadline))
		defer timer.Stop()
		for len(c.live) > 0 {
			select {
			case ex := <-c.exits:
				c.stutter(ex.id)
				delete(c.live, ex.id)
			case <-timer.C:
				return true
			}
		}
	}
	c.commit(c.state.terminate(), event{})
	return false
}
