package session_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tracecheck/tracecheck/impl/session"
	"github.com/tracecheck/tracecheck/impl/session/sessiontest"
	"github.com/tracecheck/tracecheck/trace"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// actions returns the actions of the events rec recorded, in order.
func actions(rec *trace.Recorder) []string {
	var out []string
	for _, e := range rec.Events() {
		out = append(out, e.Action)
	}
	return out
}

// lastEvent returns the last event rec recorded.
func lastEvent(t *testing.T, rec *trace.Recorder) trace.Event {
	t.Helper()
	evs := rec.Events()
	if len(evs) == 0 {
		t.Fatal("no event recorded")
	}
	return evs[len(evs)-1]
}

func newSession(t *testing.T, cfg session.Config) *session.Session {
	t.Helper()
	if cfg.Detector == nil {
		cfg.Detector = &sessiontest.Detector{}
	}
	if cfg.SilenceFrames == 0 {
		cfg.SilenceFrames = 1
	}
	if cfg.Generator == nil {
		cfg.Generator = &sessiontest.Generator{Words: []string{"a", "b"}}
	}
	if cfg.Synthesizer == nil {
		cfg.Synthesizer = sessiontest.Synthesizer{}
	}
	if cfg.Compactor == nil {
		cfg.Compactor = &sessiontest.Compactor{}
	}
	if cfg.JoinTimeout == 0 {
		cfg.JoinTimeout = 10 * time.Second // generous: a loaded machine must not abandon
	}
	s, err := session.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func wait(t *testing.T, c <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-c:
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
	}
}

func TestLifecycle(t *testing.T) {
	rec := &trace.Recorder{}
	s := newSession(t, session.Config{Sink: rec, Instance: "s1"})

	if ev, err := s.PushAudio(sessiontest.Speech()); err != nil || ev.Kind != session.TurnStarted || ev.Frame != 1 {
		t.Fatalf("speech frame: %+v, %v", ev, err)
	}
	if ev, err := s.PushAudio(sessiontest.Speech()); err != nil || ev.Kind != session.TurnNone {
		t.Fatalf("second speech frame: %+v, %v", ev, err)
	}
	if ev, err := s.PushAudio(sessiontest.Silence()); err != nil || ev.Kind != session.TurnStopped {
		t.Fatalf("silence frame: %+v, %v", ev, err)
	}
	r, err := s.StartResponse("hello")
	if err != nil {
		t.Fatal(err)
	}
	var audio []string
	for chunk := range r.Audio() {
		audio = append(audio, string(chunk))
	}
	wait(t, r.Done(), "response done")
	if r.Err() != nil || !slices.Equal(audio, []string{"a", "b"}) {
		t.Fatalf("response: err %v, audio %q", r.Err(), audio)
	}
	for _, item := range []string{"x", "y", "z"} {
		if err := s.AppendHistory(item); err != nil {
			t.Fatal(err)
		}
	}
	job, err := s.TriggerCompaction()
	if err != nil {
		t.Fatal(err)
	}
	wait(t, job.Done(), "compaction done")
	if h, err := s.History(); err != nil || !slices.Equal(h, []string{"z"}) || job.Err() != nil {
		t.Fatalf("history %q, %v, job %v", h, err, job.Err())
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	want := []string{"Init", "VadStart", "VadStop", "RespStart", "TTSClosed", "RespFinish", "CompTrigger", "CompFinish", "Teardown"}
	if got := actions(rec); !slices.Equal(got, want) {
		t.Fatalf("actions %q, want %q", got, want)
	}
	last := lastEvent(t, rec)
	wantState := map[string]any{"conn": 1, "vad": 2, "resp": 2, "compaction": 2}
	for k, v := range wantState {
		if last.State[k] != v {
			t.Fatalf("Teardown state %v, want %v", last.State, wantState)
		}
	}
	if got := s.State(); got != (session.State{Conn: session.ConnTorn, VAD: session.VADTerminated, Resp: session.RespTerminated, Compaction: session.CompTerminated}) {
		t.Fatalf("State after Close = %+v", got)
	}
}

func TestStartsRefusedAfterClose(t *testing.T) {
	s := newSession(t, session.Config{})
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		call func() error
	}{
		{"PushAudio", func() error { _, err := s.PushAudio(sessiontest.Speech()); return err }},
		{"StartResponse", func() error { _, err := s.StartResponse("x"); return err }},
		{"CancelResponse", func() error { return s.CancelResponse(1) }},
		{"FinishResponse", func() error { return s.FinishResponse(1) }},
		{"TriggerCompaction", func() error { _, err := s.TriggerCompaction(); return err }},
		{"AppendHistory", func() error { return s.AppendHistory("x") }},
		{"History", func() error { _, err := s.History(); return err }},
		{"Close again", func() error {
			if err := s.Close(); err != nil {
				return err
			}
			return session.ErrClosed
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.call(); !errors.Is(err, session.ErrClosed) {
				t.Fatalf("got %v, want ErrClosed", err)
			}
		})
	}
}

