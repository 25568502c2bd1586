package session

import (
	"fmt"
	"sync/atomic"
	"time"
)

// VADState is the state of the VAD coordinator (M2), with the spec's values.
type VADState int8

// VAD states.
const (
	VADSilent     VADState = 0 // no turn in progress
	VADSpeech     VADState = 1 // a turn (speech) is in progress
	VADTerminated VADState = 2 // the VAD goroutine has been joined
)

// String returns the state's name.
func (s VADState) String() string {
	switch s {
	case VADSilent:
		return "silent"
	case VADSpeech:
		return "speech"
	case VADTerminated:
		return "terminated"
	}
	return fmt.Sprintf("VADState(%d)", int8(s))
}

// TurnKind says what one audio frame did to the turn.
type TurnKind int8

// Turn kinds.
const (
	TurnNone    TurnKind = iota // nothing changed
	TurnStarted                 // speech started (VadStart)
	TurnStopped                 // speech stopped (VadStop)
)

// String returns the kind's name.
func (k TurnKind) String() string {
	switch k {
	case TurnNone:
		return "none"
	case TurnStarted:
		return "started"
	case TurnStopped:
		return "stopped"
	}
	return fmt.Sprintf("TurnKind(%d)", int8(k))
}

// TurnEvent is the result of pushing one frame: what it did to the turn,
// and the frame's number within the session (from 1).
type TurnEvent struct {
	Kind  TurnKind
	Frame uint64
}

// vadCore is M2's pure state: the step functions below are its only
// writers.
type vadCore struct {
	state   VADState
	silence int    // consecutive non-speech frames while in speech
	frames  uint64 // frames seen
}

// frame steps the core over one frame classified by the detector.
func (c vadCore) frame(speech bool, silenceFrames int) (vadCore, TurnKind) {
	if c.state == VADTerminated {
		return c, TurnNone
	}
	c.frames++
	switch {
	case c.state == VADSilent && speech:
		c.state, c.silence = VADSpeech, 0
		return c, TurnStarted
	case c.state == VADSpeech && speech:
		c.silence = 0
	case c.state == VADSpeech:
		c.silence++
		if c.silence >= silenceFrames {
			c.state, c.silence = VADSilent, 0
			return c, TurnStopped
		}
	}
	return c, TurnNone
}

// terminate is the step taken when the VAD goroutine is joined.
func (c vadCore) terminate() vadCore {
	c.state, c.silence = VADTerminated, 0
	return c
}

type frameReq struct {
	pcm   []int16
	reply chan frameResult
}

type frameResult struct {
	ev  TurnEvent
	err error
}

// stopReq asks a child coordinator to stop; it answers by the deadline.
type stopReq struct {
	deadline time.Time
	who      int // echoed in the result
	reply    chan<- stopResult
}

// stopResult is a child's answer to stopReq: its state when it exits, and
// whether it had to abandon work that ignored cancellation.
type stopResult struct {
	who       int
	state     int8
	abandoned bool
}

// vadCoord is the VAD coordinator (M2): one goroutine owns core.
type vadCoord struct {
	s      *Session
	det    TurnDetector
	quiet  int
	frames chan frameReq
	stop   chan stopReq
	done   chan struct{}
	pub    atomic.Int32 // core.state, published by the owner after each commit
	core   vadCore
}

func newVAD(s *Session) *vadCoord {
	return &vadCoord{s: s, det: s.cfg.Detector, quiet: s.cfg.SilenceFrames,
		frames: make(chan frameReq), stop: make(chan stopReq), done: make(chan struct{})}
}

func (v *vadCoord) run() {
	defer close(v.done)
	for {
		select {
		case r := <-v.frames:
			r.reply <- v.handle(r.pcm)
		case r := <-v.stop:
			v.commit(v.core.terminate(), "", TurnEvent{})
			r.reply <- stopResult{who: r.who, state: int8(v.core.state)}
			return
		case <-v.s.kill:
			return
		}
	}
}

func (v *vadCoord) handle(pcm []int16) frameResult {
	speech, err := v.detect(pcm)
	if err != nil {
		v.s.fail(err)
		return frameResult{err: err}
	}
	select {
	case <-v.s.kill: // abandoned while detecting: commit nothing more
		return frameResult{err: ErrClosed}
	default:
	}
	next, kind := v.core.frame(speech, v.quiet)
	ev := TurnEvent{Kind: kind, Frame: next.frames}
	switch kind {
	case TurnStarted:
		v.commit(next, ActVadStart, ev)
	case TurnStopped:
		v.commit(next, ActVadStop, ev)
	default:
		v.core = next
	}
	return frameResult{ev: ev}
}

// commit installs next as the VAD's state, publishes it, and emits action
// (if any) with the state read back from the core.
func (v *vadCoord) commit(next vadCore, action string, ev TurnEvent) {
	tr := v.s.tr
	if tr == nil {
		v.core = next
		v.pub.Store(int32(next.state))
		return
	}
	tr.mu.Lock()
	v.core = next
	v.pub.Store(int32(v.core.state))
	if action != "" {
		tr.emitLocked(action, map[string]any{VarVad: int(v.core.state)}, map[string]any{"frame": ev.Frame})
	}
	tr.mu.Unlock()
}

func (v *vadCoord) detect(pcm []int16) (speech bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: vad detector: %v", ErrChildPanic, r)
		}
	}()
	return v.det.Speech(pcm), nil
}

func (v *vadCoord) push(pcm []int16) (TurnEvent, error) {
	r := frameReq{pcm: pcm, reply: make(chan frameResult, 1)}
	select {
	case v.frames <- r:
	case <-v.done:
		return TurnEvent{}, ErrClosed
	}
	res := <-r.reply
	return res.ev, res.err
}
