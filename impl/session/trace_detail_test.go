package session_test

import (
	"testing"
	"time"

	"github.com/tracecheck/tracecheck/impl/session"
	"github.com/tracecheck/tracecheck/impl/session/sessiontest"
	"github.com/tracecheck/tracecheck/trace"
)

// detailOf returns the detail of the first event of action whose detail
// has key (any if key is "").
func detailOf(t *testing.T, events []trace.Event, action, key string) map[string]any {
	t.Helper()
	for _, e := range events {
		if _, ok := e.Detail[key]; e.Action == action && (key == "" || ok) {
			return e.Detail
		}
	}
	t.Fatalf("no %s event with detail %q in %+v", action, key, events)
	return nil
}

// The details the machine specs' projections read are the real state's:
// the VAD's frame counts, the ended response's audio stream (what the cut
// discarded, nothing left for the reader), the teardown's exit path and
// start, the detector stopped in a pause, and each event's time from the
// session's clock.
func TestTraceDetails(t *testing.T) {
	rec := &trace.Recorder{}
	at := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	gate := sessiontest.NewGate()
	defer gate.Release()
	s := newSession(t, session.Config{Sink: rec, Instance: "d", SilenceFrames: 3, BargeInMinSpeech: session.BargeInOff, AudioBuffer: 8,
		Clock:     func() time.Time { return at },
		Generator: &sessiontest.Generator{Words: []string{"one", "two", "three"}, Gate: gate}})
	push := func(frames ...bool) {
		for _, speech := range frames {
			f := sessiontest.Silence()
			if speech {
				f = sessiontest.Speech()
			}
			if _, err := s.PushAudio(f); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Two quiet frames, then a turn: speech, speech (held), a pause,
	// speech (resumed), three quiet frames (the turn ends).
	push(false, false, true, true, false, true, false, false, false)
	r, err := s.StartResponse("p")
	if err != nil {
		t.Fatal(err)
	}
	wait(t, gate.Entered(), "the generator to emit every word")
	if err := s.CancelResponse(r.ID()); err != nil {
		t.Fatal(err)
	}
	push(true, false) // a turn, in a pause when the session closes
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	events := rec.Events()
	for _, e := range events {
		if !e.Time.Equal(at) {
			t.Errorf("%s at %v, want the session's clock's %v", e.Action, e.Time, at)
		}
	}
	if d := detailOf(t, events, trace.InitAction, "join_timeout"); d["join_timeout"] != "10s" || d["silence_frames"] != 3 {
		t.Errorf("Init detail %v", d)
	}
	if d := detailOf(t, events, session.ActVadStart, "quiet"); d["quiet"] != 2 {
		t.Errorf("VadStart detail %v, want quiet 2", d)
	}
	if d := detailOf(t, events, session.ActVadStop, "held"); d["held"] != 1 || d["resumed"] != 1 {
		t.Errorf("VadStop detail %v, want held 1, resumed 1", d)
	}
	fin := detailOf(t, events, session.ActRespFinish, "audio")
	a, _ := fin["audio"].(map[string]any)
	if fin["cause"] != "cancel" || a["cut"] != true || a["ended"] != true || a["sent"] != 3 || a["dropped"] != 3 || a["buffered"] != 0 {
		t.Errorf("RespFinish detail %v: want the cut's audio: 3 sent, 3 dropped, none left", fin)
	}
	td := detailOf(t, events, session.ActTeardown, "exit")
	if td["exit"] != "close" || td["began"] != at.Format(time.RFC3339Nano) || td["vad_silence"] != 1 {
		t.Errorf("Teardown detail %v: want exit close, began at the clock's time, vad_silence 1", td)
	}
	if _, ok := td["exits"]; ok {
		t.Errorf("Teardown detail %v: one exit path fired", td)
	}
}
