package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/cli"
	"github.com/tracecheck/tracecheck/harness/sessioncheck"
	"github.com/tracecheck/tracecheck/impl/session"
	"github.com/tracecheck/tracecheck/internal/bundled"
	"github.com/tracecheck/tracecheck/spec"
	"github.com/tracecheck/tracecheck/trace"
)

func init() {
	register(cli.Command{Name: "session-demo", Summary: "run realtime sessions with the default workers over synthetic PCM, trace and check them", Run: runSessionDemo})
}

const sessionDemoSynopsis = `[-sessions N] [-turns T] [-speed X] [-o FILE]

Runs N concurrent realtime voice sessions (impl/session) with the default
workers: an energy-threshold VAD over synthetic 16 kHz PCM16 frames, a
canned response generator, a TTS stub that streams paced audio chunks, and
a summarise-by-truncation compactor. Each session hears T turns (half a
second of tone, then silence until the VAD ends the turn), answers each,
compacts its history every second turn, and closes.

The trace of all sessions (NDJSON, docs/trace-format.md) is written to FILE
("-" for standard output) and then validated against spec/session.fizz.
(The M4 gap, compaction left fire-and-forget, is a code mutant: see
'tracecheck mutate session/fire-and-forget-compaction'.)

Exit codes: 0 every session's trace valid; 1 a violation or an incomplete
trace; 2 usage; 3 the trace file could not be written.`

func runSessionDemo(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("session-demo", sessionDemoSynopsis, stderr)
	sessions := fs.Int("sessions", 4, "number of concurrent `sessions` (1..10000)")
	turns := fs.Int("turns", 3, "user `turns` per session (1..1000)")
	speed := fs.Float64("speed", 20, "TTS pacing `factor`: 1 is real time (> 0)")
	out := fs.String("o", "session-demo.ndjson", "trace output `file`, - for stdout")
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	switch {
	case fs.NArg() > 0:
		fmt.Fprintf(stderr, "tracecheck session-demo: unexpected argument %q\n", fs.Arg(0))
		return exitUsage
	case *sessions < 1 || *sessions > 10000:
		fmt.Fprintf(stderr, "tracecheck session-demo: -sessions %d out of range 1..10000\n", *sessions)
		return exitUsage
	case *turns < 1 || *turns > 1000:
		fmt.Fprintf(stderr, "tracecheck session-demo: -turns %d out of range 1..1000\n", *turns)
		return exitUsage
	case !(*speed > 0) || *speed > 1e6:
		fmt.Fprintf(stderr, "tracecheck session-demo: -speed %v must be > 0\n", *speed)
		return exitUsage
	case *out == "":
		fmt.Fprintln(stderr, "tracecheck session-demo: -o must name a file or -")
		return exitUsage
	}
	var file *os.File
	if *out != "-" {
		f, err := os.Create(*out) // before any work: an unwritable path fails fast
		if err != nil {
			fmt.Fprintf(stderr, "tracecheck session-demo: %v\n", err)
			return exitInput
		}
		defer f.Close()
		file = f
	}
	var buf bytes.Buffer
	w := trace.NewWriter(&buf)
	// The trace says what it is: spec/session.fizz, by its hash.
	h, _ := spec.SHA256(spec.SessionFiles...)
	if err := w.WriteHeader(trace.Header{Spec: bundled.Session().Name, SpecSHA256: h, Emitter: "tracecheck session-demo (impl/session)"}); err != nil {
		fmt.Fprintf(stderr, "tracecheck session-demo: %v\n", err)
		return exitInput
	}
	sink := &demoSink{w: w}
	rep, err := session.RunDemo(context.Background(), session.DemoConfig{Sessions: *sessions, Turns: *turns,
		Speed: *speed, Sink: sink})
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck session-demo: teardown reported: %v\n", err)
	}
	// Every session is closed; only a child that outlived its session (one
	// its teardown abandoned, stuck past the join timeout) can still emit.
	// Its events are dropped, and counted below, so that the trace read
	// from buf is final.
	sink.close()
	if *out == "-" {
		stdout.Write(buf.Bytes())
	} else if _, werr := file.Write(buf.Bytes()); werr != nil {
		fmt.Fprintf(stderr, "tracecheck session-demo: %v\n", werr)
		return exitInput
	} else if werr := file.Close(); werr != nil {
		fmt.Fprintf(stderr, "tracecheck session-demo: %v\n", werr)
		return exitInput
	}
	summary := stdout
	if *out == "-" {
		summary = stderr
	}
	fmt.Fprintf(summary, "sessions %d, turns %d, responses %d, compactions %d, TTS audio %d bytes\n",
		rep.Sessions, rep.Turns, rep.Responses, rep.Compactions, rep.AudioBytes)
	crep, cerr := sessioncheck.Check(context.Background(), bytes.NewReader(buf.Bytes()), *out, false)
	if cerr != nil {
		fmt.Fprintf(stderr, "tracecheck session-demo: checking the trace: %v\n", cerr)
		return exitViolation
	}
	if *out != "-" {
		fmt.Fprintf(summary, "trace: %s\n", *out)
	}
	fmt.Fprintf(summary, "check against spec/session.fizz: %v (%d valid, %d violation, %d incomplete)\n",
		crep.Verdict(), crep.Count(check.Valid), crep.Count(check.Violation), crep.Count(check.Incomplete))
	if n := sink.lateEvents(); n > 0 {
		fmt.Fprintf(summary, "%d event(s) emitted after their session closed, by goroutines that outlived it, were dropped\n", n)
	}
	for _, in := range crep.Instances {
		if in.Divergence != nil {
			fmt.Fprintf(summary, "  %s: %s at line %d: %s\n", in.Instance, in.Divergence.Action, in.Divergence.Line, in.Divergence.Reason)
			break
		}
	}
	if crep.Verdict() != check.Valid {
		return exitViolation
	}
	return exitOK
}

// demoSink passes events to w until closed, then drops and counts them.
type demoSink struct {
	mu     sync.Mutex
	w      *trace.Writer
	closed bool
	late   int
}

func (d *demoSink) Emit(e trace.Event) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.closed {
		d.late++
		return nil
	}
	return d.w.Emit(e)
}

func (d *demoSink) close() {
	d.mu.Lock()
	d.closed = true
	d.mu.Unlock()
}

func (d *demoSink) lateEvents() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.late
}
