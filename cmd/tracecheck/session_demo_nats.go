package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/tracecheck/tracecheck/impl/checkpoint"
	"github.com/tracecheck/tracecheck/monitor"
	"github.com/tracecheck/tracecheck/trace"
)

// sessionDemoNATS returns sink teed to JetStream at url for `tracecheck
// monitor` (sink itself if url is ""), and the function that flushes and
// closes the NATS side and says what it published. The session
// coordinators are realtime: the NATS side never slows them down; when
// NATS is slow or down its buffer fills and it drops (and counts) events,
// and the monitor judges their sessions incomplete. The trace file stays
// whole either way. Instances are published as RUN/demo-N, RUN unique
// per run, so that the verdicts of two runs do not collide.
//
// session-demo's --nats flag is this, three lines in runSessionDemo:
//
//	natsURL := fs.String("nats", "", "also publish the events to NATS JetStream at `URL`, for tracecheck monitor")
//	tee, closeNATS, err := sessionDemoNATS(*natsURL, sink, stderr) // after sink := ...; on err: print, return exitUsage
//	... session.DemoConfig{..., Sink: tee, ...}; and closeNATS() after RunDemo (or defer it)
func sessionDemoNATS(url string, sink trace.Sink, stderr io.Writer) (trace.Sink, func(), error) {
	if url == "" {
		return sink, func() {}, nil
	}
	prefix := "session-demo-" + checkpoint.NewRunID(time.Now()) + "/"
	ns, err := monitor.NewSink(monitor.SinkConfig{URL: url, Spec: "session", InstancePrefix: prefix, Name: "tracecheck session-demo",
		Logf: func(format string, args ...any) {
			fmt.Fprintf(stderr, "tracecheck session-demo: "+format+"\n", args...)
		}})
	if err != nil {
		return nil, nil, err
	}
	done := func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		err := ns.Close(ctx)
		st := ns.Stats()
		fmt.Fprintf(stderr, "tracecheck session-demo: NATS %s: %d events published to tracecheck.session.* as %s*", url, st.Published, prefix)
		if err != nil {
			fmt.Fprintf(stderr, "; %v", err)
		}
		fmt.Fprintln(stderr)
	}
	return tee{sink, ns}, done, nil
}

// tee emits to a, then to b; b's errors (a dropped event) do not count:
// a is the trace.
type tee struct{ a, b trace.Sink }

func (t tee) Emit(e trace.Event) error {
	err := t.a.Emit(e)
	if berr := t.b.Emit(e); berr != nil && !errors.Is(berr, monitor.ErrDropped) && err == nil {
		// An event that is not JSON: a's writer refused it too.
		return berr
	}
	return err
}
