package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/tracecheck/tracecheck/impl/session"
	"github.com/tracecheck/tracecheck/trace"
)

// stuckCompactor ignores cancellation until released: teardown abandons
// it at the join timeout.
type stuckCompactor struct{ release chan struct{} }

func (c stuckCompactor) Compact(_ context.Context, h []string) ([]string, error) {
	<-c.release
	return h, nil
}

// The timing of a real session's trace: a teardown that abandons a stuck
// compaction takes its join timeout (and a little: the join's slack),
// within the join timeout plus the default grace; with the join timeout
// and grace bounded below that, check reports the teardown as a timing
// violation, with the figures.
func TestTimingOfARealTeardown(t *testing.T) {
	var buf bytes.Buffer
	w := trace.NewWriter(&buf)
	comp := stuckCompactor{release: make(chan struct{})}
	defer close(comp.release) // the abandoned job returns, and its goroutine with it
	const join = 50 * time.Millisecond
	s, err := session.New(context.Background(), session.Config{Instance: "stuck", Sink: w, Compactor: comp, JoinTimeout: join})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.TriggerCompaction(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	s.Close() // ErrAbandoned: the compaction ignored its cancellation
	if took := time.Since(start); took < join {
		t.Fatalf("Close took %v, less than the join timeout %v", took, join)
	}
	file := filepath.Join(t.TempDir(), "stuck.ndjson")
	if err := os.WriteFile(file, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	// The trace is a violation of session.fizz (compaction abandoned at 1);
	// its timing is within the join timeout and the default grace.
	out, _, _ := runCLI(t, "check", "-q", file)
	if !strings.Contains(out, "(timing): VALID (1 instances timed, 0 violation)") || !strings.Contains(out, "teardown: 1, p99 ") {
		t.Fatalf("timing of the abandoning teardown:\n%s", out)
	}
	out, _, code := runCLI(t, "check", "-q", "--bound", "join-timeout=10ms", "--bound", "teardown-grace=1ms", file)
	if code != exitViolation || !strings.Contains(out, "(timing): VIOLATION (1 instances timed, 1 violation)") ||
		!strings.Contains(out, "over its join timeout 10ms (+ grace 1ms)") || !strings.Contains(out, "teardown took ") {
		t.Fatalf("exit %d, want the teardown over 10ms+1ms reported:\n%s", code, out)
	}
}
