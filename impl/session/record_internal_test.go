package session

import (
	"context"
	"sync"
	"testing"
	"time"
)

// joinBlocker is a Compactor that ignores cancellation: it says when its
// context is canceled (the compaction coordinator has taken its stop
// request and is joining it) and returns only when released.
type joinBlocker struct {
	canceled chan struct{}
	release  chan struct{}
	once     sync.Once
}

func (j *joinBlocker) Compact(ctx context.Context, history []string) ([]string, error) {
	<-ctx.Done()
	j.once.Do(func() { close(j.canceled) })
	<-j.release
	return history, nil
}

// A response coordinator that passed record's torn check just before
// teardown began may reach the compaction coordinator while that one is
// joining a compaction that ignores cancellation (it takes no requests
// then, for up to the join timeout). Its call must give up as soon as
// teardown has begun, so that it takes its own stop request and is not
// abandoned: before the fix it waited for the compaction coordinator to
// exit, and `tracecheck verify`'s 2,000 sessions found responses abandoned
// that way.
func TestRecordGivesWayToTeardown(t *testing.T) {
	jb := &joinBlocker{canceled: make(chan struct{}), release: make(chan struct{})}
	defer close(jb.release)
	s, err := New(context.Background(), Config{JoinTimeout: time.Minute, Compactor: jb})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.TriggerCompaction(); err != nil {
		t.Fatal(err)
	}
	closed := make(chan error, 1)
	go func() { closed <- s.Close() }()
	<-jb.canceled // teardown began; the compaction coordinator is joining
	// What record (and AppendHistory) do after their torn check passed.
	appended := make(chan error, 1)
	go func() { appended <- s.appendItem("assistant: late") }()
	select {
	case err := <-appended:
		if err == nil {
			t.Fatal("a history append was served while teardown joined the compaction")
		}
	case <-time.After(30 * time.Second): // a liveness bound: it should return at once
		jb.release <- struct{}{}
		t.Fatal("appendItem still waits on the joining compaction coordinator 30 s after teardown began")
	}
	select {
	case <-s.comp.done:
		t.Fatal("the call waited for the compaction coordinator to exit")
	default: // it returned while the compaction coordinator still joins
	}
	jb.release <- struct{}{}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
}
