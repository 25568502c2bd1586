package session_test

import (
	"errors"
	"testing"

	"github.com/tracecheck/tracecheck/impl/session"
	"github.com/tracecheck/tracecheck/trace"
)

// TestNothingStartsAfterTeardown: once Close has returned, every request
// that would start work (a response, a compaction, a frame) is refused
// with ErrClosed, every time, and the trace ends with the Teardown step.
// Many attempts, not one: a coordinator that still takes requests after
// teardown takes some of them, in an order the scheduler picks.
func TestNothingStartsAfterTeardown(t *testing.T) {
	rec := &trace.Recorder{}
	s := newSession(t, session.Config{Sink: rec, Instance: "s1"})
	if _, err := s.StartResponse("before"); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	const attempts = 64
	for i := 0; i < attempts; i++ {
		if r, err := s.StartResponse("after"); !errors.Is(err, session.ErrClosed) {
			t.Fatalf("StartResponse after Close, attempt %d: %v (response %v)", i, err, r)
		}
		if _, err := s.TriggerCompaction(); !errors.Is(err, session.ErrClosed) {
			t.Fatalf("TriggerCompaction after Close, attempt %d: %v", i, err)
		}
		if _, err := s.PushAudio(make([]int16, 160)); !errors.Is(err, session.ErrClosed) {
			t.Fatalf("PushAudio after Close, attempt %d: %v", i, err)
		}
	}
	evs := rec.Events()
	if len(evs) == 0 || evs[len(evs)-1].Action != session.ActTeardown {
		t.Fatalf("the trace does not end with Teardown: %d events, last %+v", len(evs), evs[len(evs)-1:])
	}
	if st := s.State(); st.Resp != session.RespTerminated || st.VAD != session.VADTerminated || st.Compaction != session.CompTerminated {
		t.Fatalf("state after Close: %+v", st)
	}
}
