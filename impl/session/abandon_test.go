package session_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/tracecheck/tracecheck/impl/session"
	"github.com/tracecheck/tracecheck/impl/session/sessiontest"
)

// Whatever teardown does, even abandoning a child coordinator that never
// took its stop request (a join timeout too short for a busy child), every
// response it started ends for its caller: Done closes once Close has
// returned, and no worker is left waiting.
func TestAbandonedChildEndsItsWork(t *testing.T) {
	gate := sessiontest.NewGate()
	defer gate.Release()
	rounds := 300
	if testing.Short() {
		rounds = 50
	}
	abandoned := 0
	for round := 0; round < rounds; round++ {
		s, err := session.New(context.Background(), session.Config{JoinTimeout: time.Microsecond,
			Detector: &sessiontest.Detector{}, Generator: &sessiontest.Generator{Words: []string{"w"}, Gate: gate},
			Synthesizer: sessiontest.Synthesizer{}, Compactor: &sessiontest.Compactor{}})
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var resps []*session.Response
		started := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := 0; ; i++ {
				r, err := s.StartResponse("p")
				if err != nil {
					return
				}
				mu.Lock()
				resps = append(resps, r)
				mu.Unlock()
				if i == 0 {
					close(started)
				}
			}
		}()
		<-started
		cerr := s.Close()
		<-done
		if errors.Is(cerr, session.ErrAbandoned) {
			abandoned++
		}
		mu.Lock()
		for _, r := range resps {
			select {
			case <-r.Done():
			case <-time.After(5 * time.Second):
				t.Fatalf("round %d (Close: %v): response %d's Done still open 5 s after Close returned", round, cerr, r.ID())
			}
		}
		mu.Unlock()
	}
	t.Logf("%d rounds, %d with a child abandoned at teardown", rounds, abandoned)
}
