package sessioncheck_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/harness/sessioncheck"
	"github.com/tracecheck/tracecheck/impl/session"
	"github.com/tracecheck/tracecheck/impl/session/sessiontest"
	"github.com/tracecheck/tracecheck/trace"
)

// artifactsDir is where non-linearizable histories' visualizations go:
// $TRACECHECK_ARTIFACTS, else a directory under the system's temp dir that
// outlives the test.
func artifactsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("TRACECHECK_ARTIFACTS")
	if dir == "" {
		dir = filepath.Join(os.TempDir(), "tracecheck-artifacts")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// linearRun is one concurrent run against real sessions.
type linearRun struct {
	ops     []porcupine.Operation
	rec     *sessioncheck.Recorder
	windows map[sessioncheck.EventKey][]sessioncheck.Window
}

// add records op, and its window under key (if the call caused an event).
func (r *linearRun) add(op porcupine.Operation, key sessioncheck.EventKey) {
	r.ops = append(r.ops, op)
	if key.Action != "" {
		r.windows[key] = append(r.windows[key], sessioncheck.Window{Call: op.Call, Return: op.Return})
	}
}

type workload struct {
	goroutines, opsEach, sessions int
	closeProb                     float64
	seed                          uint64
	completing                    bool // responses complete on their own
}

// linearBargeFrames is the barge-in threshold of the linearizability
// runs, in speech frames of sessiontest's (20 ms): a turn's third speech
// frame interrupts the active response.
const linearBargeFrames = 3

// newLinearSession starts session i for a linearizability run: SilenceFrames
// 1, barge-in at linearBargeFrames, deterministic workers, its trace
// stamped into rec.
func newLinearSession(t *testing.T, i int, rec *sessioncheck.Recorder, gen session.Generator) *session.Session {
	t.Helper()
	s, err := session.New(context.Background(), session.Config{
		Instance: fmt.Sprintf("s%d", i), Sink: rec, SilenceFrames: 1, JoinTimeout: 10 * time.Second,
		BargeInMinSpeech: linearBargeFrames * 20 * time.Millisecond,
		Detector:         &sessiontest.Detector{},
		Generator:        gen,
		Synthesizer:      sessiontest.Synthesizer{},
		Compactor:        &sessiontest.Compactor{},
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// perform calls op on s (session op.Session) as client, stamping the call
// and the return on clock, and returns the operation and the key of the
// trace event it caused (none: an empty Action).
func perform(clock *sessioncheck.Clock, s *session.Session, client int, op sessioncheck.Op) (porcupine.Operation, sessioncheck.EventKey) {
	inst := fmt.Sprintf("s%d", op.Session)
	var res sessioncheck.Result
	var key sessioncheck.EventKey
	call := clock.Now()
	switch op.Kind {
	case sessioncheck.OpPush:
		frame := sessiontest.Silence()
		if op.Speech {
			frame = sessiontest.Speech()
		}
		ev, err := s.PushAudio(frame)
		res = sessioncheck.Result{Err: sessioncheck.Classify(err), Turn: ev.Kind, Frame: ev.Frame,
			BargeIn: ev.BargeIn, Interrupted: ev.Interrupted}
		switch ev.Kind {
		case session.TurnStarted:
			key = sessioncheck.EventKey{Instance: inst, Action: "VadStart", ID: ev.Frame}
		case session.TurnStopped:
			key = sessioncheck.EventKey{Instance: inst, Action: "VadStop", ID: ev.Frame}
		}
	case sessioncheck.OpStart:
		r, err := s.StartResponse("p")
		res.Err = sessioncheck.Classify(err)
		if err == nil {
			res.ID = r.ID()
			key = sessioncheck.EventKey{Instance: inst, Action: "RespStart", ID: r.ID()}
		}
	case sessioncheck.OpFinish, sessioncheck.OpCancel:
		var err error
		if op.Kind == sessioncheck.OpFinish {
			err = s.FinishResponse(op.ID)
		} else {
			err = s.CancelResponse(op.ID)
		}
		res.Err = sessioncheck.Classify(err)
		if err == nil {
			key = sessioncheck.EventKey{Instance: inst, Action: "RespFinish", ID: op.ID}
		}
	case sessioncheck.OpTrigger:
		j, err := s.TriggerCompaction()
		res.Err = sessioncheck.Classify(err)
		if err == nil {
			res.ID = j.ID()
			key = sessioncheck.EventKey{Instance: inst, Action: "CompTrigger", ID: j.ID()}
		}
	case sessioncheck.OpClose:
		res.Err = sessioncheck.Classify(s.Close())
		key = sessioncheck.EventKey{Instance: inst, Action: "Teardown"}
	}
	ret := clock.Now()
	return porcupine.Operation{ClientId: client, Input: op, Call: call, Output: res, Return: ret}, key
}

func runLinear(t *testing.T, w workload) linearRun {
	t.Helper()
	clock := &sessioncheck.Clock{}
	rec := sessioncheck.NewRecorder(clock)
	never := sessiontest.NewGate() // generators wait here until canceled
	defer never.Release()
	gen := session.Generator(&sessiontest.Generator{Words: []string{"w"}, Gate: never})
	if w.completing {
		gen = &sessiontest.Generator{Words: []string{"w"}}
	}
	sessions := make([]*session.Session, w.sessions)
	latest := make([]atomic.Uint64, w.sessions)
	for i := range sessions {
		sessions[i] = newLinearSession(t, i, rec, gen)
	}
	locals := make([]linearRun, w.goroutines)
	var wg sync.WaitGroup
	for g := 0; g < w.goroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(w.seed, uint64(g)))
			l := &locals[g]
			l.windows = map[sessioncheck.EventKey][]sessioncheck.Window{}
			for k := 0; k < w.opsEach; k++ {
				i := rng.IntN(w.sessions)
				op := sessioncheck.Op{Session: i}
				x := rng.Float64()
				switch {
				case x < w.closeProb:
					op.Kind = sessioncheck.OpClose
				case x < 0.35:
					op.Kind, op.Speech = sessioncheck.OpPush, rng.IntN(2) == 0
				case x < 0.55:
					op.Kind = sessioncheck.OpStart
				case x < 0.70:
					op.Kind = sessioncheck.OpFinish
				case x < 0.80:
					op.Kind = sessioncheck.OpCancel
				default:
					op.Kind = sessioncheck.OpTrigger
				}
				if op.Kind == sessioncheck.OpFinish || op.Kind == sessioncheck.OpCancel {
					op.ID = latest[i].Load()
					if rng.IntN(5) == 0 && op.ID > 1 {
						op.ID--
					}
				}
				o, key := perform(clock, sessions[i], g, op)
				if r := o.Output.(sessioncheck.Result); op.Kind == sessioncheck.OpStart && r.Err == sessioncheck.ErrNone {
					latest[i].Store(r.ID)
				}
				l.add(o, key)
			}
		}(g)
	}
	wg.Wait()
	run := linearRun{rec: rec, windows: map[sessioncheck.EventKey][]sessioncheck.Window{}}
	for _, l := range locals {
		run.ops = append(run.ops, l.ops...)
		for k, ws := range l.windows {
			run.windows[k] = append(run.windows[k], ws...)
		}
	}
	for i, s := range sessions { // close the rest, as one more client
		run.add(perform(clock, s, w.goroutines, sessioncheck.Op{Session: i, Kind: sessioncheck.OpClose}))
	}
	return run
}

// checkLinear runs porcupine; on anything but Ok it writes the
// visualization and returns its path.
func checkLinear(t *testing.T, ops []porcupine.Operation, name string, opt sessioncheck.ModelOptions) (porcupine.CheckResult, string) {
	t.Helper()
	model := sessioncheck.ModelWith(opt)
	res, info := porcupine.CheckOperationsVerbose(model, ops, 60*time.Second)
	if res == porcupine.Ok {
		return res, ""
	}
	path := filepath.Join(artifactsDir(t), fmt.Sprintf("%s-%d.html", name, time.Now().UnixNano()))
	if err := porcupine.VisualizePath(model, info, path); err != nil {
		t.Fatalf("writing visualization: %v", err)
	}
	return res, path
}

// assertLinear checks a run of the given sessions: the history is
// linearizable, every trace event with a caller lies in that call's window,
// every response's TTS is closed before Teardown, and the trace validates
// against spec/session.fizz. It returns the trace's events.
func assertLinear(t *testing.T, run linearRun, sessions int, name string, opt sessioncheck.ModelOptions) []sessioncheck.Stamped {
	t.Helper()
	res, path := checkLinear(t, run.ops, name, opt)
	if res != porcupine.Ok {
		t.Fatalf("porcupine: %v over %d operations; visualization: %s", res, len(run.ops), path)
	}
	events := run.rec.Events()
	if bad := sessioncheck.Windows(events, run.windows); len(bad) > 0 {
		t.Fatalf("%d trace events outside their caller's window, e.g.:\n%s", len(bad), bad[0])
	}
	var plain []trace.Event
	for _, st := range events {
		plain = append(plain, st.Event)
	}
	if bad := sessioncheck.TTSClosedBeforeTeardown(plain); len(bad) > 0 {
		t.Fatalf("M5: %d responses' TTS not closed before Teardown, e.g. %s", len(bad), bad[0])
	}
	rep, err := sessioncheck.Check(context.Background(), bytes.NewReader(run.rec.NDJSON()), name+".ndjson", false)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Verdict() != check.Valid || len(rep.Instances) != sessions {
		t.Fatalf("trace of %d sessions: %v (%d valid)\n%s", len(rep.Instances), rep.Verdict(), rep.Count(check.Valid), firstBad(rep))
	}
	return events
}

func TestLinearizable(t *testing.T) {
	for _, completing := range []bool{false, true} {
		name := "responses-end-by-call"
		if completing {
			name = "responses-also-complete"
		}
		t.Run(name, func(t *testing.T) {
			w := workload{goroutines: 8, opsEach: 2000, sessions: 12, closeProb: 0.0005, seed: 1, completing: completing}
			if completing {
				w.opsEach, w.seed = 1000, 2
			}
			if testing.Short() {
				w.opsEach = 500
			}
			if n, err := strconv.Atoi(os.Getenv("TRACECHECK_SESSION_OPS")); err == nil && n > 0 {
				w.opsEach = n // make session-campaign
			}
			run := runLinear(t, w)
			if len(run.ops) < w.goroutines*w.opsEach {
				t.Fatalf("only %d operations", len(run.ops))
			}
			events := assertLinear(t, run, w.sessions, "session-linear", sessioncheck.ModelOptions{ResponsesComplete: completing, BargeInFrames: linearBargeFrames})
			completed := 0
			for _, st := range events {
				if st.Event.Action == "RespFinish" && st.Event.Detail["cause"] == "complete" {
					completed++
				}
			}
			if completing && completed == 0 {
				t.Fatal("no response completed on its own")
			}
			interrupted := 0
			for _, o := range run.ops {
				if o.Output.(sessioncheck.Result).Interrupted {
					interrupted++
				}
			}
			if interrupted == 0 {
				t.Fatal("no barge-in interrupted a response")
			}
			t.Logf("%d operations by %d goroutines on %d sessions, %d trace events (%d responses completed on their own, %d interrupted by barge-in): linearizable, every event in its caller's window, trace valid",
				len(run.ops), w.goroutines, w.sessions, len(events), completed, interrupted)
		})
	}
}

// TestLinearizableContended: the workload of TestLinearizable with its 8
// goroutines on only 2 sessions, so that most calls on a coordinator race
// another (finishes and cancels of a response a concurrent start may have
// preempted among them).
func TestLinearizableContended(t *testing.T) {
	w := workload{goroutines: 8, opsEach: 1000, sessions: 2, seed: 3}
	if testing.Short() {
		w.opsEach = 300
	}
	run := runLinear(t, w)
	events := assertLinear(t, run, w.sessions, "session-contended", sessioncheck.ModelOptions{BargeInFrames: linearBargeFrames})
	t.Logf("%d operations by %d goroutines on %d sessions, %d trace events: linearizable, every event in its caller's window, trace valid",
		len(run.ops), w.goroutines, w.sessions, len(events))
}

// TestFinishRacesStart: round after round on one session, FinishResponse
// of the active response races a StartResponse that preempts it: one is
// called on the test's goroutine just as the other's goroutine is released,
// the finish first in even rounds and the start in odd ones; then the new
// response is finished. Whichever wins, the finish ends the old response or
// is refused, never the new one: the history is linearizable and the trace
// valid. (It kills the named mutant session/racy-finish, internal/mutants,
// whose FinishResponse checks the id on a snapshot and then finishes
// whatever is active.)
func TestFinishRacesStart(t *testing.T) {
	rounds := 300
	if testing.Short() {
		rounds = 100
	}
	clock := &sessioncheck.Clock{}
	run := linearRun{rec: sessioncheck.NewRecorder(clock), windows: map[sessioncheck.EventKey][]sessioncheck.Window{}}
	never := sessiontest.NewGate() // responses end only by a call
	defer never.Release()
	s := newLinearSession(t, 0, run.rec, &sessiontest.Generator{Words: []string{"w"}, Gate: never})
	finished := 0 // rounds in which the finish ended the old response
	for round := range rounds {
		old, key := perform(clock, s, 0, sessioncheck.Op{Kind: sessioncheck.OpStart})
		run.add(old, key)
		var fin, start porcupine.Operation
		var finKey, startKey sessioncheck.EventKey
		finish := func() {
			fin, finKey = perform(clock, s, 1, sessioncheck.Op{Kind: sessioncheck.OpFinish, ID: old.Output.(sessioncheck.Result).ID})
		}
		preempt := func() { start, startKey = perform(clock, s, 2, sessioncheck.Op{Kind: sessioncheck.OpStart}) }
		sessioncheck.Race(round, finish, preempt)
		run.add(fin, finKey)
		run.add(start, startKey)
		if fin.Output.(sessioncheck.Result).Err == sessioncheck.ErrNone {
			finished++
		}
		run.add(perform(clock, s, 0, sessioncheck.Op{Kind: sessioncheck.OpFinish, ID: start.Output.(sessioncheck.Result).ID}))
	}
	run.add(perform(clock, s, 0, sessioncheck.Op{Kind: sessioncheck.OpClose}))
	assertLinear(t, run, 1, "session-finish-races-start", sessioncheck.ModelOptions{BargeInFrames: linearBargeFrames})
	t.Logf("%d rounds: the finish ended the old response in %d, was refused in %d; linearizable, every event in its caller's window, trace valid",
		rounds, finished, rounds-finished)
}

func firstBad(rep *check.Report) string {
	for _, in := range rep.Instances {
		if in.Verdict != check.Valid {
			if in.Divergence != nil {
				return fmt.Sprintf("%s: %s: %s\n%s", in.Instance, in.Reason, in.Divergence.Reason, in.Divergence.Event)
			}
			return in.Instance + ": " + in.Reason
		}
	}
	return ""
}
