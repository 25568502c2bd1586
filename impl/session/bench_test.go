package session_test

import (
	"context"
	"io"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/tracecheck/tracecheck/impl/session"
	"github.com/tracecheck/tracecheck/impl/session/sessiontest"
	"github.com/tracecheck/tracecheck/trace"
)

func benchConfig(sink trace.Sink) session.Config {
	return session.Config{Sink: sink, SilenceFrames: 1, Detector: &sessiontest.Detector{},
		Generator: &sessiontest.Generator{Words: []string{"w"}}, Synthesizer: sessiontest.Synthesizer{},
		Compactor: &sessiontest.Compactor{}}
}

func openMany(b *testing.B, n int, cfg session.Config) []*session.Session {
	ss := make([]*session.Session, n)
	for i := range ss {
		s, err := session.New(context.Background(), cfg)
		if err != nil {
			b.Fatal(err)
		}
		ss[i] = s
	}
	return ss
}

// closeAll closes every session concurrently and returns each Close's
// latency, sorted.
func closeAll(b *testing.B, ss []*session.Session) []time.Duration {
	lat := make([]time.Duration, len(ss))
	var wg sync.WaitGroup
	start := make(chan struct{})
	for i, s := range ss {
		wg.Add(1)
		go func(i int, s *session.Session) {
			defer wg.Done()
			<-start
			t0 := time.Now()
			if err := s.Close(); err != nil {
				b.Error(err)
			}
			lat[i] = time.Since(t0)
		}(i, s)
	}
	close(start)
	wg.Wait()
	slices.Sort(lat)
	return lat
}

// BenchmarkTeardown10k measures Close latency (p50, p99) when 10,000
// concurrent sessions are closed at once: idle ones, and busy ones (a
// response streaming and a compaction running in each).
func BenchmarkTeardown10k(b *testing.B) {
	const n = 10000
	for _, busy := range []bool{false, true} {
		name := "idle"
		if busy {
			name = "busy"
		}
		b.Run(name, func(b *testing.B) {
			var p50, p99, max time.Duration
			for it := 0; it < b.N; it++ {
				b.StopTimer()
				gate := sessiontest.NewGate()
				cfg := benchConfig(nil)
				if busy {
					cfg.Generator = &sessiontest.Generator{Words: []string{"w"}, Gate: gate}
					cfg.Compactor = &sessiontest.Compactor{Gate: gate}
				}
				ss := openMany(b, n, cfg)
				if busy {
					for _, s := range ss {
						s.PushAudio(sessiontest.Speech())
						s.StartResponse("p")
						s.TriggerCompaction()
					}
				}
				b.StartTimer()
				lat := closeAll(b, ss)
				gate.Release()
				p50 += lat[n/2]
				p99 += lat[n*99/100]
				max += lat[n-1]
			}
			b.ReportMetric(float64(p50.Microseconds())/float64(b.N), "p50-µs")
			b.ReportMetric(float64(p99.Microseconds())/float64(b.N), "p99-µs")
			b.ReportMetric(float64(max.Microseconds())/float64(b.N), "max-µs")
		})
	}
}

