package session

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"time"

	"github.com/tracecheck/tracecheck/trace"
)

// DemoConfig configures [RunDemo].
type DemoConfig struct {
	// Sessions is how many sessions run concurrently. Default 1.
	Sessions int
	// Turns is how many user turns each session hears: exactly, in the
	// plain mix (default 3); on average, in the realistic mix (each
	// session plans 1 to 2·Turns−1, and may end sooner; default 4).
	Turns int
	// Speed divides the pacing of the microphone's audio and of TTS (1 is
	// real time). Default 20.
	Speed float64
	// Mix is the workload. The zero value is MixRealistic.
	Mix Mix
	// Seed seeds the realistic mix (0: DefaultDemoSeed). A seed fixes
	// every scripted session's plan and script, hence its trace of spec
	// transitions; the racing sessions' interleavings are the scheduler's.
	Seed int64
	// Sink receives every session's trace events (nil: no trace).
	Sink trace.Sink
	// BargeInMinSpeech is every session's Config.BargeInMinSpeech (0: the
	// default, DefaultBargeInMinSpeech; BargeInOff disables barge-in).
	BargeInMinSpeech time.Duration
}

// DemoReport summarises a demo run. The fields after AudioBytes are the
// realistic mix's (zero in the plain one).
type DemoReport struct {
	Sessions, Turns, Responses, Compactions int
	AudioBytes                              int64
	// Scripted and Racing count the two kinds of session in the mix.
	Scripted, Racing int
	// BargeIns counts turns the user began while a response was speaking.
	BargeIns int
	// How the responses ended: Completed (its generation ended, or the
	// client finished it: Finished of them), Canceled (barge-in),
	// Preempted (a newer response replaced it), FailedResponses (an error
	// or a panic in its pipeline), ClosedResponses (torn down with the
	// session).
	Completed, Finished, Canceled, Preempted, FailedResponses, ClosedResponses int
	// Interrupted counts the responses the session canceled itself when
	// the user's speech reached Config.BargeInMinSpeech (barge-in); they
	// are among Canceled.
	Interrupted int
	// LateAudio counts audio chunks the client received from a response
	// after it had been canceled, preempted or torn down (by a receive
	// begun after the response's Done was closed). It must be 0: a
	// response ended early has its buffered audio discarded.
	LateAudio int64
	// SentAfterCancel counts the audio chunks a TTS pipeline still put on
	// a response's stream although the response's work had been canceled
	// before the send. It must be 0: an ended response's stream is cut
	// before its work is canceled.
	SentAfterCancel int64
	// Overlaps counts compactions during which a response was speaking.
	Overlaps int
	// Failures counts work that failed without panicking (a compaction or a
	// response's TTS returning an error); the session goes on.
	Failures int
	// Refused counts calls of the racing sessions refused because they lost
	// a race (a cancel of a response that had just completed, a compaction
	// already running).
	Refused int
	// How the sessions ended: HangUps (the client closed it), Drops (the
	// connection dropped), Panics (a child's work panicked; PanicsBy
	// counts them by child: "vad", "tts", "compaction").
	HangUps, Drops, Panics int
	PanicsBy               map[string]int
	// Errs holds, per session, what went wrong that the workload did not
	// cause on purpose (nil when nothing did): a Close error other than
	// the drop or the panic the mix caused (an abandoned child, say), a
	// call refused when it should not have been, or, in a scripted
	// session, a state other than the one the script drove it to.
	Errs []error
}

// add adds one session's figures (not Sessions or Errs) to r.
func (r *DemoReport) add(o DemoReport) {
	r.Turns += o.Turns
	r.Responses += o.Responses
	r.Compactions += o.Compactions
	r.AudioBytes += o.AudioBytes
	r.Scripted += o.Scripted
	r.Racing += o.Racing
	r.BargeIns += o.BargeIns
	r.Completed += o.Completed
	r.Finished += o.Finished
	r.Canceled += o.Canceled
	r.Preempted += o.Preempted
	r.FailedResponses += o.FailedResponses
	r.ClosedResponses += o.ClosedResponses
	r.Interrupted += o.Interrupted
	r.LateAudio += o.LateAudio
	r.SentAfterCancel += o.SentAfterCancel
	r.Overlaps += o.Overlaps
	r.Failures += o.Failures
	r.Refused += o.Refused
	r.HangUps += o.HangUps
	r.Drops += o.Drops
	r.Panics += o.Panics
	for k, v := range o.PanicsBy {
		if r.PanicsBy == nil {
			r.PanicsBy = map[string]int{}
		}
		r.PanicsBy[k] += v
	}
}

// SyntheticFrame returns one 20 ms frame of 16 kHz PCM16: a 200 Hz tone
// when speech is set (loud enough for EnergyDetector), else near-silence.
func SyntheticFrame(speech bool, n int) []int16 {
	f := make([]int16, 320)
	amp := 40.0
	if speech {
		amp = 3000
	}
	for i := range f {
		t := float64(n*len(f)+i) / 16000
		f[i] = int16(amp * math.Sin(2*math.Pi*200*t))
	}
	return f
}

