package session_test

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tracecheck/tracecheck/impl/session"
	"github.com/tracecheck/tracecheck/impl/session/sessiontest"
)

// BenchmarkBargeIn1k measures barge-in latency under 1,000 concurrent
// sessions: in each, a response is streaming (its audio stream full, its
// generator still running) when the user starts to speak; the microphone
// delivers one 20 ms frame every 20 ms, in real time, the sessions'
// microphones spread over one frame. The latency runs from the turn's
// first speech frame (the speech detected: VadStart) to the moment a
// client reading the response's audio sees its stream end (the audio
// stopped, its buffered chunks discarded). With the default
// BargeInMinSpeech (200 ms) the 10th speech frame interrupts, 180 ms of
// audio after the first; the bound is one frame plus BargeInMinSpeech (220
// ms).
//
// p50-ms, p99-ms and max-ms are that latency on the audio's clock: the
// audio time from the first speech frame to the interrupting one, plus the
// wall time from the interrupting frame's push to the client seeing the
// end of the stream (stop-p50-ms, stop-p99-ms: the session's own part).
// That is the wall-clock latency a microphone that delivers its frames on
// time sees. wall-p50-ms and wall-p99-ms are the wall-clock latency as
// measured here, which also counts how late the benchmark's own 1,000
// microphone goroutines push their frames on a loaded machine. It fails
// if p99-ms reaches the bound.
func BenchmarkBargeIn1k(b *testing.B) {
	const (
		n     = 1000
		frame = 20 * time.Millisecond
	)
	minSpeech := session.DefaultBargeInMinSpeech
	bound := frame + minSpeech
	var all, procs, walls []time.Duration
	for it := 0; it < b.N; it++ {
		b.StopTimer()
		gate := sessiontest.NewGate()
		cfg := benchConfig(nil)
		cfg.Generator = &sessiontest.Generator{Words: []string{"a", "b", "c", "d"}, Gate: gate}
		cfg.AudioBuffer = 4
		ss := openMany(b, n, cfg)
		rs := make([]*session.Response, n)
		for i, s := range ss {
			r, err := s.StartResponse("p")
			if err != nil {
				b.Fatal(err)
			}
			rs[i] = r
		}
		for range ss { // every response is streaming, its stream full
			<-gate.Entered()
		}
		lat := make([]time.Duration, n)  // speech detected -> audio stopped, on the audio's clock
		wall := make([]time.Duration, n) // the same, on the wall clock
		proc := make([]time.Duration, n) // the interrupting frame pushed -> audio stopped
		var wg sync.WaitGroup
		start := time.Now().Add(50 * time.Millisecond)
		b.StartTimer()
		for i := range ss {
			s, r := ss[i], rs[i]
			stopped := make(chan time.Time, 1)
			wg.Add(2)
			go func() { // the client playing the response
				defer wg.Done()
				for range r.Audio() {
				}
				stopped <- time.Now()
			}()
			go func(i int) { // the microphone
				defer wg.Done()
				time.Sleep(time.Until(start.Add(time.Duration(i) * frame / n)))
				tick := time.NewTicker(frame)
				defer tick.Stop()
				var detected time.Time
				first := 0
				for k := 0; k < 20; k++ {
					t := time.Now()
					ev, err := s.PushAudio(sessiontest.Speech())
					if err != nil {
						b.Error(err)
						return
					}
					if ev.Kind == session.TurnStarted {
						detected = t
					}
					if ev.Kind == session.TurnStarted {
						first = k
					}
					if ev.BargeIn {
						if !ev.Interrupted || !errors.Is(r.Err(), session.ErrCanceled) {
							b.Errorf("session %d: barge-in did not interrupt the response (%+v, %v)", i, ev, r.Err())
						}
						end := <-stopped
						proc[i] = end.Sub(t)
						lat[i] = time.Duration(k-first)*frame + proc[i]
						wall[i] = end.Sub(detected)
						return
					}
					<-tick.C
				}
				b.Errorf("session %d: no barge-in in 20 frames of speech", i)
			}(i)
		}
		wg.Wait()
		b.StopTimer()
		gate.Release()
		for _, s := range ss {
			if err := s.Close(); err != nil {
				b.Error(err)
			}
		}
		all = append(all, lat...)
		procs = append(procs, proc...)
		walls = append(walls, wall...)
	}
	slices.Sort(all)
	slices.Sort(procs)
	slices.Sort(walls)
	q := func(d []time.Duration, q float64) time.Duration { return d[int(q*float64(len(d)-1))] }
	p := func(x float64) time.Duration { return q(all, x) }
	ms := func(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
	b.ReportMetric(ms(p(0.5)), "p50-ms")
	b.ReportMetric(ms(p(0.99)), "p99-ms")
	b.ReportMetric(ms(all[len(all)-1]), "max-ms")
	b.ReportMetric(ms(bound), "bound-ms")
	b.ReportMetric(ms(q(procs, 0.5)), "stop-p50-ms")
	b.ReportMetric(ms(q(procs, 0.99)), "stop-p99-ms")
	b.ReportMetric(ms(q(walls, 0.5)), "wall-p50-ms")
	b.ReportMetric(ms(q(walls, 0.99)), "wall-p99-ms")
	b.Logf("%d barge-ins: speech detected -> audio stopped p50 %v p99 %v max %v (bound %v); interrupting frame pushed -> audio stopped p50 %v p99 %v; wall clock (with the microphones' own lateness) p50 %v p99 %v",
		len(all), p(0.5), p(0.99), all[len(all)-1], bound, q(procs, 0.5), q(procs, 0.99), q(walls, 0.5), q(walls, 0.99))
	if p(0.99) >= bound {
		b.Errorf("barge-in latency p99 %v reaches one frame plus BargeInMinSpeech (%v)", p(0.99), bound)
	}
}
