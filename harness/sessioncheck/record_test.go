package sessioncheck_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/harness/sessioncheck"
	"github.com/tracecheck/tracecheck/impl/session"
	"github.com/tracecheck/tracecheck/impl/session/sessiontest"
	"github.com/tracecheck/tracecheck/trace"
)

// recordedDir holds traces recorded from real sessions. Regenerate them on
// purpose with TRACECHECK_RECORD=1 go test ./harness/sessioncheck -run
// TestRecordedTraces; never edit them by hand. Their names carry the
// expected verdict (-ok, -bad), and traces/EXPECTED.tsv lists the bad
// ones' first bad line and instance for the corpus test.
const recordedDir = "../../traces/session/recorded"

// recordings produce each recorded trace. A trace recorded from a named
// code mutant (internal/mutants) names it: record then runs the same
// scenario on the real code, whose trace must be valid, and
// TRACECHECK_RECORD leaves that file as it is.
var recordings = []struct {
	file   string
	mutant string
	record func(sink trace.Sink) error
}{
	{"lifecycle-ok.ndjson", "", func(sink trace.Sink) error {
		gate := sessiontest.NewGate()
		defer gate.Release()
		cfg := base("s1", sink)
		cfg.Compactor = &sessiontest.Compactor{Gate: gate}
		cfg.Generator = &sessiontest.Generator{Words: []string{"w"}, Gate: gate}
		s := open(cfg)
		s.PushAudio(sessiontest.Speech())
		s.PushAudio(sessiontest.Speech())
		s.PushAudio(sessiontest.Silence())
		r1, _ := s.StartResponse("first")
		r2, _ := s.StartResponse("barge-in") // preempts r1: the RespStart self-loop
		<-r1.Done()
		s.FinishResponse(r2.ID())
		s.AppendHistory("user: hello")
		s.AppendHistory("assistant: hi")
		s.TriggerCompaction()
		<-gate.Entered()
		s.PushAudio(sessiontest.Speech())
		return s.Close() // mid-compaction, mid-turn
	}},
	{"connection-drop-ok.ndjson", "", func(sink trace.Sink) error {
		gate := sessiontest.NewGate()
		defer gate.Release()
		cfg := base("s2", sink)
		cfg.Generator = &sessiontest.Generator{Words: []string{"w"}, Gate: gate}
		cfg.Compactor = &sessiontest.Compactor{Gate: gate}
		ctx, cancel := context.WithCancel(context.Background())
		s, err := session.New(ctx, cfg)
		if err != nil {
			cancel()
			return err
		}
		s.PushAudio(sessiontest.Speech())
		s.StartResponse("p")
		s.TriggerCompaction()
		<-gate.Entered()
		cancel()
		<-s.Done()
		if err := s.Close(); !errors.Is(err, session.ErrConnectionDropped) {
			return fmt.Errorf("Close = %v", err)
		}
		return nil
	}},
	{"panic-teardown-ok.ndjson", "", func(sink trace.Sink) error {
		cfg := base("s3", sink)
		cfg.Compactor = &sessiontest.Compactor{Panic: true}
		s := open(cfg)
		s.StartResponse("p")
		s.TriggerCompaction()
		<-s.Done()
		if err := s.Close(); !errors.Is(err, session.ErrChildPanic) {
			return fmt.Errorf("Close = %v", err)
		}
		return nil
	}},
	{"concurrent-sessions-ok.ndjson", "", func(sink trace.Sink) error {
		var wg sync.WaitGroup
		errs := make([]error, 6)
		for i := range errs {
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				rng := rand.New(rand.NewPCG(uint64(i), 11))
				s := open(base(fmt.Sprintf("c%d", i), sink))
				for k := 0; k < 12; k++ {
					switch rng.IntN(4) {
					case 0:
						s.PushAudio(sessiontest.Speech())
					case 1:
						s.PushAudio(sessiontest.Silence())
					case 2:
						if r, err := s.StartResponse("p"); err == nil && rng.IntN(2) == 0 {
							s.CancelResponse(r.ID())
						}
					case 3:
						if j, err := s.TriggerCompaction(); err == nil {
							<-j.Done()
						}
					}
				}
				errs[i] = s.Close()
			}(i)
		}
		wg.Wait()
		return errors.Join(errs...)
	}},
	{"m4-mutant-compaction-outlives-bad.ndjson", "session/fire-and-forget-compaction", func(sink trace.Sink) error {
		gate := sessiontest.NewGate()
		cfg := base("m4", sink)
		cfg.Compactor = &sessiontest.Compactor{Gate: gate}
		s := open(cfg)
		job, err := s.TriggerCompaction()
		if err != nil {
			return err
		}
		<-gate.Entered()
		err = s.Close()
		gate.Release()
		<-job.Done() // the mutant's ends after its session: CompFinish after Teardown
		return err
	}},
	{"abandoned-compaction-bad.ndjson", "", func(sink trace.Sink) error {
		gate := sessiontest.NewGate()
		cfg := base("ab", sink)
		cfg.JoinTimeout = 20 * time.Millisecond
		cfg.Compactor = &sessiontest.Compactor{Gate: gate, IgnoreCancel: true}
		s := open(cfg)
		job, _ := s.TriggerCompaction()
		<-gate.Entered()
		err := s.Close()
		gate.Release()
		<-job.Done()
		if !errors.Is(err, session.ErrAbandoned) {
			return fmt.Errorf("Close = %v", err)
		}
		return nil
	}},
}

// TestRecordedTraces re-records the traces when TRACECHECK_RECORD is set,
// and always checks that each recorded trace gets the verdict its name
// carries.
func TestRecordedTraces(t *testing.T) {
	if os.Getenv("TRACECHECK_RECORD") != "" {
		if err := os.MkdirAll(recordedDir, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, r := range recordings {
			if r.mutant != "" {
				continue // recorded from the mutant's code, kept as it is
			}
			var buf bytes.Buffer
			if err := r.record(trace.NewWriter(&buf)); err != nil {
				t.Fatalf("%s: %v", r.file, err)
			}
			if err := os.WriteFile(filepath.Join(recordedDir, r.file), buf.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, r := range recordings {
		t.Run(r.file, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(recordedDir, r.file))
			if err != nil {
				t.Fatalf("%v (record with TRACECHECK_RECORD=1)", err)
			}
			want := check.Valid
			if strings.HasSuffix(r.file, "-bad.ndjson") {
				want = check.Violation
			}
			rep := validate(t, data, false)
			if rep.Verdict() != want {
				t.Fatalf("verdict %v, want %v\n%s", rep.Verdict(), want, firstBad(rep))
			}
			// A fresh recording of the same scenario gets the same verdict;
			// on the real code, that of a mutant's scenario is valid.
			if r.mutant != "" {
				want = check.Valid
			}
			var buf bytes.Buffer
			if err := r.record(trace.NewWriter(&buf)); err != nil {
				t.Fatal(err)
			}
			if got := validate(t, buf.Bytes(), false); got.Verdict() != want {
				t.Fatalf("fresh recording: verdict %v, want %v\n%s", got.Verdict(), want, firstBad(got))
			}
		})
	}
	_ = sessioncheck.Check
}
