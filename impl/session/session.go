package session

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/tracecheck/tracecheck/trace"
)

// ConnState is the state of the connection coordinator (M1), with the
// spec's values.
type ConnState int8

// Connection states.
const (
	ConnLive ConnState = 0 // accepting work
	ConnTorn ConnState = 1 // torn down (or tearing down): refusing work
)

// String returns the state's name.
func (s ConnState) String() string { return enumName(s, "ConnState", "live", "torn") }

// State is a snapshot of the four coordinators' published states. Each field
// is read atomically from its owner, but the four reads are not one atomic
// snapshot while the session is changing.
type State struct {
	Conn       ConnState
	VAD        VADState
	Resp       RespState
	Compaction CompactionState
}

// TeardownReport says how a session was torn down.
type TeardownReport struct {
	// Cause is why: nil for Close, or an error wrapping ErrChildPanic or
	// ErrConnectionDropped.
	Cause error
	// Abandoned names the children ("vad", "resp", "compaction") that did
	// not stop by Config.JoinTimeout; they may still be running.
	Abandoned []string
	// Final is the state recorded in the Teardown step.
	Final State
	// Took is how long teardown took.
	Took time.Duration
}

// Err is nil after a clean Close; otherwise it joins Cause with an error
// wrapping ErrAbandoned that names the abandoned children.
func (r TeardownReport) Err() error {
	var ab error
	if len(r.Abandoned) > 0 {
		ab = fmt.Errorf("%w: %s", ErrAbandoned, strings.Join(r.Abandoned, ", "))
	}
	return errors.Join(r.Cause, ab)
}

// Session is one realtime voice session: the connection coordinator (M1)
// and its children. Its methods are safe for concurrent use.
type Session struct {
	cfg   Config
	tr    *tracer
	vad   vadCoord
	resp  respCoord
	comp  compCoord
	conn  atomic.Int32 // ConnState, written only by the connection goroutine
	close chan struct{}
	failc chan error
	kill  chan struct{} // closed after Teardown: children still around exit
	torn  chan struct{} // closed when teardown begins (conn is ConnTorn)
	done  chan struct{}
	rep   TeardownReport
}

// New starts a session. Cancelling ctx is the connection dropping: the
// session tears itself down. New fails only on an invalid Config.
func New(ctx context.Context, cfg Config) (*Session, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if ctx == nil {
		ctx = context.Background()
	}
	s := &Session{cfg: cfg, tr: newTracer(cfg.Sink, cfg.Instance, cfg.Clock),
		close: make(chan struct{}), failc: make(chan error, 1),
		kill: make(chan struct{}), torn: make(chan struct{}), done: make(chan struct{})}
	s.vad, s.resp, s.comp = newVAD(s), newResp(s), newComp(s)
	init := event{action: trace.InitAction}
	if s.tr != nil {
		init.extra = map[string]any{"join_timeout": cfg.JoinTimeout.String(), "silence_frames": cfg.SilenceFrames,
			"barge_in_min_speech": cfg.BargeInMinSpeech.String()}
	}
	s.emitWhole(init)
	go s.vad.run()
	go s.resp.run()
	go s.comp.run()
	go s.run(ctx)
	return s, nil
}

func (s *Session) snapshot() State {
	return State{Conn: ConnState(s.conn.Load()), VAD: VADState(s.vad.spec()),
		Resp: RespState(s.resp.spec()), Compaction: CompactionState(s.comp.spec())}
}

