package session

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"

	"github.com/tracecheck/tracecheck/trace"
)

// DemoConfig configures [RunDemo].
type DemoConfig struct {
	// Sessions is how many sessions run concurrently. Default 1.
	Sessions int
	// Turns is how many user turns each session hears. Default 3.
	Turns int
	// Speed divides the TTS pacing (1 is real time). Default 20.
	Speed float64
	// Sink receives every session's trace events (nil: no trace).
	Sink trace.Sink
}

// DemoReport summarises a demo run.
type DemoReport struct {
	Sessions, Turns, Responses, Compactions int
	AudioBytes                              int64
	// Errs holds each session's Close error (nil when clean).
	Errs []error
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

// RunDemo runs sessions with the default workers — energy-threshold VAD,
// canned generator, paced TTS stub, truncating compactor — over synthetic
// PCM: each turn is half a second of tone and then silence until the VAD
// ends the turn; each ended turn starts a response whose audio is
// consumed; every second turn triggers a compaction, which may still be
// running when the session closes.
func RunDemo(ctx context.Context, dc DemoConfig) (DemoReport, error) {
	if dc.Sessions == 0 {
		dc.Sessions = 1
	}
	if dc.Turns == 0 {
		dc.Turns = 3
	}
	if dc.Speed == 0 {
		dc.Speed = 20
	}
	if dc.Sessions < 0 || dc.Turns < 0 || dc.Speed < 0 || math.IsNaN(dc.Speed) {
		return DemoReport{}, fmt.Errorf("%w: demo sessions %d, turns %d, speed %v", ErrConfig, dc.Sessions, dc.Turns, dc.Speed)
	}
	rep := DemoReport{Sessions: dc.Sessions, Errs: make([]error, dc.Sessions)}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i := 0; i < dc.Sessions; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			turns, resps, comps, bytes, err := demoSession(ctx, dc, i)
			mu.Lock()
			defer mu.Unlock()
			rep.Turns += turns
			rep.Responses += resps
			rep.Compactions += comps
			rep.AudioBytes += bytes
			rep.Errs[i] = err
		}(i)
	}
	wg.Wait()
	return rep, errors.Join(rep.Errs...)
}

func demoSession(ctx context.Context, dc DemoConfig, i int) (turns, resps, comps int, audio int64, err error) {
	s, err := New(ctx, Config{
		Instance:    fmt.Sprintf("demo-%d", i),
		Sink:        dc.Sink,
		Synthesizer: &PacedSynthesizer{Speed: dc.Speed},
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
