package session_test

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/tracecheck/tracecheck/impl/session"
	"github.com/tracecheck/tracecheck/impl/session/sessiontest"
	"github.com/tracecheck/tracecheck/trace"
)

// streaming starts a response whose generator emits words and then waits
// at gate, and returns it once every word's chunk is on its stream.
func streaming(t *testing.T, s *session.Session, gate *sessiontest.Gate) *session.Response {
	t.Helper()
	r, err := s.StartResponse("p")
	if err != nil {
		t.Fatal(err)
	}
	wait(t, gate.Entered(), "the generator to emit every word")
	return r
}

// TestBargeIn: while a response streams, the user speaks; the frame that
// brings the turn's speech to BargeInMinSpeech cancels the response before
// PushAudio returns: its Err is ErrCanceled, its stream is at its end (the
// buffered chunks are discarded), and the trace has the barge-in's
// RespFinish, with the turn in progress, right after that frame's turn
// event. A negative BargeInMinSpeech never interrupts.
func TestBargeIn(t *testing.T) {
	const frame = 20 * time.Millisecond // sessiontest's frames at 16 kHz
	tests := []struct {
		name      string
		minSpeech time.Duration
		want      int // the speech frame that interrupts (0: none within 20)
	}{
		{"default 200ms", 0, 10},
		{"one frame", frame, 1},
		{"less than a frame", time.Millisecond, 1},
		{"between frames", 50 * time.Millisecond, 3},
		{"off", session.BargeInOff, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gate := sessiontest.NewGate()
			defer gate.Release()
			rec := &trace.Recorder{}
			s := newSession(t, session.Config{Sink: rec, SilenceFrames: 3, BargeInMinSpeech: tt.minSpeech,
				Generator: &sessiontest.Generator{Words: []string{"a", "b", "c"}, Gate: gate}})
			defer s.Close()
			r := streaming(t, s, gate)
			got := 0
			for k := 1; k <= 20; k++ {
				frameIn := sessiontest.Speech()
				if k == 2 { // a silent frame inside the turn is not speech
					frameIn = sessiontest.Silence()
				}
				ev, err := s.PushAudio(frameIn)
				if err != nil {
					t.Fatal(err)
				}
				if ev.BargeIn {
					if got != 0 {
						t.Fatalf("second barge-in in one turn, at frame %d", k)
					}
					got = k
					if !ev.Interrupted {
						t.Fatalf("frame %d: barge-in did not interrupt the streaming response", k)
					}
					select {
					case <-r.Done():
					default:
						t.Fatal("PushAudio returned before the response ended")
					}
					if chunk, ok := <-r.Audio(); ok {
						t.Fatalf("read chunk %q after the barge-in", chunk)
					}
				}
			}
			speechFrame := got // frame 2 is silent: the k-th frame is the (k-1)-th speech frame
			if got > 2 {
				speechFrame = got - 1
			}
			if speechFrame != tt.want {
				t.Fatalf("interrupted at speech frame %d (push %d), want %d", speechFrame, got, tt.want)
			}
			if tt.want == 0 {
				if r.Err() != nil || s.State().Resp != session.RespActive {
					t.Fatalf("barge-in off: response ended (%v), state %+v", r.Err(), s.State())
				}
				return
			}
			if !errors.Is(r.Err(), session.ErrCanceled) {
				t.Fatalf("Err %v, want ErrCanceled", r.Err())
			}
			evs := rec.Events()
			var fin trace.Event
			for _, e := range evs {
				if e.Action == session.ActRespFinish {
					fin = e
				}
			}
			if fin.Detail["cause"] != "barge-in" || fin.State[session.VarResp] != 0 {
				t.Fatalf("barge-in's event %+v, want RespFinish with cause barge-in and resp 0", fin)
			}
			if st := s.State(); st.VAD != session.VADSpeech || st.Resp != session.RespIdle {
				t.Fatalf("state after the barge-in %+v, want speech and no response", st)
			}
		})
	}
}

// TestBargeInOncePerTurn: a turn interrupts once, when its speech reaches
// the threshold: a response started later in the same turn (a speculative
// answer) goes on; the next turn interrupts it.
func TestBargeInOncePerTurn(t *testing.T) {
	gate := sessiontest.NewGate()
	defer gate.Release()
	s := newSession(t, session.Config{SilenceFrames: 1, BargeInMinSpeech: 40 * time.Millisecond,
		Generator: &sessiontest.Generator{Words: []string{"w"}, Gate: gate}})
	defer s.Close()
	push := func(speech bool) session.TurnEvent {
		t.Helper()
		f := sessiontest.Silence()
		if speech {
			f = sessiontest.Speech()
		}
		ev, err := s.PushAudio(f)
		if err != nil {
			t.Fatal(err)
		}
		return ev
	}
	push(true)
	if ev := push(true); !ev.BargeIn || ev.Interrupted {
		t.Fatalf("second speech frame, no response: %+v, want a barge-in that interrupts nothing", ev)
	}
	r, err := s.StartResponse("speculative")
	if err != nil {
		t.Fatal(err)
	}
	for k := 0; k < 5; k++ {
		if ev := push(true); ev.BargeIn {
			t.Fatalf("a second barge-in in the turn: %+v", ev)
		}
	}
	if r.Err() != nil || s.State().Resp != session.RespActive {
		t.Fatalf("the speculative response was interrupted: %v", r.Err())
	}
	push(false) // the turn ends
	push(true)
	if ev := push(true); !ev.Interrupted {
		t.Fatalf("next turn: %+v, want the response interrupted", ev)
	}
	wait(t, r.Done(), "the response to end")
	if !errors.Is(r.Err(), session.ErrCanceled) {
		t.Fatalf("Err %v, want ErrCanceled", r.Err())
	}
}

