package main

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tracecheck/tracecheck/impl/session"
	"github.com/tracecheck/tracecheck/monitor"
	"github.com/tracecheck/tracecheck/trace"
)

// startMonitor starts an embedded NATS server and a monitor of the bundled
// specs, in this process; verdicts come on the returned channel.
func startMonitor(t *testing.T) (string, chan monitor.Verdict) {
	t.Helper()
	srv, err := monitor.StartEmbedded(monitor.EmbeddedConfig{Dir: filepath.Join(t.TempDir(), "nats"), Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Shutdown)
	verdicts := make(chan monitor.Verdict, 100)
	m, err := monitor.New(monitor.Config{URL: srv.URL(), Specs: monitorSpecs(), Idle: time.Second, Lease: time.Second,
		OnVerdict: func(v monitor.Verdict) { verdicts <- v }})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return srv.URL(), verdicts
}

func next(t *testing.T, ch chan monitor.Verdict) monitor.Verdict {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(30 * time.Second):
		t.Fatal("no verdict")
	}
	return monitor.Verdict{}
}

// TestRunTraceNATS: run --trace-nats publishes the journal as it is
// written; the monitor judges the run valid, as check judges the journal.
func TestRunTraceNATS(t *testing.T) {
	py := pubPython(t)
	url, verdicts := startMonitor(t)
	dir := t.TempDir()
	journal := filepath.Join(dir, "journal.ndjson")
	args := append([]string{"run", "--quiet", "--publish-dir", filepath.Join(dir, "pub"), "--name", "m", "--journal", journal, "--trace-nats", url, "--"},
		append(append([]string(nil), py...), pubExample("train.py"))...)
	code, stdout, stderr := pubCLI(args...)
	if code != exitOK {
		t.Fatalf("run: code %d\n%s%s", code, stdout, stderr)
	}
	if !strings.Contains(stderr, "journal events acknowledged") {
		t.Errorf("no trace-nats summary:\n%s", stderr)
	}
	v := next(t, verdicts)
	if v.Spec != "program" || v.Verdict != monitor.VerdictValid || !strings.Contains(stdout, v.Instance) {
		t.Errorf("verdict %+v for run\n%s", v, stdout)
	}
	if code, out, _ := pubCLI("check", journal); code != exitOK || !strings.Contains(out, "VALID") {
		t.Errorf("the journal: %s", out)
	}
	// Default journal path: the forwarder finds it from the run's ID.
	args = append([]string{"run", "--quiet", "--publish-dir", filepath.Join(dir, "pub"), "--name", "m2", "--trace-nats", url, "--"},
		append(append([]string(nil), py...), pubExample("fail.py"))...)
	code, stdout, stderr = pubCLI(args...)
	if code == exitOK {
		t.Fatalf("fail.py published:\n%s%s", stdout, stderr)
	}
	v = next(t, verdicts)
	if v.Spec != "program" || v.Verdict != monitor.VerdictValid || v.Events < 3 {
		t.Errorf("verdict %+v for a failed run (its journal is a valid trace)\n%s", v, stderr)
	}
}

// TestSessionDemoNATS: the session coordinators' events, teed to NATS
// the way session-demo --nats does, get one valid verdict per session,
// while the trace written locally is whole.
func TestSessionDemoNATS(t *testing.T) {
	url, verdicts := startMonitor(t)
	var rec trace.Recorder
	tee, closeNATS, err := sessionDemoNATS(url, &rec, &strings.Builder{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := session.RunDemo(context.Background(), session.DemoConfig{Sessions: 3, Turns: 1, Speed: 200, Sink: tee}); err != nil {
		t.Fatal(err)
	}
	closeNATS()
	var mu sync.Mutex
	seen := map[string]string{}
	for range 3 {
		v := next(t, verdicts)
		mu.Lock()
		seen[v.Instance] = v.Verdict
		mu.Unlock()
	}
	for name, verdict := range seen {
		if !strings.HasPrefix(name, "session-demo-") || !strings.Contains(name, "/demo-") || verdict != monitor.VerdictValid {
			t.Errorf("%s: %s", name, verdict)
		}
	}
	if len(rec.Events()) == 0 {
		t.Error("the local trace is empty")
	}
	if tee, _, _ := sessionDemoNATS("", &rec, nil); tee != trace.Sink(&rec) {
		t.Error("no URL: not the sink itself")
	}
}
