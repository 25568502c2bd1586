package session

import (
	"fmt"
	"time"

	"github.com/tracecheck/tracecheck/trace"
)

// Config configures a Session. The zero value is usable: every unset field
// gets the default documented on it.
type Config struct {
	// Instance names the session in its trace events. Default "session".
	Instance string
	// Sink receives trace events. Nil (or trace.Discard) turns tracing off,
	// at the cost of one nil check per transition. Emit is called with the
	// session's commit lock held, from several goroutines: it must be safe
	// for concurrent use, return promptly, and not call back into the
	// session.
	Sink trace.Sink

	// Detector decides, frame by frame, whether there is speech. Default
	// &EnergyDetector{}.
	Detector TurnDetector
	// SilenceFrames is how many consecutive non-speech frames end a turn
	// (VadStop). Default 15 (300 ms of 20 ms frames). Must be >= 1.
	SilenceFrames int
	// Generator produces a response's text. Default CannedGenerator{}.
	Generator Generator
	// Synthesizer turns text into streamed audio. Default
	// &PacedSynthesizer{}.
	Synthesizer Synthesizer
	// Compactor compacts the conversation history. Default
	// TruncatingCompactor{}.
	Compactor Compactor
	// SampleRate is the sample rate, in Hz, of the PCM16 mono frames given
	// to PushAudio; the VAD measures speech in audio time with it.
	// Default 16000. Must be >= 0.
	SampleRate int
	// BargeInMinSpeech is how much speech (audio time, counted over the
	// speech frames of the user's turn) interrupts the agent: when a turn's
	// speech reaches it, the active response, if any, is canceled, its TTS
	// stops and its buffered audio is discarded (barge-in; see
	// Session.PushAudio). It is counted once per turn: a response started
	// after that point in the turn is not interrupted. Default
	// DefaultBargeInMinSpeech (200 ms: a cough or a click does not
	// interrupt, a word does); a value up to one frame interrupts at the
	// turn's first speech frame; BargeInOff (any negative value) disables
	// barge-in.
	BargeInMinSpeech time.Duration
	// AudioBuffer is the capacity of each response's audio channel.
	// Default 16. Must be >= 0.
	AudioBuffer int
	// JoinTimeout bounds how long teardown waits for all children to
	// stop. Default 2s. Must be > 0.
	JoinTimeout time.Duration
	// Clock gives the time of each trace event ("time",
	// docs/trace-format.md), of a teardown's start and of a response's
	// last audio chunk, as the trace reports them; timing properties
	// (tracecheck check) are checked on them. Default time.Now. Deadlines
	// (JoinTimeout) and pacing use the real time.
	Clock func() time.Time
}

// Barge-in settings of Config.BargeInMinSpeech.
const (
	// DefaultBargeInMinSpeech is the default minimum speech that
	// interrupts a response.
	DefaultBargeInMinSpeech = 200 * time.Millisecond
	// BargeInOff disables barge-in: the user's speech never cancels a
	// response (the client may, with CancelResponse).
	BargeInOff time.Duration = -1
)

func (c Config) withDefaults() (Config, error) {
	if c.Instance == "" {
		c.Instance = "session"
	}
	if c.Clock == nil {
		c.Clock = time.Now
	}
	if c.Sink == trace.Discard {
		c.Sink = nil
	}
	if c.Detector == nil {
		c.Detector = &EnergyDetector{}
	}
	switch {
	case c.SilenceFrames == 0:
		c.SilenceFrames = 15
	case c.SilenceFrames < 0:
		return c, fmt.Errorf("%w: SilenceFrames %d < 0", ErrConfig, c.SilenceFrames)
	}
	if c.Generator == nil {
		c.Generator = CannedGenerator{}
	}
	if c.Synthesizer == nil {
		c.Synthesizer = &PacedSynthesizer{}
	}
	if c.Compactor == nil {
		c.Compactor = TruncatingCompactor{}
	}
	switch {
	case c.SampleRate == 0:
		c.SampleRate = 16000
	case c.SampleRate < 0:
		return c, fmt.Errorf("%w: SampleRate %d < 0", ErrConfig, c.SampleRate)
	}
	if c.BargeInMinSpeech == 0 {
		c.BargeInMinSpeech = DefaultBargeInMinSpeech
	}
	switch {
	case c.AudioBuffer == 0:
		c.AudioBuffer = 16
	case c.AudioBuffer < 0:
		return c, fmt.Errorf("%w: AudioBuffer %d < 0", ErrConfig, c.AudioBuffer)
	}
	switch {
	case c.JoinTimeout == 0:
		c.JoinTimeout = 2 * time.Second
	case c.JoinTimeout < 0:
		return c, fmt.Errorf("%w: JoinTimeout %v < 0", ErrConfig, c.JoinTimeout)
	}
	return c, nil
}