// TestHistoryKeepsWhatWasHeard: a response's text enters the history when
// it ends. Cut short (canceled, finished, preempted, interrupted), it
// leaves the text whose audio the transport acknowledged as played in
// full; completed, all of its text; torn down, nothing.
func TestHistoryKeepsWhatWasHeard(t *testing.T) {
	words := []string{"one ", "two ", "three ", "four "}
	tests := []struct {
		name  string
		play  int // chunks read and acknowledged
		extra int // bytes acknowledged beyond them (part of the next word)
		end   func(s *session.Session, r *session.Response) error
		want  []string
	}{
		{"cancel after two words", 2, 2, func(s *session.Session, r *session.Response) error { return s.CancelResponse(r.ID()) }, []string{"assistant: one two"}},
		{"finish after one word", 1, 0, func(s *session.Session, r *session.Response) error { return s.FinishResponse(r.ID()) }, []string{"assistant: one"}},
		{"preempted after three words", 3, 0, func(s *session.Session, r *session.Response) error {
			n, err := s.StartResponse("next")
			if err == nil {
				err = s.CancelResponse(n.ID()) // heard nothing: no item
			}
			return err
		}, []string{"assistant: one two three"}},
		{"interrupted after two words", 2, 0, func(s *session.Session, r *session.Response) error {
			for k := 0; k < 10; k++ { // 200 ms of speech
				if _, err := s.PushAudio(sessiontest.Speech()); err != nil {
					return err
				}
			}
			return nil
		}, []string{"assistant: one two"}},
		{"canceled, nothing acknowledged", 0, 0, func(s *session.Session, r *session.Response) error { return s.CancelResponse(r.ID()) }, nil},
		{"completed", 0, 0, nil, []string{"assistant: one two three four"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gate := sessiontest.NewGate()
			defer gate.Release()
			s := newSession(t, session.Config{SilenceFrames: 1,
				Generator: &sessiontest.Generator{Words: words, Gate: gate}})
			defer s.Close()
			r := streaming(t, s, gate)
			for k := 0; k < tt.play; k++ {
				r.Played(len(<-r.Audio()))
			}
			r.Played(tt.extra)
			if tt.end == nil {
				gate.Release()
				wait(t, r.Done(), "the response to complete")
			} else if err := tt.end(s, r); err != nil {
				t.Fatal(err)
			}
			h, err := s.History()
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(h, tt.want) {
				t.Fatalf("history %q, want %q", h, tt.want)
			}
		})
	}
}

// TestTTSClosedOnce: however a response ends — and whatever ends it again
// later (a second cancel, a finish, the session's teardown) — its pipeline
// is closed and joined once: one TTSClosed event per response.
func TestTTSClosedOnce(t *testing.T) {
	gate := sessiontest.NewGate()
	defer gate.Release()
	rec := &trace.Recorder{}
	s := newSession(t, session.Config{Sink: rec, Generator: &sessiontest.Generator{Words: []string{"w"}, Gate: gate}})
	r1 := streaming(t, s, gate)
	if err := s.CancelResponse(r1.ID()); err != nil {
		t.Fatal(err)
	}
	for _, again := range []func() error{
		func() error { return s.CancelResponse(r1.ID()) },
		func() error { return s.FinishResponse(r1.ID()) },
	} {
		if err := again(); !errors.Is(err, session.ErrNoResponse) {
			t.Fatalf("ending response 1 again: %v, want ErrNoResponse", err)
		}
	}
	r2 := streaming(t, s, gate)
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for _, r := range []*session.Response{r1, r2} {
		if _, ok := <-r.Audio(); ok {
			t.Fatalf("response %d: a chunk after its end", r.ID())
		}
	}
	closed := map[any]int{}
	for _, e := range rec.Events() {
		if e.Action == session.ActTTSClosed {
			closed[e.Detail["response"]]++
		}
	}
	if closed[uint64(1)] != 1 || closed[uint64(2)] != 1 || len(closed) != 2 {
		t.Fatalf("TTSClosed events per response %v, want one each for responses 1 and 2", closed)
	}
}
