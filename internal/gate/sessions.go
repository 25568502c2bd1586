package gate

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"sync"

	"github.com/tracecheck/tracecheck/impl/session"
	"github.com/tracecheck/tracecheck/internal/bundled"
	"github.com/tracecheck/tracecheck/spec"
	"github.com/tracecheck/tracecheck/trace"
)

// sessionsStage runs concurrent realtime sessions on the real coordinators
// (impl/session) and writes their trace for the coverage stage.
func sessionsStage(ctx context.Context, r *run, s *stage) error {
	n := r.opt.Mode.pick(40, 200, 2000)
	path, err := r.path("sessions", "sessions.ndjson")
	if err != nil {
		return err
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	bw := bufio.NewWriterSize(f, 1<<16)
	sink := &lockedSink{w: trace.NewWriter(bw)}
	h, _ := spec.SHA256(spec.SessionFiles...)
	if err := sink.w.WriteHeader(trace.Header{Spec: bundled.Session().Name, SpecSHA256: h, Emitter: "tracecheck verify (impl/session)"}); err != nil {
		return err
	}
	rep, err := session.RunDemo(ctx, session.DemoConfig{Sessions: n, Turns: 3, Speed: 50, Sink: sink})
	late := sink.close()
	if err != nil {
		s.fail("sessions: %v", err)
	}
	for i, e := range rep.Errs {
		if e != nil {
			s.fail("session %d: Close: %v", i, e)
		}
	}
	if late > 0 {
		s.fail("%d events were emitted after their session closed (a child outlived its session)", late)
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	r.addTrace("session", path, false)
	s.figure("%d sessions, %d turns, %d responses, %d compactions", rep.Sessions, rep.Turns, rep.Responses, rep.Compactions)
	return nil
}

// lockedSink writes events from many goroutines to one trace until closed,
// then counts (and drops) what arrives late.
type lockedSink struct {
	mu     sync.Mutex
	w      *trace.Writer
	closed bool
	late   int
}

func (l *lockedSink) Emit(e trace.Event) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		l.late++
		return fmt.Errorf("emit after close")
	}
	return l.w.Emit(e)
}

func (l *lockedSink) close() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	return l.late
}
