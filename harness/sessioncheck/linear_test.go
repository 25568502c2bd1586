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
// $TRACECHECK_ARTIFACTS; else, for an unexpected failure, a directory under
// the system's temp dir that outlives the test, and for an expected one
// (the seeded race) the test's own temp dir.
func artifactsDir(t *testing.T, expected bool) string {
	t.Helper()
	dir := os.Getenv("TRACECHECK_ARTIFACTS")
	switch {
	case dir != "":
	case expected:
		return t.TempDir()
	default:
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

type workload struct {
	goroutines, opsEach, sessions int
	closeProb                     float64
	seed                          uint64
	racy                          bool
	completing                    bool // responses complete on their own
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
		s, err := session.New(context.Background(), session.Config{
			Instance: fmt.Sprintf("s%d", i), Sink: rec, SilenceFrames: 1, JoinTimeout: 10 * time.Second,
			Detector:           &sessiontest.Detector{},
			Generator:          gen,
			Synthesizer:        sessiontest.Synthesizer{},
			Compactor:          &sessiontest.Compactor{},
			TestOnlyRacyFinish: w.racy,
		})
		if err != nil {
			t.Fatal(err)
		}
		sessions[i] = s
	}
	type local struct {
		ops     []porcupine.Operation
		windows map[sessioncheck.EventKey][]sessioncheck.Window
	}
	locals := make([]local, w.goroutines)
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
				s := sessions[i]
				inst := fmt.Sprintf("s%d", i)
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
					res = sessioncheck.Result{Err: sessioncheck.Classify(err), Turn: ev.Kind, Frame: ev.Frame}
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
						latest[i].Store(r.ID())
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
				l.ops = append(l.ops, porcupine.Operation{ClientId: g, Input: op, Call: call, Output: res, Return: ret})
				if key.Action != "" {
					l.windows[key] = append(l.windows[key], sessioncheck.Window{Call: call, Return: ret})
				}
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
		op := sessioncheck.Op{Session: i, Kind: sessioncheck.OpClose}
		call := clock.Now()
		err := s.Close()
		ret := clock.Now()
		run.ops = append(run.ops, porcupine.Operation{ClientId: w.goroutines, Input: op, Call: call,
			Output: sessioncheck.Result{Err: sessioncheck.Classify(err)}, Return: ret})
		k := sessioncheck.EventKey{Instance: fmt.Sprintf("s%d", i), Action: "Teardown"}
		run.windows[k] = append(run.windows[k], sessioncheck.Window{Call: call, Return: ret})
	}
	return run
}

// checkLinear runs porcupine; on anything but Ok it writes the
// visualization and returns its path.
func checkLinear(t *testing.T, ops []porcupine.Operation, name string, expectIllegal bool, opt sessioncheck.ModelOptions) (porcupine.CheckResult, string) {
	t.Helper()
	model := sessioncheck.ModelWith(opt)
	res, info := porcupine.CheckOperationsVerbose(model, ops, 60*time.Second)
	if res == porcupine.Ok {
		return res, ""
	}
	path := filepath.Join(artifactsDir(t, expectIllegal), fmt.Sprintf("%s-%d.html", name, time.Now().UnixNano()))
	if err := porcupine.VisualizePath(model, info, path); err != nil {
		t.Fatalf("writing visualization: %v", err)
	}
	return res, path
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
			res, path := checkLinear(t, run.ops, "session-linear", false, sessioncheck.ModelOptions{ResponsesComplete: completing})
			if res != porcupine.Ok {
				t.Fatalf("porcupine: %v over %d operations; visualization: %s", res, len(run.ops), path)
			}
			events := run.rec.Events()
			if bad := sessioncheck.Windows(events, run.windows); len(bad) > 0 {
				t.Fatalf("%d trace events outside their caller's window, e.g.:\n%s", len(bad), bad[0])
			}
			var plain []trace.Event
			completed := 0
			for _, st := range events {
				plain = append(plain, st.Event)
				if st.Event.Action == "RespFinish" && st.Event.Detail["cause"] == "complete" {
					completed++
				}
			}
			if completing && completed == 0 {
				t.Fatal("no response completed on its own")
			}
			if bad := sessioncheck.TTSClosedBeforeTeardown(plain); len(bad) > 0 {
				t.Fatalf("M5: %d responses' TTS not closed before Teardown, e.g. %s", len(bad), bad[0])
			}
			rep, err := sessioncheck.Check(context.Background(), bytes.NewReader(run.rec.NDJSON()), "linear.ndjson", false)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Verdict() != check.Valid || len(rep.Instances) != w.sessions {
				t.Fatalf("trace of %d sessions: %v (%d valid)\n%s", len(rep.Instances), rep.Verdict(), rep.Count(check.Valid), firstBad(rep))
			}
			t.Logf("%d operations by %d goroutines on %d sessions, %d trace events (%d responses completed on their own): linearizable, every event in its caller's window, trace valid",
				len(run.ops), w.goroutines, w.sessions, len(events), completed)
		})
	}
}

// TestSeededRaceCaught: the check-then-act race of TestOnlyRacyFinish must
// make the history non-linearizable.
func TestSeededRaceCaught(t *testing.T) {
	for attempt := 1; attempt <= 10; attempt++ {
		run := runLinear(t, workload{goroutines: 8, opsEach: 1000, sessions: 2, seed: uint64(attempt), racy: true})
		res, path := checkLinear(t, run.ops, "session-racy-finish", true, sessioncheck.ModelOptions{})
		if res == porcupine.Illegal {
			t.Logf("attempt %d: race caught as %v; visualization: %s", attempt, res, path)
			if bad := sessioncheck.Windows(run.rec.Events(), run.windows); len(bad) > 0 {
				t.Logf("and %d trace events outside their caller's window, e.g. %s", len(bad), bad[0])
			}
			return
		}
	}
	t.Fatal("the seeded check-then-act race was never caught in 10 runs")
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
