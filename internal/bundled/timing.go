package bundled

import (
	"fmt"
	"time"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/cli"
	"github.com/tracecheck/tracecheck/trace"
)

// The bounds of the session's timing monitor (check --bound NAME=D).
const (
	// BoundJoinTimeout is the teardown's join timeout, for a trace whose
	// Init events do not give it (impl/session's detail join_timeout).
	BoundJoinTimeout = "join-timeout"
	// BoundTeardownGrace is what a teardown may take beyond its join
	// timeout: the join's own slack (impl/session waits up to
	// min(timeout/4, 100ms)+1ms for an answer due at the deadline) and
	// scheduling. Default DefaultTeardownGrace.
	BoundTeardownGrace = "teardown-grace"
	// BoundBargeIn bounds the time from the user's speech start
	// (VadStart) to the cancel of the response it interrupts
	// (RespFinish, cause barge-in). Unchecked unless given: it depends on
	// the minimum speech and on how fast audio is pushed.
	BoundBargeIn = "barge-in"
)

// DefaultTeardownGrace is BoundTeardownGrace's default.
const DefaultTeardownGrace = 150 * time.Millisecond

// SessionTiming is session.fizz's timing monitor: on timestamped session
// traces, teardown completes within its join timeout, no audio is sent
// after the response's terminal event, and barge-in cancels within its
// bound.
func SessionTiming() cli.Monitor {
	return cli.Monitor{
		Name: "timing",
		Doc:  "teardown within the join timeout, no audio after a response's end, barge-in latency",
		Bounds: map[string]string{
			BoundJoinTimeout:   "a teardown's join timeout, where the trace's Init does not give it",
			BoundTeardownGrace: "what a teardown may take beyond its join timeout (default 150ms)",
			BoundBargeIn:       "time from speech start to the barge-in's cancel (unchecked unless given)",
		},
		New: func(b map[string]time.Duration) cli.MonitorRun {
			return &timing{bounds: b, inst: map[string]*timed{}}
		},
	}
}

// timing is one run of the session's timing monitor.
type timing struct {
	bounds    map[string]time.Duration
	inst      map[string]*timed
	teardowns []time.Duration
	bargeIns  []time.Duration
	ends      int // responses ended by a cut whose pipeline's last chunk time is known
	late      int // of them, those with audio after the end
	timed     int // instances with a timed event
	out       []check.InstanceResult
}

// timed is what the monitor keeps of one instance.
type timed struct {
	events, first, last int
	join                time.Duration // from Init's detail, else the bound
	over                bool          // torn down: forgotten after this event
	speech              time.Time     // the last VadStart
	begin               time.Time     // a composite Teardown's begin
	ended               map[int64]time.Time
	violated            bool
}

