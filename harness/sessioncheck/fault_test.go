package sessioncheck_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/harness/sessioncheck"
	"github.com/tracecheck/tracecheck/impl/session"
	"github.com/tracecheck/tracecheck/impl/session/sessiontest"
	"github.com/tracecheck/tracecheck/trace"
)

// jitter yields the processor a random number of times, to vary the
// interleaving of racing goroutines from run to run.
func jitter(rng *rand.Rand) { yield(rng.IntN(4)) }

func yield(n int) {
	for ; n > 0; n-- {
		runtime.Gosched()
	}
}

// both runs f and g concurrently and waits for both.
func both(f, g func()) {
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); f() }()
	go func() { defer wg.Done(); g() }()
	wg.Wait()
}

func base(inst string, sink trace.Sink) session.Config {
	return session.Config{Instance: inst, Sink: sink, SilenceFrames: 1, JoinTimeout: 10 * time.Second,
		Detector: &sessiontest.Detector{}, Generator: &sessiontest.Generator{Words: []string{"a", "b", "c"}},
		Synthesizer: sessiontest.Synthesizer{}, Compactor: &sessiontest.Compactor{}}
}

func open(cfg session.Config) *session.Session {
	s, err := session.New(context.Background(), cfg)
	if err != nil {
		panic(err) // the configs here are valid
	}
	return s
}

func waitFor(c <-chan struct{}, what string) error {
	select {
	case <-c:
		return nil
	case <-time.After(5 * time.Second):
		return fmt.Errorf("timed out waiting for %s", what)
	}
}

// faultCase injects a teardown at one point of a child's lifecycle. run
// drives one session (instance inst, tracing to sink) to that point, tears
// it down, lets every piece of work end, and returns an error if anything
// observable is wrong.
type faultCase struct {
	name string
	run  func(inst string, sink trace.Sink, rng *rand.Rand) error
	want check.Verdict
}

