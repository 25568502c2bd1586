package session_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/tracecheck/tracecheck/impl/session"
	"github.com/tracecheck/tracecheck/impl/session/sessiontest"
	"github.com/tracecheck/tracecheck/trace"
)

// A session with the default workers (energy VAD, canned generator, TTS
// stub, truncating compactor), traced to stdout; a fixed clock stamps
// the events. The details carry what the machine specs' projections
// read (docs/trace-format.md, "One trace, every spec").
func Example() {
	s, err := session.New(context.Background(), session.Config{
		Instance:      "demo",
		Sink:          trace.NewWriter(os.Stdout),
		SilenceFrames: 2,
		Synthesizer:   &session.PacedSynthesizer{Speed: -1}, // no pacing in an example
		Clock:         func() time.Time { return time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC) },
	})
	if err != nil {
		panic(err)
	}
	for _, f := range [][]int16{sessiontest.Speech(), sessiontest.Speech(), sessiontest.Silence(), sessiontest.Silence()} {
		if _, err := s.PushAudio(f); err != nil {
			panic(err)
		}
	}
	r, _ := s.StartResponse("hello")
	chunks := 0
	for range r.Audio() {
		chunks++
	}
	<-r.Done()
	fmt.Println("audio chunks:", chunks)
	fmt.Println("close:", s.Close())
	// Output:
	// {"v":1,"instance":"demo","seq":0,"action":"Init","state":{"compaction":0,"conn":0,"resp":0,"vad":0},"time":"2026-12-01T09:00:00Z","detail":{"barge_in_min_speech":"200ms","join_timeout":"2s","silence_frames":2}}
	// {"v":1,"instance":"demo","seq":1,"action":"VadStart","state":{"vad":1},"time":"2026-12-01T09:00:00Z","detail":{"frame":1,"quiet":0}}
	// {"v":1,"instance":"demo","seq":2,"action":"VadStop","state":{"vad":0},"time":"2026-12-01T09:00:00Z","detail":{"frame":4,"held":1,"resumed":0}}
	// {"v":1,"instance":"demo","seq":3,"action":"RespStart","state":{"resp":1},"time":"2026-12-01T09:00:00Z","detail":{"response":1}}
	// {"v":1,"instance":"demo","seq":4,"action":"TTSClosed","state":{"resp":1},"stutter":true,"time":"2026-12-01T09:00:00Z","detail":{"audio":{"cut":false,"last":"2026-12-01T09:00:00Z","returned":true,"sent":210},"response":1}}
	// {"v":1,"instance":"demo","seq":5,"action":"RespFinish","state":{"resp":0},"time":"2026-12-01T09:00:00Z","detail":{"audio":{"cut":false,"last":"2026-12-01T09:00:00Z","returned":true,"sent":210},"cause":"complete","response":1}}
	// audio chunks: 210
	// {"v":1,"instance":"demo","seq":6,"action":"Teardown","state":{"compaction":2,"conn":1,"resp":2,"vad":2},"time":"2026-12-01T09:00:00Z","detail":{"began":"2026-12-01T09:00:00Z","exit":"close"}}
	// close: <nil>
}
