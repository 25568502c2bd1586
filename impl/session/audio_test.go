package session_test

import (
	"testing"
	"time"

	"github.com/tracecheck/tracecheck/impl/session"
	"github.com/tracecheck/tracecheck/impl/session/sessiontest"
)

// TestNoAudioAfterEnd is the regression test of issue 15's stale audio: a
// response whose TTS pipeline has filled its audio buffer is ended by the
// coordinator (canceled, preempted, finished, or torn down with its
// session); from the moment the call returns, a reader of its audio stream
// must see the end of the stream, never one of the buffered chunks.
func TestNoAudioAfterEnd(t *testing.T) {
	words := []string{"one", "two", "three", "four"}
	tests := []struct {
		name string
		end  func(s *session.Session, r *session.Response) error
	}{
		{"cancel", func(s *session.Session, r *session.Response) error { return s.CancelResponse(r.ID()) }},
		{"preempt", func(s *session.Session, r *session.Response) error {
			next, err := s.StartResponse("again")
			if err == nil {
				defer s.CancelResponse(next.ID())
			}
			return err
		}},
		{"finish", func(s *session.Session, r *session.Response) error { return s.FinishResponse(r.ID()) }},
		{"close", func(s *session.Session, r *session.Response) error { return s.Close() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			gate := sessiontest.NewGate()
			defer gate.Release()
			s := newSession(t, session.Config{AudioBuffer: 16,
				Generator: &sessiontest.Generator{Words: words, Gate: gate}})
			defer s.Close()
			r, err := s.StartResponse("p")
			if err != nil {
				t.Fatal(err)
			}
			// The generator reaches its gate after its last word: every
			// word's chunk is then on the stream, unread.
			wait(t, gate.Entered(), "the generator to emit every word")
			if err := tt.end(s, r); err != nil {
				t.Fatal(err)
			}
			select {
			case chunk, ok := <-r.Audio():
				if ok {
					t.Fatalf("read chunk %q after the response ended; want the end of the stream", chunk)
				}
			case <-time.After(5 * time.Second):
				t.Fatal("the audio stream neither delivered nor closed")
			}
		})
	}
}