var faultCases = []faultCase{
	{"close while VAD starts", func(inst string, sink trace.Sink, rng *rand.Rand) error {
		gate := sessiontest.NewGate()
		cfg := base(inst, sink)
		cfg.Detector = &sessiontest.Detector{Gate: gate}
		s := open(cfg)
		res := make(chan error, 1)
		go func() {
			ev, err := s.PushAudio(sessiontest.Speech())
			if err == nil && ev.Kind != session.TurnStarted {
				err = fmt.Errorf("push: %v", ev.Kind)
			}
			res <- err
		}()
		if err := waitFor(gate.Entered(), "VAD to start detecting"); err != nil {
			return err
		}
		var cerr error
		both(func() { cerr = s.Close() }, func() { jitter(rng); gate.Release() })
		if err := <-res; err != nil && !errors.Is(err, session.ErrClosed) {
			return err
		}
		return cerr
	}, check.Valid},
	{"close racing speech frames", func(inst string, sink trace.Sink, rng *rand.Rand) error {
		s := open(base(inst, sink))
		var perr, cerr error
		both(func() {
			for i := 0; i < 6 && perr == nil; i++ {
				f := sessiontest.Speech()
				if i%2 == 1 {
					f = sessiontest.Silence()
				}
				if _, err := s.PushAudio(f); err != nil && !errors.Is(err, session.ErrClosed) {
					perr = err
				}
			}
		}, func() { jitter(rng); cerr = s.Close() })
		return errors.Join(perr, cerr)
	}, check.Valid},
	{"close mid-response with TTS streaming", func(inst string, sink trace.Sink, rng *rand.Rand) error {
		cfg := base(inst, sink)
		cfg.Generator = session.CannedGenerator{}
		cfg.Synthesizer = &session.PacedSynthesizer{Chunk: time.Millisecond, PerChar: time.Millisecond}
		s := open(cfg)
		r, err := s.StartResponse("hi")
		if err != nil {
			return err
		}
		for i := 0; i < 2; i++ {
			if _, ok := <-r.Audio(); !ok {
				return errors.New("audio ended before teardown")
			}
		}
		jitter(rng)
		if err := s.Close(); err != nil {
			return err
		}
		for range r.Audio() { // the TTS pipeline must close its stream
		}
		if err := waitFor(r.Done(), "response end"); err != nil {
			return err
		}
		if !errors.Is(r.Err(), session.ErrClosed) && r.Err() != nil {
			return fmt.Errorf("response Err %v", r.Err())
		}
		return nil
	}, check.Valid},
	{"close mid-compaction", func(inst string, sink trace.Sink, rng *rand.Rand) error {
		gate := sessiontest.NewGate()
		defer gate.Release()
		cfg := base(inst, sink)
		cfg.Compactor = &sessiontest.Compactor{Gate: gate}
		s := open(cfg)
		job, err := s.TriggerCompaction()
		if err != nil {
			return err
		}
		if err := waitFor(gate.Entered(), "compaction to start"); err != nil {
			return err
		}
		jitter(rng)
		if err := s.Close(); err != nil {
			return err
		}
		if !errors.Is(job.Err(), session.ErrClosed) {
			return fmt.Errorf("job Err %v, want ErrClosed", job.Err())
		}
		return nil
	}, check.Valid},
	{"close racing compaction's own finish", func(inst string, sink trace.Sink, rng *rand.Rand) error {
		gate := sessiontest.NewGate()
		cfg := base(inst, sink)
		cfg.Compactor = &sessiontest.Compactor{Gate: gate}
		s := open(cfg)
		job, err := s.TriggerCompaction()
		if err != nil {
			return err
		}
		if err := waitFor(gate.Entered(), "compaction to start"); err != nil {
			return err
		}
		var cerr error
		a, b := rng.IntN(4), rng.IntN(4)
		both(func() { yield(a); gate.Release() }, func() { yield(b); cerr = s.Close() })
		return errors.Join(cerr, waitFor(job.Done(), "job"))
	}, check.Valid},
	{"close racing response's own completion", func(inst string, sink trace.Sink, rng *rand.Rand) error {
		gate := sessiontest.NewGate()
		cfg := base(inst, sink)
		cfg.Generator = &sessiontest.Generator{Words: []string{"w"}, Gate: gate}
		s := open(cfg)
		r, err := s.StartResponse("p")
		if err != nil {
			return err
		}
		if err := waitFor(gate.Entered(), "generation"); err != nil {
			return err
		}
		var cerr error
		a, b := rng.IntN(4), rng.IntN(4)
		both(func() { yield(a); gate.Release() }, func() { yield(b); cerr = s.Close() })
		return errors.Join(cerr, waitFor(r.Done(), "response"))
	}, check.Valid},
	{"close racing finish and cancel calls", func(inst string, sink trace.Sink, rng *rand.Rand) error {
		gate := sessiontest.NewGate()
		defer gate.Release()
		cfg := base(inst, sink)
		cfg.Generator = &sessiontest.Generator{Gate: gate}
		s := open(cfg)
		r1, err := s.StartResponse("p")
		if err != nil {
			return err
		}
		var ferr, cerr error
		both(func() {
			ferr = s.FinishResponse(r1.ID())
			if r2, err := s.StartResponse("q"); err == nil {
				ferr = errors.Join(ferr, s.CancelResponse(r2.ID()))
			}
			if errors.Is(ferr, session.ErrClosed) {
				ferr = nil
			}
		}, func() { jitter(rng); cerr = s.Close() })
		return errors.Join(ferr, cerr)
	}, check.Valid},
	{"connection drops with every child busy", func(inst string, sink trace.Sink, rng *rand.Rand) error {
		gate := sessiontest.NewGate()
		defer gate.Release()
		cfg := base(inst, sink)
		cfg.Generator = &sessiontest.Generator{Words: []string{"w"}, Gate: gate}
		cfg.Compactor = &sessiontest.Compactor{Gate: gate}
		ctx, cancel := context.WithCancel(context.Background())
		s, err := session.New(ctx, cfg)
		if err != nil {
			cancel()
			return err
		}
		if _, err := s.PushAudio(sessiontest.Speech()); err != nil {
			cancel()
			return err
		}
		s.StartResponse("p")
		s.TriggerCompaction()
		jitter(rng)
		cancel()
		if err := waitFor(s.Done(), "teardown"); err != nil {
			return err
		}
		if err := s.Close(); !errors.Is(err, session.ErrConnectionDropped) {
			return fmt.Errorf("Close after drop = %v", err)
		}
		return nil
	}, check.Valid},
	{"panic in TTS mid-stream", func(inst string, sink trace.Sink, rng *rand.Rand) error {
		cfg := base(inst, sink)
		cfg.Synthesizer = panicky{after: 2}
		s := open(cfg)
		if _, err := s.TriggerCompaction(); err != nil {
			return err
		}
		r, err := s.StartResponse("p")
		if err != nil {
			return err
		}
		for range r.Audio() {
		}
		if err := waitFor(s.Done(), "teardown after panic"); err != nil {
			return err
		}
		if err := s.Close(); !errors.Is(err, session.ErrChildPanic) {
			return fmt.Errorf("Close = %v, want ErrChildPanic", err)
		}
		if !errors.Is(r.Err(), session.ErrChildPanic) {
			return fmt.Errorf("response Err %v", r.Err())
		}
		return nil
	}, check.Valid},
	{"panic mid-compaction", func(inst string, sink trace.Sink, rng *rand.Rand) error {
		cfg := base(inst, sink)
		cfg.Compactor = &sessiontest.Compactor{Panic: true}
		s := open(cfg)
		if _, err := s.TriggerCompaction(); err != nil {
			return err
		}
		if err := waitFor(s.Done(), "teardown after panic"); err != nil {
			return err
		}
		if err := s.Close(); !errors.Is(err, session.ErrChildPanic) {
			return fmt.Errorf("Close = %v, want ErrChildPanic", err)
		}
		return nil
	}, check.Valid},
	// A compaction that ignores cancellation is abandoned: teardown says so,
	// the Teardown step records compaction still running, and the checker
	// must flag it (ChildrenDieWithParent does not hold in reality).
	{"compaction ignores cancellation", func(inst string, sink trace.Sink, rng *rand.Rand) error {
		gate := sessiontest.NewGate()
		cfg := base(inst, sink)
		cfg.JoinTimeout = 20 * time.Millisecond
		cfg.Compactor = &sessiontest.Compactor{Gate: gate, IgnoreCancel: true}
		s := open(cfg)
		job, err := s.TriggerCompaction()
		if err != nil {
			return err
		}
		if err := waitFor(gate.Entered(), "compaction"); err != nil {
			return err
		}
		err = s.Close()
		gate.Release()
		waitFor(job.Done(), "job")
		if !errors.Is(err, session.ErrAbandoned) {
			return fmt.Errorf("Close = %v, want ErrAbandoned", err)
		}
		return nil
	}, check.Violation},
	{"generator ignores cancellation", func(inst string, sink trace.Sink, rng *rand.Rand) error {
		gate := sessiontest.NewGate()
		cfg := base(inst, sink)
		cfg.JoinTimeout = 20 * time.Millisecond
		cfg.Generator = &sessiontest.Generator{Gate: gate, IgnoreCancel: true}
		s := open(cfg)
		r, err := s.StartResponse("p")
		if err != nil {
			return err
		}
		if err := waitFor(gate.Entered(), "generation"); err != nil {
			return err
		}
		err = s.Close()
		gate.Release()
		for range r.Audio() { // closes once the abandoned pipeline ends
		}
		if !errors.Is(err, session.ErrAbandoned) {
			return fmt.Errorf("Close = %v, want ErrAbandoned", err)
		}
		return nil
	}, check.Violation},
	{"VAD detector stuck at teardown", func(inst string, sink trace.Sink, rng *rand.Rand) error {
		gate := sessiontest.NewGate()
		cfg := base(inst, sink)
		cfg.JoinTimeout = 20 * time.Millisecond
		cfg.Detector = &sessiontest.Detector{Gate: gate}
		s := open(cfg)
		pushed := make(chan struct{})
		go func() { defer close(pushed); s.PushAudio(sessiontest.Speech()) }()
		if err := waitFor(gate.Entered(), "detection"); err != nil {
			return err
		}
		err := s.Close()
		gate.Release()
		<-pushed
		if !errors.Is(err, session.ErrAbandoned) {
			return fmt.Errorf("Close = %v, want ErrAbandoned", err)
		}
		return nil
	}, check.Violation},
}