func TestResponseEnds(t *testing.T) {
	gate := sessiontest.NewGate()
	defer gate.Release()
	tests := []struct {
		name string
		end  func(s *session.Session, r *session.Response) error
		want error
	}{
		{"finish", func(s *session.Session, r *session.Response) error { return s.FinishResponse(r.ID()) }, nil},
		{"cancel", func(s *session.Session, r *session.Response) error { return s.CancelResponse(r.ID()) }, session.ErrCanceled},
		{"preempt", func(s *session.Session, r *session.Response) error { _, err := s.StartResponse("again"); return err }, session.ErrPreempted},
		{"close", func(s *session.Session, r *session.Response) error { return s.Close() }, session.ErrClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession(t, session.Config{Generator: &sessiontest.Generator{Words: []string{"w"}, Gate: gate}})
			defer s.Close()
			r, err := s.StartResponse("p")
			if err != nil {
				t.Fatal(err)
			}
			if chunk := <-r.Audio(); string(chunk) != "w" { // TTS is streaming
				t.Fatalf("chunk %q", chunk)
			}
			if err := tt.end(s, r); err != nil {
				t.Fatal(err)
			}
			wait(t, r.Done(), "response done")
			if !errors.Is(r.Err(), tt.want) || (tt.want == nil && r.Err() != nil) {
				t.Fatalf("Err = %v, want %v", r.Err(), tt.want)
			}
			for range r.Audio() { // the pipeline closes its stream
			}
			if err := s.FinishResponse(r.ID()); !errors.Is(err, session.ErrNoResponse) && !errors.Is(err, session.ErrClosed) {
				t.Fatalf("second finish: %v", err)
			}
		})
	}
}

func TestCompactionBusy(t *testing.T) {
	gate := sessiontest.NewGate()
	s := newSession(t, session.Config{Compactor: &sessiontest.Compactor{Gate: gate}})
	defer s.Close()
	job, err := s.TriggerCompaction()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.TriggerCompaction(); !errors.Is(err, session.ErrBusy) {
		t.Fatalf("second trigger: %v, want ErrBusy", err)
	}
	gate.Release()
	wait(t, job.Done(), "job")
	if _, err := s.TriggerCompaction(); err != nil {
		t.Fatalf("trigger after finish: %v", err)
	}
}

func TestAbandonedChild(t *testing.T) {
	tests := []struct {
		name  string
		cfg   func(g *sessiontest.Gate) session.Config
		start func(s *session.Session)
		child string
	}{
		{"compaction ignores cancel",
			func(g *sessiontest.Gate) session.Config {
				return session.Config{Compactor: &sessiontest.Compactor{Gate: g, IgnoreCancel: true}}
			},
			func(s *session.Session) { s.TriggerCompaction() }, "compaction"},
		{"generator ignores cancel",
			func(g *sessiontest.Gate) session.Config {
				return session.Config{Generator: &sessiontest.Generator{Gate: g, IgnoreCancel: true}}
			},
			func(s *session.Session) { s.StartResponse("p") }, "resp"},
		{"detector stuck",
			func(g *sessiontest.Gate) session.Config {
				return session.Config{Detector: &sessiontest.Detector{Gate: g}}
			},
			func(s *session.Session) { go s.PushAudio(sessiontest.Speech()) }, "vad"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gate := sessiontest.NewGate()
			defer gate.Release()
			rec := &trace.Recorder{}
			cfg := tt.cfg(gate)
			cfg.Sink, cfg.JoinTimeout = rec, 200*time.Millisecond
			s := newSession(t, cfg)
			tt.start(s)
			wait(t, gate.Entered(), "work to block")
			err := s.Close()
			if !errors.Is(err, session.ErrAbandoned) {
				t.Fatalf("Close = %v, want ErrAbandoned", err)
			}
			if rep := s.Report(); !slices.Equal(rep.Abandoned, []string{tt.child}) {
				t.Fatalf("abandoned %v, want [%s]", rep.Abandoned, tt.child)
			}
			last := lastEvent(t, rec)
			if last.Action != session.ActTeardown || last.Detail["abandoned"] == nil {
				t.Fatalf("last event %+v", last)
			}
			gate.Release() // let the abandoned work end so that nothing leaks
		})
	}
}

