package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

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

const sessionDemoSynopsis = `[--sessions N] [--turns T] [--speed X] [--mix realistic|plain] [--seed S] [-o FILE] [--trace-nats URL]

Runs N concurrent realtime voice sessions (impl/session) with the default
workers: an energy-threshold VAD over synthetic 16 kHz PCM16 frames, a
canned response generator, a TTS stub that streams paced audio chunks, and
a summarise-by-truncation compactor.

The realistic mix (the default, seeded by S) is what a voice server sees:
users who barge in while an answer is speaking (the client cancels it),
answers started speculatively before a turn ends and revised, answers
preempted by newer ones, compaction running over answers and turns,
responses and compactions that complete, are finished or fail, and
sessions that end by a hang-up, a dropped connection or a panic in a
child's work (VAD, TTS, compaction) in every state of the session. Four
sessions in five follow a seeded script, which holds each piece of work
until it lets it end and checks the session's state after every step; the
fifth is driven by racing microphone and agent goroutines. Each session
hears about T turns (1 to 2T-1). From 40 sessions on, the trace exercises
every transition of spec/session.fizz. Audio a client still receives from
a response after canceling it is counted and reported (seed 001's known
defect, not fixed here).

The plain mix: each session hears exactly T turns (half a second of tone,
then silence until the VAD ends the turn), answers each in full, compacts
its history every second turn, and closes.

The seed S (>= 1, default 1) makes the realistic mix reproducible: the
same seed scripts the same sessions.

The trace of all sessions (NDJSON, docs/trace-format.md) is written to FILE
("-" for standard output; without -o, to a new temporary file), validated
against spec/session.fizz, and its transition coverage reported; the
summary names the file. On a violation the summary names the property
broken: when the trace does what one of the spec's mutants does (say a
teardown that leaves compaction running, spec mutant
no-compaction-teardown), the invariant that mutant breaks
(ChildrenDieWithParent). Such a bug in the code is what the code mutant
session/fire-and-forget-compaction plants: see 'tracecheck mutate
--list'. With --trace-nats URL the events also go to NATS JetStream for
'tracecheck monitor' (docs/monitor.md); the trace file stays whole
whatever NATS does (--nats is a deprecated spelling of it).

Exit codes: 0 every session's trace valid and no session did anything the
workload did not cause on purpose; 1 a violation, an incomplete trace, or
such a failure; 2 usage; 3 the trace file could not be written.`

