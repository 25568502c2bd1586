package session

import (
	"fmt"
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
func (s VADState) String() string { return enumName(s, "VADState", "silent", "speech", "terminated") }

// TurnKind says what one audio frame did to the turn.
type TurnKind int8

// Turn kinds.
const (
	TurnNone    TurnKind = iota // nothing changed
	TurnStarted                 // speech started (VadStart)
	TurnStopped                 // speech stopped (VadStop)
)

// String returns the kind's name.
func (k TurnKind) String() string { return enumName(k, "TurnKind", "none", "started", "stopped") }

// TurnEvent is the result of pushing one frame: what it did to the turn,
// and the frame's number within the session (from 1).
type TurnEvent struct {
	Kind  TurnKind
	Frame uint64
	// BargeIn says that this frame brought the turn's speech to
	// Config.BargeInMinSpeech (once per turn): the user is talking over
	// the agent, and the session interrupts the active response.
	BargeIn bool
	// Interrupted says that the barge-in canceled a response (one was
	// active).
	Interrupted bool
}

// vadCore is M2's pure state; its steps are its only writers.
type vadCore struct {
	state   VADState
	quiet   int    // Config.SilenceFrames: the non-speech frames that end a turn
	silence int    // consecutive non-speech frames while in speech
	frames  uint64 // frames seen
	// Barge-in: minSpeech is Config.BargeInMinSpeech (<= 0: off), rate
	// Config.SampleRate; speech is the audio time of the speech frames of
	// the turn in progress, barged whether it has reached minSpeech.
	minSpeech time.Duration
	rate      int
	speech    time.Duration
	barged    bool
	// For the trace (M2's projection): quiet frames heard while silent
	// since the last turn, and, in the turn in progress, speech frames
	// heard in speech with no silence before them (held) and after some
	// (resumed).
	idle, held, resumed int
	// paused is the silence count when the detector was stopped (the
	// turn in a pause), for Teardown's detail.
	paused int
}

// frameIn is one audio frame: the caller's PCM and, once the detector has
// heard it, whether it is speech.
type frameIn struct {
	pcm    []int16
	speech bool
}

// step steps the core over one frame.
func (c vadCore) step(in frameIn) (vadCore, out[TurnEvent]) {
	if c.state == VADTerminated {
		return c, out[TurnEvent]{reply: TurnEvent{Frame: c.frames}}
	}
	c.frames++
	kind := TurnNone
	switch {
	case c.state == VADSilent && in.speech:
		c.state, c.silence, kind = VADSpeech, 0, TurnStarted
		c.speech, c.barged = 0, false
	case c.state == VADSilent:
		c.idle++
	case c.state == VADSpeech && in.speech:
		if c.silence > 0 {
			c.resumed++
		} else {
			c.held++
		}
		c.silence = 0
	case c.state == VADSpeech:
		c.silence++
		if c.silence >= c.quiet {
			c.state, c.silence, kind = VADSilent, 0, TurnStopped
		}
	}
	barge := false
	if in.speech && c.minSpeech > 0 && !c.barged {
		c.speech += c.frameTime(len(in.pcm))
		if c.speech >= c.minSpeech {
			c.barged, barge = true, true
		}
	}
	o := out[TurnEvent]{reply: TurnEvent{Kind: kind, Frame: c.frames, BargeIn: barge}}
	if kind != TurnNone {
		o.ev = event{action: ActVadStart, key: "frame", id: c.frames, extra: map[string]any{"quiet": c.idle}}
		if kind == TurnStopped {
			o.ev.action = ActVadStop
			o.ev.extra = map[string]any{"held": c.held, "resumed": c.resumed}
		}
		c.idle, c.held, c.resumed = 0, 0, 0
	}
	return c, o
}

// frameTime is the audio time of a frame of n samples.
func (c vadCore) frameTime(n int) time.Duration {
	return time.Duration(int64(n) * int64(time.Second) / int64(c.rate))
}

// terminate is the step taken when the VAD goroutine is joined.
func (c vadCore) terminate() vadCore {
	c.paused = c.silence
	c.state, c.silence = VADTerminated, 0
	return c
}

func (c vadCore) published() int8 { return int8(c.state) }

// vadCoord is the VAD coordinator (M2): the coordinator shape over
// vadCore, whose requests go through the detector first.
type vadCoord struct {
	*coord[vadCore, frameIn, TurnEvent]
}

func newVAD(s *Session) vadCoord {
	c := vadCoord{newCoord[vadCore, frameIn, TurnEvent](s, VarVad, vadCore{quiet: s.cfg.SilenceFrames,
		minSpeech: s.cfg.BargeInMinSpeech, rate: s.cfg.SampleRate})}
	c.input = c.detect
	return c
}

// detect runs the detector over the frame, in the VAD's goroutine. A panic
// in it fails the session.
func (c vadCoord) detect(in frameIn) (frameIn, error) {
	speech, err := c.speech(in.pcm)
	if err != nil {
		c.s.fail(err)
		return in, err
	}
	select {
	case <-c.s.kill: // abandoned while detecting: commit nothing more
		return in, ErrClosed
	default:
	}
	in.speech = speech
	return in, nil
}

func (c vadCoord) speech(pcm []int16) (speech bool, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: vad detector: %v", ErrChildPanic, r)
		}
	}()
	return c.s.cfg.Detector.Speech(pcm), nil
}