// panicky is a Synthesizer that panics after streaming some chunks.
type panicky struct{ after int }

func (p panicky) Synthesize(ctx context.Context, text string, emit func([]byte) error) error {
	for i := 0; i < p.after; i++ {
		if err := emit([]byte(text)); err != nil {
			return err
		}
	}
	panic("tts engine crashed")
}

// TestTeardownAtEveryPoint injects teardown at each point of each child's
// lifecycle, many sessions at once into one trace stream; every session's
// trace must get the expected verdict and nothing may leak.
func TestTeardownAtEveryPoint(t *testing.T) {
	const runs = 16
	for _, fc := range faultCases {
		t.Run(fc.name, func(t *testing.T) {
			rec := &trace.Recorder{}
			errs := make([]error, runs)
			var wg sync.WaitGroup
			for i := 0; i < runs; i++ {
				wg.Add(1)
				go func(i int) {
					defer wg.Done()
					errs[i] = fc.run(fmt.Sprintf("run%d", i), rec, rand.New(rand.NewPCG(uint64(i), 7)))
				}(i)
			}
			wg.Wait()
			if err := errors.Join(errs...); err != nil {
				t.Fatal(err)
			}
			rep, err := sessioncheck.Check(context.Background(), bytes.NewReader(rec.NDJSON()), fc.name, false)
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Instances) != runs || rep.Count(fc.want) != runs {
				t.Fatalf("want %d × %v, got %d instances: %d valid, %d violation, %d incomplete\n%s",
					runs, fc.want, len(rep.Instances), rep.Count(check.Valid), rep.Count(check.Violation), rep.Count(check.Incomplete), firstBad(rep))
			}
			if bad := sessioncheck.TTSClosedBeforeTeardown(rec.Events()); fc.want == check.Valid && len(bad) > 0 {
				t.Fatalf("M5: %d responses' TTS not closed before Teardown, e.g. %s", len(bad), bad[0])
			}
			if fc.want == check.Violation {
				d := rep.Instances[0].Divergence
				if d == nil || d.Action != session.ActTeardown {
					t.Fatalf("divergence %+v, want at Teardown", d)
				}
				t.Logf("flagged as expected: %s", d.Reason)
			}
			teardowns := map[string]int{}
			for _, tr := range rep.Exercised {
				if tr.Action == session.ActTeardown {
					teardowns[tr.From] += tr.Count
				}
			}
			t.Logf("Teardown taken from: %v", teardowns)
			goleak.VerifyNone(t)
		})
	}
}