// emitWhole emits ev, an event of the whole session (Init, Teardown), with
// all four variables read from the coordinators' real states, and returns
// that state.
func (s *Session) emitWhole(ev event) State {
	tr := s.tr
	if tr == nil {
		return s.snapshot()
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	st := s.snapshot()
	tr.emitLocked(ev, map[string]any{VarConn: int(st.Conn), VarVad: int(st.VAD), VarResp: int(st.Resp), VarCompaction: int(st.Compaction)})
	return st
}

// fail asks the connection to tear down because of err; the first cause
// wins. It never blocks.
func (s *Session) fail(err error) {
	select {
	case s.failc <- err:
	default:
	}
}

// run is the connection coordinator's goroutine.
func (s *Session) run(ctx context.Context) {
	var cause error
	exit := "close"
	select {
	case <-s.close:
	case err := <-s.failc:
		cause, exit = err, "panic"
	case <-ctx.Done():
		cause, exit = fmt.Errorf("%w: %w", ErrConnectionDropped, context.Cause(ctx)), "drop"
	}
	// The other exit paths that fired before teardown began, for the
	// trace (M1's exits): a Close waiting, the context done, a failure
	// sent. None of them changes what teardown does.
	exits := []string{exit}
	if exit != "close" {
		select {
		case <-s.close:
			exits = append(exits, "close")
		default:
		}
	}
	if exit != "drop" && ctx.Err() != nil {
		exits = append(exits, "drop")
	}
	if exit != "panic" {
		select {
		case <-s.failc:
			exits = append(exits, "panic")
		default:
		}
	}
	s.teardown(cause, exits)
}

// teardown stops and joins VAD, shuts down the response coordinator and
// cancels and joins compaction, all by one deadline, then emits the spec's
// Teardown as one step with the state each child ended in.
// exits name the exit paths that fired ("close", "drop", "panic": M1's),
// the one teardown acts on first.
func (s *Session) teardown(cause error, exits []string) {
	start, began := time.Now(), s.cfg.Clock()
	s.conn.Store(int32(ConnTorn))
	close(s.torn)
	abandoned := s.stopChildren(start.Add(s.cfg.JoinTimeout))
	ev := event{action: ActTeardown, abandoned: abandoned}
	if cause != nil && s.tr != nil {
		ev.cause = cause.Error()
	}
	if s.tr != nil {
		ev.extra = map[string]any{"exit": exits[0], "began": began.UTC().Format(time.RFC3339Nano)}
		if len(exits) > 1 {
			ev.extra["exits"] = exits
		}
		if !slices.Contains(abandoned, VarVad) && s.vad.state.paused > 0 {
			ev.extra["vad_silence"] = s.vad.state.paused // the turn was in a pause
		}
	}
	final := s.emitWhole(ev)
	close(s.kill)
	s.rep = TeardownReport{Cause: cause, Abandoned: abandoned, Final: final, Took: time.Since(start)}
	close(s.done)
}

// stopChildren asks every child to stop, all by the deadline, and returns
// the names of those it abandoned: those that did not take the request by
// the deadline, or that answered that they had to abandon work.
func (s *Session) stopChildren(deadline time.Time) (abandoned []string) {
	kids := [...]*child{&s.vad.child, &s.resp.child, &s.comp.child}
	// A child that takes the stop request answers by the deadline; a child
	// whose own goroutine is stuck does not take it at all. The timer is
	// made only if some child does not respond at once.
	var timer *time.Timer
	wait := func(d time.Duration) <-chan time.Time {
		if timer == nil {
			timer = time.NewTimer(d)
		}
		return timer.C
	}
	defer func() {
		if timer != nil {
			timer.Stop()
		}
	}()
	replies := make(chan stopResult, len(kids))
	var reqs [len(kids)]stopReq
	var busy [len(kids)]chan stopReq // the children not yet sent their request; nil (never ready) once sent
	var stopped [len(kids)]bool      // answered without abandoning anything
	pending := 0
	for i, k := range kids { // at once, to every child that is listening
		reqs[i] = stopReq{deadline: deadline, who: i, reply: replies}
		select {
		case k.stop <- reqs[i]:
			pending++
		default:
			busy[i] = k.stop
		}
	}
	// Then to the busy ones, all at once, until the deadline: one stuck
	// child must not keep the others from being stopped.
send:
	for unsent := len(kids) - pending; unsent > 0; unsent-- {
		var i int
		select {
		case busy[0] <- reqs[0]:
			i = 0
		case busy[1] <- reqs[1]:
			i = 1
		case busy[2] <- reqs[2]:
			i = 2
		case <-wait(time.Until(deadline)):
			timer = nil // expired: the children still busy are abandoned
			break send
		}
		busy[i] = nil
		pending++
	}
collect:
	for ; pending > 0; pending-- {
		var r stopResult
		select {
		case r = <-replies:
		default:
			select {
			case r = <-replies:
			case <-wait(max(time.Until(deadline), 0) + slack(s.cfg.JoinTimeout)):
				break collect
			}
		}
		stopped[r.who] = !r.abandoned
	}
	for i, k := range kids {
		if !stopped[i] {
			abandoned = append(abandoned, k.name)
		}
	}
	return abandoned
}

func slack(join time.Duration) time.Duration {
	return min(join/4, 100*time.Millisecond) + time.Millisecond
}

// Close tears the session down and waits for the teardown to finish. It
// returns the teardown's error (see TeardownReport.Err): nil after a clean
// close. Every later call returns the same.
func (s *Session) Close() error {
	select {
	case s.close <- struct{}{}:
	case <-s.done:
	}
	<-s.done
	return s.rep.Err()
}

// Done is closed when the session has been torn down.
func (s *Session) Done() <-chan struct{} { return s.done }

// Report says how the session was torn down; it is valid once Done is
// closed, and the zero report before.
func (s *Session) Report() TeardownReport {
	select {
	case <-s.done:
		return s.rep
	default:
		return TeardownReport{}
	}
}

// State returns the coordinators' published states.
func (s *Session) State() State { return s.snapshot() }

// TraceErrors counts events the Sink failed to take.
func (s *Session) TraceErrors() int64 {
	if s.tr == nil {
		return 0
	}
	return s.tr.errs.Load()
}

// PushAudio hands one frame of PCM16 mono audio to the VAD and returns what
// it did to the turn. It returns ErrClosed once the session is torn down,
// and an error wrapping ErrChildPanic if the detector panicked (which also
// tears the session down).
//
// Barge-in: when the frame brings the speech of the current turn to
// Config.BargeInMinSpeech, the active response, if any, is canceled (its
// Err is ErrCanceled, its TTS stops and its buffered audio is discarded)
// before PushAudio returns; the event says so (BargeIn, Interrupted).
func (s *Session) PushAudio(frame []int16) (TurnEvent, error) {
	ev, err := s.vad.call(frameIn{pcm: frame})
	if err != nil || !ev.BargeIn {
		return ev, err
	}
	_, err = s.resp.call(respIn{op: opBargeIn})
	switch {
	case err == nil:
		ev.Interrupted = true
	case errors.Is(err, ErrNoResponse), errors.Is(err, ErrClosed):
		// Nothing to interrupt, or the session is tearing down (its
		// responses end with it): the frame itself was taken.
	default:
		return ev, err
	}
	return ev, nil
}

// record appends a response's item to the history, unless the session is
// tearing down. It is called from the response coordinator's goroutine;
// the compaction coordinator never calls the response coordinator. It
// gives up as soon as teardown begins: the compaction coordinator may then
// be joining its work, not taking requests, and the response coordinator
// must stay free to take its own stop request (else it is abandoned).
func (s *Session) record(item string) {
	if ConnState(s.conn.Load()) == ConnTorn {
		return
	}
	s.appendItem(item)
}

// appendItem asks the compaction coordinator to append item to the
// history, giving up (ErrClosed) once teardown has begun.
func (s *Session) appendItem(item string) error {
	_, err := s.comp.callUnless(compIn{op: opAppend, item: item}, s.torn)
	return err
}

// StartResponse starts a response to prompt; a response already active is
// preempted (its Err becomes ErrPreempted). The response's TTS audio
// streams on its Audio channel.
func (s *Session) StartResponse(prompt string) (*Response, error) {
	return s.resp.call(respIn{op: opStart, prompt: prompt})
}

// CancelResponse aborts the active response id: its pipeline is closed and
// its Err is ErrCanceled. It returns ErrNoResponse if id is not active.
func (s *Session) CancelResponse(id uint64) error {
	_, err := s.resp.call(respIn{op: opCancel, id: id})
	return err
}

// FinishResponse ends the active response id normally (its Err is nil),
// closing its pipeline. It returns ErrNoResponse if id is not active.
func (s *Session) FinishResponse(id uint64) error {
	_, err := s.resp.call(respIn{op: opFinish, id: id})
	return err
}

// TriggerCompaction starts compacting the history. It returns ErrBusy if a
// compaction is running and ErrClosed after teardown.
func (s *Session) TriggerCompaction() (*CompactionJob, error) {
	if ConnState(s.conn.Load()) == ConnTorn {
		return nil, ErrClosed
	}
	r, err := s.comp.call(compIn{op: opTrigger})
	return r.job, err
}

// AppendHistory adds one item to the conversation history.
func (s *Session) AppendHistory(item string) error {
	if ConnState(s.conn.Load()) == ConnTorn {
		return ErrClosed
	}
	return s.appendItem(item)
}

// History returns a copy of the conversation history.
func (s *Session) History() ([]string, error) {
	r, err := s.comp.call(compIn{op: opHistory})
	return r.history, err
}