// RunDemo runs sessions concurrently with the default workers —
// energy-threshold VAD, canned generator, paced TTS stub, truncating
// compactor — over synthetic PCM, and returns their figures and the errors
// the workload did not cause on purpose (joined).
//
// The realistic mix (the default) is seeded. Four sessions in five are
// scripted: each hears a few user turns (speech, then silence until the
// VAD ends the turn) and gets an answer whose TTS audio the client plays;
// the user barges in on an answer still speaking (the client usually
// cancels it), the agent sometimes answers speculatively before the turn
// ends or preempts an answer still speaking, compaction runs over answers
// and turns, responses complete, are finished, or fail, and compactions
// complete or fail. The script decides when each piece of work ends (it
// waits on a hold), so every step happens in a state the script knows; it
// checks Session.State after each. Each scripted session then ends in a
// planned state of the spec — the 8 live states in turn, each by a
// hang-up (Close), a dropped connection (New's context canceled) or a
// child's panic (the VAD's detector, the response's TTS, or the
// compactor) — so that every 32 scripted sessions end in every state by
// every kind. The fifth session races: a microphone goroutine and an
// agent goroutine drive it as a voice server would, its work ends on its
// own, and it ends in whatever state it is in. With 40 sessions or more
// the trace exercises all 36 transitions of spec/session.fizz.
//
// The plain mix: each session hears Turns turns, each half a second of
// tone and then silence until the VAD ends the turn; each ended turn
// starts a response whose audio is consumed; every second turn triggers
// a compaction, which may still be running when the session closes.
func RunDemo(ctx context.Context, dc DemoConfig) (DemoReport, error) {
	if dc.Sessions == 0 {
		dc.Sessions = 1
	}
	if dc.Turns == 0 {
		dc.Turns = 3
		if dc.Mix == MixRealistic {
			dc.Turns = 4
		}
	}
	if dc.Speed == 0 {
		dc.Speed = 20
	}
	if dc.Seed == 0 {
		dc.Seed = DefaultDemoSeed
	}
	if dc.Sessions < 0 || dc.Turns < 0 || !(dc.Speed > 0) || (dc.Mix != MixRealistic && dc.Mix != MixPlain) {
		return DemoReport{}, fmt.Errorf("%w: demo sessions %d, turns %d, speed %v, mix %v", ErrConfig, dc.Sessions, dc.Turns, dc.Speed, dc.Mix)
	}
	rep := DemoReport{Sessions: dc.Sessions, Errs: make([]error, dc.Sessions)}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < dc.Sessions; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			var one DemoReport
			var err error
			if dc.Mix == MixPlain {
				one, err = demoSession(ctx, dc, i)
			} else {
				one, err = mixDemo(ctx, dc, i)
			}
			mu.Lock()
			defer mu.Unlock()
			rep.add(one)
			rep.Errs[i] = err
		}(i)
	}
	wg.Wait()
	return rep, errors.Join(rep.Errs...)
}

// demoSession runs session i of the plain mix.
func demoSession(ctx context.Context, dc DemoConfig, i int) (DemoReport, error) {
	turns, resps, comps, audio, err := plainSession(ctx, dc, i)
	return DemoReport{Turns: turns, Responses: resps, Compactions: comps, AudioBytes: audio}, err
}

func plainSession(ctx context.Context, dc DemoConfig, i int) (turns, resps, comps int, audio int64, err error) {
	s, err := New(ctx, Config{
		Instance:         fmt.Sprintf("demo-%d", i),
		Sink:             dc.Sink,
		Synthesizer:      &PacedSynthesizer{Speed: dc.Speed},
		BargeInMinSpeech: dc.BargeInMinSpeech,
	})
	if err != nil {
		return 0, 0, 0, 0, err
	}
	frame := 0
	push := func(speech bool) (TurnEvent, error) {
		frame++
		return s.PushAudio(SyntheticFrame(speech, frame))
	}
	for t := 0; t < dc.Turns && ctx.Err() == nil; t++ {
		for k := 0; k < 25; k++ {
			if _, err := push(true); err != nil {
				return turns, resps, comps, audio, s.Close()
			}
		}
		for {
			ev, err := push(false)
			if err != nil {
				return turns, resps, comps, audio, s.Close()
			}
			if ev.Kind == TurnStopped {
				break
			}
		}
		turns++
		r, err := s.StartResponse(fmt.Sprintf("turn %d", t))
		if err != nil {
			break
		}
		resps++
		for chunk := range r.Audio() {
			audio += int64(len(chunk))
		}
		<-r.Done()
		s.AppendHistory(fmt.Sprintf("user: turn %d", t))
		s.AppendHistory(fmt.Sprintf("assistant: answer %d", t))
		if t%2 == 1 {
			if _, err := s.TriggerCompaction(); err == nil {
				comps++
			}
		}
	}
	return turns, resps, comps, audio, s.Close()
}