func runSessionDemo(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("session-demo", sessionDemoSynopsis, stderr)
	sessions := fs.Int("sessions", 40, "number of concurrent `sessions` (1..10000)")
	turns := fs.Int("turns", 0, "user `turns` per session, on average in the realistic mix (0..1000; 0: 4 realistic, 3 plain)")
	speed := fs.Float64("speed", 20, "pacing `factor` of audio and TTS: 1 is real time (> 0)")
	mixName := fs.String("mix", "realistic", "the `workload`: realistic or plain")
	bargeIn := fs.Duration("barge-in", session.DefaultBargeInMinSpeech, "the user's speech that interrupts a streaming response: its minimum `duration` (0 disables barge-in)")
	seed := fs.Int64("seed", session.DefaultDemoSeed, cli.UsageSeed)
	out := fs.String("o", "", "trace output `file`, - for stdout (default: a new temporary file)")
	natsURL := fs.String("trace-nats", "", cli.UsageTraceNATS)
	cli.Deprecated(fs, stderr, "nats", "--trace-nats", false, func(v string) error { *natsURL = v; return nil })
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
	case *turns < 0 || *turns > 1000:
		fmt.Fprintf(stderr, "tracecheck session-demo: -turns %d out of range 0..1000\n", *turns)
		return exitUsage
	case *seed < 1:
		fmt.Fprintf(stderr, "tracecheck session-demo: -seed %d must be >= 1\n", *seed)
		return exitUsage
	case *bargeIn < 0:
		fmt.Fprintf(stderr, "tracecheck session-demo: -barge-in %v must be >= 0 (0 disables barge-in)\n", *bargeIn)
		return exitUsage
	case !(*speed > 0) || *speed > 1e6:
		fmt.Fprintf(stderr, "tracecheck session-demo: -speed %v must be > 0\n", *speed)
		return exitUsage
	}
	mix, err := session.ParseMix(*mixName)
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck session-demo: -mix %q: realistic or plain\n", *mixName)
		return exitUsage
	}
	var file *os.File
	if *out != "-" {
		// Before any work: an unwritable path fails fast.
		var f *os.File
		var err error
		if *out == "" {
			f, err = os.CreateTemp("", "tracecheck-session-demo-*.ndjson")
		} else {
			f, err = os.Create(*out)
		}
		if err != nil {
			fmt.Fprintf(stderr, "tracecheck session-demo: %v\n", err)
			return exitInput
		}
		defer f.Close()
		file = f
		*out = f.Name()
	}
	var buf bytes.Buffer
	w := trace.NewWriter(&buf)
	// The trace says what it is: spec/session.fizz, by its hash.
	h, _ := spec.SHA256(spec.SessionFiles...)
	if err := w.WriteHeader(trace.Header{Spec: bundled.Session().Name, SpecSHA256: h, Emitter: "tracecheck session-demo (impl/session)"}); err != nil {
		fmt.Fprintf(stderr, "tracecheck session-demo: %v\n", err)
		return exitInput
	}
	sink := trace.NewCutoff(w)
	tee, closeNATS, err := sessionDemoNATS(*natsURL, sink, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck session-demo: %v\n", err)
		return exitUsage
	}
	rep, err := session.RunDemo(context.Background(), session.DemoConfig{Sessions: *sessions, Turns: *turns,
		Speed: *speed, Mix: mix, Seed: *seed, Sink: tee, BargeInMinSpeech: bargeInSetting(*bargeIn)})
	failed := 0
	for _, e := range rep.Errs {
		if e != nil {
			if failed < 5 {
				fmt.Fprintf(stderr, "tracecheck session-demo: %v\n", e)
			}
			failed++
		}
	}
	if err != nil && failed == 0 {
		fmt.Fprintf(stderr, "tracecheck session-demo: %v\n", err)
		failed++
	}
	// Every session is closed; only a child that outlived its session (one
	// its teardown abandoned, stuck past the join timeout) can still emit.
	// Its events are dropped, and counted below, so that the trace read
	// from buf is final.
	sink.Cut()
	closeNATS()
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
	if mix == session.MixRealistic {
		writeMixFigures(summary, rep, *seed)
	}
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
	if cov, err := check.CoverageOf(context.Background(), sessioncheck.Spec(false), crep); err == nil {
		fmt.Fprintf(summary, "coverage of spec/session.fizz: exercised %d/%d transitions\n", cov.Exercised, cov.Total)
	}
	projViolation := writeProjections(context.Background(), summary, stderr, buf.Bytes(), *out)
	if n := sink.Late(); n > 0 {
		fmt.Fprintf(summary, "%d event(s) emitted after their session closed, by goroutines that outlived it, were dropped\n", n)
	}
	for _, in := range crep.Instances {
		if in.Divergence != nil {
			fmt.Fprintf(summary, "  %s: %s at line %d: %s\n", in.Instance, in.Divergence.Action, in.Divergence.Line, in.Divergence.Reason)
			break
		}
	}
	if crep.Verdict() == check.Violation {
		if m, ok := explainingMutant(context.Background(), buf.Bytes(), *out); ok {
			fmt.Fprintf(summary, "violated: invariant %s (the trace does what spec mutant %s does: %s)\n", m.Breaks, m.Name, m.Doc)
		}
	}
	if failed > 0 {
		fmt.Fprintf(summary, "%d session(s) did what the workload did not cause (see above)\n", failed)
	}
	if crep.Verdict() != check.Valid || failed > 0 || projViolation {
		return exitViolation
	}
	return exitOK
}

// explainingMutant returns the mutant of spec/session.fizz whose model the
// trace data fits up to a step that breaks the property the mutant is
// known to break: the bug the trace shows, named in the spec's words.
func explainingMutant(ctx context.Context, data []byte, name string) (cli.Mutant, bool) {
	for _, m := range bundled.Session().Mutants {
		rep, err := m.Model.Check(ctx, bytes.NewReader(data), name, check.Options{})
		if err != nil {
			continue
		}
		for _, in := range rep.Instances {
			if d := in.Divergence; d != nil && (d.Kind == check.KindInvariant || d.Kind == check.KindProperty) &&
				strings.Contains(d.Reason, m.Breaks) {
				return m, true
			}
		}
	}
	return cli.Mutant{}, false
}

