package monitor

import (
	"context"
	"errors"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracecheck/tracecheck/trace"
)

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func initEvent(instance string) trace.Event {
	return trace.Event{Instance: instance, Action: "Init", State: map[string]any{"conn": 0, "vad": 0, "resp": 0, "compaction": 0}}
}

// TestSinkBoundedWhenDown: with no server, a Sink buffers up to its bound,
// then drops and counts; Block makes Emit wait that long first; Close
// gives up when told, counts what it could not publish and says so.
func TestSinkBoundedWhenDown(t *testing.T) {
	url := "nats://127.0.0.1:" + itoa(freePort(t))
	var said []string
	s, err := NewSink(SinkConfig{URL: url, Spec: "session", Partitions: 4, MaxPending: 10, Block: 20 * time.Millisecond,
		Logf: func(f string, a ...any) { said = append(said, f) }})
	if err != nil {
		t.Fatal(err)
	}
	dropped := 0
	start := time.Now()
	for i := range 25 {
		err := s.Emit(initEvent("i" + itoa(i)))
		if errors.Is(err, ErrDropped) {
			dropped++
		} else if err != nil {
			t.Fatal(err)
		}
	}
	if dropped != 15 {
		t.Errorf("dropped %d of 25 with room for 10", dropped)
	}
	if el := time.Since(start); el < 15*20*time.Millisecond {
		t.Errorf("Emit did not wait for room (Block): %v for 15 drops", el)
	}
	st := s.Stats()
	if st.Dropped != 15 || st.Emitted != 10 || st.Pending != 10 || st.Published != 0 {
		t.Errorf("stats %+v", st)
	}
	if err := s.Emit(trace.Event{Instance: "x", Action: "Init", State: map[string]any{"f": func() {}}}); err == nil || errors.Is(err, ErrDropped) {
		t.Errorf("an event that is not JSON: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	err = s.Close(ctx)
	if err == nil || !strings.Contains(err.Error(), "15 events dropped") || !strings.Contains(err.Error(), "10 events not acknowledged") {
		t.Errorf("Close: %v", err)
	}
	if st := s.Stats(); st.Unflushed != 10 {
		t.Errorf("unflushed %d, want 10", st.Unflushed)
	}
	if len(said) == 0 {
		t.Error("the drops were not said")
	}
}

// TestSinkDropMarksInstance: events dropped while NATS is down mark their
// instance; when NATS is back, its next event carries the mark and the
// monitor judges the instance incomplete (lost), not valid.
func TestSinkDropMarksInstance(t *testing.T) {
	port := freePort(t)
	url := "nats://127.0.0.1:" + itoa(port)
	s, err := NewSink(SinkConfig{URL: url, Spec: "session", Partitions: 2, MaxPending: 2})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Emit(initEvent("holes")); err != nil {
		t.Fatal(err)
	}
	if err := s.Emit(trace.Event{Instance: "holes", Seq: 1, Action: "VadStart", State: map[string]any{"vad": 1}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Emit(trace.Event{Instance: "holes", Seq: 2, Action: "VadStop", State: map[string]any{"vad": 0}}); !errors.Is(err, ErrDropped) {
		t.Fatalf("third event with room for two: %v", err)
	}
	dir := t.TempDir()
	srv, err := StartEmbedded(EmbeddedConfig{Dir: filepath.Join(dir, "nats"), Port: port})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Shutdown()
	_, stop := runMonitor(t, Config{URL: srv.URL(), Partitions: 2, Idle: time.Second, Lease: time.Second})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := s.Emit(trace.Event{Instance: "holes", Seq: 3, Action: "Teardown", State: map[string]any{"conn": 1, "vad": 2, "resp": 2, "compaction": 2}}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(ctx); err == nil || !strings.Contains(err.Error(), "1 events dropped") {
		t.Errorf("Close: %v", err)
	}
	waitVerdicts(t, srv.URL(), 1, 30*time.Second)
	stop()
	v := verdicts(t, srv.URL())["holes"]
	if v.Verdict != VerdictIncomplete || v.Cause != CauseLost {
		t.Errorf("verdict %+v, want incomplete (lost)", v)
	}
}

func netDial(port int) (net.Conn, error) {
	return net.DialTimeout("tcp", "127.0.0.1:"+itoa(port), time.Second)
}