func TestPanicTearsDown(t *testing.T) {
	tests := []struct {
		name  string
		cfg   session.Config
		start func(s *session.Session)
	}{
		{"generator", session.Config{Generator: &sessiontest.Generator{Panic: true}}, func(s *session.Session) { s.StartResponse("p") }},
		{"compactor", session.Config{Compactor: &sessiontest.Compactor{Panic: true}}, func(s *session.Session) { s.TriggerCompaction() }},
		{"detector", session.Config{Detector: &sessiontest.Detector{Panic: true}}, func(s *session.Session) {
			if _, err := s.PushAudio(sessiontest.Speech()); !errors.Is(err, session.ErrChildPanic) {
				panic("PushAudio did not report the panic")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newSession(t, tt.cfg)
			tt.start(s)
			wait(t, s.Done(), "teardown after panic")
			if err := s.Close(); !errors.Is(err, session.ErrChildPanic) {
				t.Fatalf("Close = %v, want ErrChildPanic", err)
			}
		})
	}
}

func TestConnectionDrop(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	s, err := session.New(ctx, session.Config{})
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	wait(t, s.Done(), "teardown after drop")
	if err := s.Report().Cause; !errors.Is(err, session.ErrConnectionDropped) {
		t.Fatalf("cause %v", err)
	}
	if _, err := s.StartResponse("x"); !errors.Is(err, session.ErrClosed) {
		t.Fatalf("start after drop: %v", err)
	}
}

// TestCloseJoinsCompaction: a compaction in flight when the session is
// closed is canceled and joined before Close returns; nothing of it runs
// on or commits after Teardown. (It kills the named mutant
// session/fire-and-forget-compaction, internal/mutants.)
func TestCloseJoinsCompaction(t *testing.T) {
	gate := sessiontest.NewGate() // the compactor waits here until canceled
	defer gate.Release()
	rec := &trace.Recorder{}
	s := newSession(t, session.Config{Sink: rec, Compactor: &sessiontest.Compactor{Gate: gate}})
	job, err := s.TriggerCompaction()
	if err != nil {
		t.Fatal(err)
	}
	<-gate.Entered()
	if err := s.Close(); err != nil {
		t.Fatalf("Close = %v", err)
	}
	select {
	case <-job.Done():
	default:
		t.Fatal("Close returned with the compaction still running")
	}
	if !errors.Is(job.Err(), session.ErrClosed) {
		t.Fatalf("job.Err() = %v, want ErrClosed", job.Err())
	}
	if st := s.State(); st.Compaction != session.CompTerminated {
		t.Fatalf("compaction state %v after Close, want terminated", st.Compaction)
	}
	if got, want := actions(rec), []string{"Init", "CompTrigger", "Teardown"}; !slices.Equal(got, want) {
		t.Fatalf("actions %q, want %q", got, want)
	}
	if got := lastEvent(t, rec).State["compaction"]; got != int(session.CompTerminated) {
		t.Fatalf("Teardown's compaction %v, want %d", got, session.CompTerminated)
	}
	if err := goleak.Find(); err != nil {
		t.Fatalf("goroutines outlived the session: %v", err)
	}
}

func TestConfigInvalid(t *testing.T) {
	for _, cfg := range []session.Config{{SilenceFrames: -1}, {AudioBuffer: -1}, {JoinTimeout: -time.Second}} {
		if _, err := session.New(context.Background(), cfg); !errors.Is(err, session.ErrConfig) {
			t.Errorf("New(%+v) = %v, want ErrConfig", cfg, err)
		}
	}
}