// writeMixFigures writes what the realistic mix did.
func writeMixFigures(w io.Writer, rep session.DemoReport, seed int64) {
	fmt.Fprintf(w, "mix realistic, seed %d: %d scripted and %d racing sessions; %d barge-ins; responses: %d completed (%d finished by the client), %d canceled, %d preempted, %d failed, %d torn down\n",
		seed, rep.Scripted, rep.Racing, rep.BargeIns, rep.Completed, rep.Finished, rep.Canceled, rep.Preempted, rep.FailedResponses, rep.ClosedResponses)
	fmt.Fprintf(w, "compactions overlapping a response %d; work failed without panicking %d; calls refused after losing a race %d\n",
		rep.Overlaps, rep.Failures, rep.Refused)
	fmt.Fprintf(w, "sessions ended: %d hang-ups, %d connection drops, %d child panics (vad %d, tts %d, compaction %d)\n",
		rep.HangUps, rep.Drops, rep.Panics, rep.PanicsBy["vad"], rep.PanicsBy["tts"], rep.PanicsBy["compaction"])
	fmt.Fprintf(w, "barge-in: %d responses interrupted by the user's speech; audio chunks received after their response was canceled, preempted or torn down: %d; sent by a TTS pipeline whose response was already canceled: %d (both must be 0: an ended response's buffered audio is discarded)\n",
		rep.Interrupted, rep.LateAudio, rep.SentAfterCancel)
}

// writeProjections checks the trace against each machine spec M1–M5 (the
// session spec's projections) and its timing, and writes a line per spec
// (verdict, coverage of its transitions and what was not exercised) and
// the timing figures. It reports whether any was not valid.
func writeProjections(ctx context.Context, w, stderr io.Writer, data []byte, name string) (bad bool) {
	specs := bundled.Specs()
	src := bundled.Session()
	proj, err := cli.CheckProjections(ctx, specs, &src, bytes.NewReader(data), name, check.Options{}, nil, false)
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck session-demo: projecting the trace: %v\n", err)
		return true
	}
	covs, err := cli.Coverage(ctx, proj)
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck session-demo: %v\n", err)
	}
	floors := map[string]bundled.CoverageFloor{}
	for _, f := range bundled.MachineCoverageFloors() {
		floors[f.Spec] = f
	}
	for i, r := range proj.Reports {
		if r.Err != nil || r.Report == nil {
			fmt.Fprintf(w, "check of the projection onto %s: input error: %v\n", r.Projection.Spec, r.Err)
			bad = true
			continue
		}
		rep := r.Report
		fmt.Fprintf(w, "projected onto %s: %v (%d valid, %d violation, %d incomplete)", r.Projection.Spec, rep.Verdict(),
			rep.Count(check.Valid), rep.Count(check.Violation), rep.Count(check.Incomplete))
		if rep.Verdict() != check.Valid {
			bad = true
		}
		if i < len(covs) {
			c := covs[i]
			fmt.Fprintf(w, "; coverage %d/%d transitions", c.Coverage.RequiredExercised, c.Coverage.Required)
			if len(c.Coverage.NotRequired) > 0 {
				fmt.Fprintf(w, " (%d final-state stutters not required)", len(c.Coverage.NotRequired))
			}
			if m := c.Missing(); len(m) > 0 {
				fmt.Fprintf(w, "; not exercised: %s", byAction(m))
				if f, ok := floors[c.Spec]; ok {
					fmt.Fprintf(w, "; the realistic mix's floor %d/%d (docs/machines.md says why)", f.Min, c.Coverage.Required)
				}
			}
		}
		fmt.Fprintln(w)
		for _, in := range rep.Instances {
			if in.Divergence != nil {
				fmt.Fprintf(w, "  %s: %s: %s\n", in.Instance, in.Divergence.Action, in.Divergence.Reason)
				break
			}
		}
	}
	for _, m := range proj.Monitors {
		if m.Timed == 0 {
			continue
		}
		fmt.Fprintf(w, "%s: %v (%d sessions timed)\n", m.Monitor.Name, m.Verdict(), m.Timed)
		for _, f := range m.Figures {
			fmt.Fprintf(w, "  %s\n", f)
		}
		for _, v := range m.Violations {
			fmt.Fprintf(w, "  %s: %s\n", v.Instance, v.Reason)
			bad = true
		}
	}
	return bad
}

// byAction summarises transitions ("FROM -ACTION-> TO") by action:
// "Close 3, Drop 2".
func byAction(edges []string) string {
	counts := map[string]int{}
	var order []string
	for _, e := range edges {
		_, rest, _ := strings.Cut(e, " -")
		act, _, _ := strings.Cut(rest, "-> ")
		if counts[act] == 0 {
			order = append(order, act)
		}
		counts[act]++
	}
	parts := make([]string, len(order))
	for i, a := range order {
		parts[i] = fmt.Sprintf("%s %d", a, counts[a])
	}
	return strings.Join(parts, ", ")
}

// bargeInSetting is Config.BargeInMinSpeech for the -barge-in flag, where
// 0 disables barge-in.
func bargeInSetting(d time.Duration) time.Duration {
	if d == 0 {
		return session.BargeInOff
	}
	return d
}