// BenchmarkTeardownOne measures one Close with nothing else running: an
// idle session, and a busy one (response streaming, compaction running).
func BenchmarkTeardownOne(b *testing.B) {
	for _, busy := range []bool{false, true} {
		name := "idle"
		if busy {
			name = "busy"
		}
		b.Run(name, func(b *testing.B) {
			gate := sessiontest.NewGate()
			defer gate.Release()
			cfg := benchConfig(nil)
			if busy {
				cfg.Generator = &sessiontest.Generator{Words: []string{"w"}, Gate: gate}
				cfg.Compactor = &sessiontest.Compactor{Gate: gate}
			}
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				s, _ := session.New(context.Background(), cfg)
				if busy {
					s.StartResponse("p")
					s.TriggerCompaction()
				}
				b.StartTimer()
				if err := s.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkIdleMemory measures the memory an idle session holds: heap plus
// the stacks of its four goroutines.
func BenchmarkIdleMemory(b *testing.B) {
	const n = 10000
	var per float64
	for it := 0; it < b.N; it++ {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		ss := openMany(b, n, benchConfig(nil))
		runtime.GC()
		runtime.ReadMemStats(&after)
		per += float64(after.HeapAlloc+after.StackInuse-before.HeapAlloc-before.StackInuse) / n
		closeAll(b, ss)
	}
	b.ReportMetric(per/float64(b.N), "bytes/session")
	b.ReportMetric(4, "goroutines/session")
}

// BenchmarkOps measures operations through one coordinator of one
// session: PushAudio through the VAD, StartResponse+FinishResponse through
// the response coordinator, from one caller and from many at once.
func BenchmarkOps(b *testing.B) {
	ops := map[string]func(s *session.Session, i int){
		"vad-push": func(s *session.Session, i int) {
			s.PushAudio(sessiontest.Silence())
		},
		"resp-start-finish": func(s *session.Session, i int) {
			if r, err := s.StartResponse("p"); err == nil {
				s.FinishResponse(r.ID())
			}
		},
	}
	for _, name := range []string{"vad-push", "resp-start-finish"} {
		op := ops[name]
		b.Run(name+"/serial", func(b *testing.B) {
			s, _ := session.New(context.Background(), benchConfig(nil))
			defer s.Close()
			b.ReportAllocs()
			t0 := time.Now()
			for i := 0; i < b.N; i++ {
				op(s, i)
			}
			b.ReportMetric(float64(b.N)/time.Since(t0).Seconds(), "ops/s")
		})
		b.Run(name+"/parallel", func(b *testing.B) {
			s, _ := session.New(context.Background(), benchConfig(nil))
			defer s.Close()
			b.ReportAllocs()
			t0 := time.Now()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					op(s, 0)
				}
			})
			b.ReportMetric(float64(b.N)/time.Since(t0).Seconds(), "ops/s")
		})
	}
}

// BenchmarkTracing measures the cost of tracing: every push below commits
// a transition (speech and silence alternate with SilenceFrames 1), with
// tracing off (nil Sink), to trace.Discard (also off), and to an NDJSON
// writer on io.Discard (encoding and writing every event).
func BenchmarkTracing(b *testing.B) {
	for _, c := range []struct {
		name string
		sink trace.Sink
	}{{"off", nil}, {"discard", trace.Discard}, {"ndjson", trace.NewWriter(io.Discard)}} {
		b.Run(c.name, func(b *testing.B) {
			s, _ := session.New(context.Background(), benchConfig(c.sink))
			defer s.Close()
			speech, silence := sessiontest.Speech(), sessiontest.Silence()
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				f := silence
				if i%2 == 0 {
					f = speech
				}
				if _, err := s.PushAudio(f); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkTracedTurn measures one user turn — 25 speech frames, 15
// silent ones (ending the turn), a response started and finished — with
// tracing off and to an NDJSON writer: the cost of tracing on a realistic
// mix where most frames commit nothing.
func BenchmarkTracedTurn(b *testing.B) {
	for _, c := range []struct {
		name string
		sink trace.Sink
	}{{"off", nil}, {"ndjson", trace.NewWriter(io.Discard)}} {
		b.Run(c.name, func(b *testing.B) {
			cfg := benchConfig(c.sink)
			cfg.SilenceFrames = 15
			s, _ := session.New(context.Background(), cfg)
			defer s.Close()
			speech, silence := sessiontest.Speech(), sessiontest.Silence()
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				for k := 0; k < 25; k++ {
					s.PushAudio(speech)
				}
				for k := 0; k < 15; k++ {
					s.PushAudio(silence)
				}
				if r, err := s.StartResponse("p"); err == nil {
					s.FinishResponse(r.ID())
				}
			}
		})
	}
}