// Event implements cli.MonitorRun. An instance is kept from its first
// timed event to the end of its Teardown, so that memory follows the
// sessions in progress, not the trace.
func (t *timing) Event(src cli.Source) {
	e := src.Event
	in := t.inst[e.Instance]
	if in == nil {
		if e.Time.IsZero() {
			return
		}
		in = &timed{first: src.Pos.Line, ended: map[int64]time.Time{}}
		t.inst[e.Instance] = in
		t.timed++
	}
	in.events++
	in.last = src.Pos.Line
	if e.Time.IsZero() {
		return
	}
	defer func() {
		if in.over {
			delete(t.inst, e.Instance)
		}
	}()
	at := e.Time
	switch e.Action {
	case trace.InitAction:
		if s, ok := e.Detail["join_timeout"].(string); ok {
			if d, err := time.ParseDuration(s); err == nil {
				in.join = d
			}
		}
		if d, ok := t.bounds[BoundJoinTimeout]; ok {
			in.join = d
		}
	case actVadStart:
		in.speech = at
	case actRespStart, actRespFinish:
		id, _ := detailInt(e.Detail, "response")
		if e.Action == actRespStart {
			id, _ = detailInt(e.Detail, "preempted")
		}
		if id != 0 {
			if a := audioOf(e); a.ok && (a.cut || a.ended) {
				in.ended[id] = at
			}
		}
		if cause, _ := e.Detail["cause"].(string); e.Action == actRespFinish && cause == "barge-in" && !in.speech.IsZero() {
			lat := at.Sub(in.speech)
			t.bargeIns = append(t.bargeIns, lat)
			if b, ok := t.bounds[BoundBargeIn]; ok && lat > b {
				t.violate(in, src, fmt.Sprintf("barge-in took %v from the speech's start (VadStart at %s) to the cancel, over the bound %v",
					lat, in.speech.Format(time.RFC3339Nano), b))
			}
		}
	case actTTSClosed:
		id, _ := detailInt(e.Detail, "response")
		d, _ := e.Detail["audio"].(map[string]any)
		last, _ := d["last"].(string)
		end, ok := in.ended[id]
		if ok && last != "" {
			t.ends++
			if lt, err := time.Parse(time.RFC3339Nano, last); err == nil && lt.After(end) {
				t.late++
				t.violate(in, src, fmt.Sprintf("response %d's pipeline sent audio at %s, %v after the response's terminal event (at %s)",
					id, lt.Format(time.RFC3339Nano), lt.Sub(end), end.Format(time.RFC3339Nano)))
			}
		}
	case actTeardown:
		switch e.Part {
		case trace.PartBegin:
			in.begin = at
			return
		case trace.PartStep:
			return
		}
		began := in.begin
		if s, ok := e.Detail["began"].(string); ok {
			if b, err := time.Parse(time.RFC3339Nano, s); err == nil {
				began = b
			}
		}
		in.over = true
		if began.IsZero() {
			return
		}
		took := at.Sub(began)
		t.teardowns = append(t.teardowns, took)
		if in.join > 0 {
			grace := DefaultTeardownGrace
			if g, ok := t.bounds[BoundTeardownGrace]; ok {
				grace = g
			}
			if took > in.join+grace {
				t.violate(in, src, fmt.Sprintf("teardown took %v, over its join timeout %v (+ grace %v)", took, in.join, grace))
			}
		}
	}
}

// violate records the instance's first timing violation, at src.
func (t *timing) violate(in *timed, src cli.Source, reason string) {
	if in.violated {
		return
	}
	in.violated = true
	e := src.Event
	t.out = append(t.out, check.InstanceResult{Instance: e.Instance, Verdict: check.Violation, Events: in.events,
		FirstLine: in.first, LastLine: src.Pos.Line, Reason: reason,
		Divergence: &check.Divergence{File: src.Pos.File, Line: src.Pos.Line, Instance: e.Instance, Seq: e.Seq, Action: e.Action,
			Event: string(src.Line), Kind: check.KindTiming, Reason: reason, Candidates: []check.Candidate{}}})
}

func (t *timing) End() ([]check.InstanceResult, int, []string) {
	n := t.timed
	if n == 0 {
		return nil, 0, nil
	}
	var figs []string
	if len(t.teardowns) > 0 {
		p := cli.Percentiles(t.teardowns, 99, 100)
		figs = append(figs, fmt.Sprintf("teardown: %d, p99 %v, max %v", len(t.teardowns), p[0], p[1]))
	}
	if len(t.bargeIns) > 0 {
		p := cli.Percentiles(t.bargeIns, 50, 99, 100)
		bound := "unchecked (--bound barge-in=D)"
		if b, ok := t.bounds[BoundBargeIn]; ok {
			bound = "bound " + b.String()
		}
		figs = append(figs, fmt.Sprintf("barge-in latency (speech start to cancel): %d, p50 %v, p99 %v, max %v, %s", len(t.bargeIns), p[0], p[1], p[2], bound))
	}
	figs = append(figs, fmt.Sprintf("audio after a response's end: %d of %d cut responses", t.late, t.ends))
	return t.out, n, figs
}
