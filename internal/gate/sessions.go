package gate

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/anishathalye/porcupine"
	"go.uber.org/goleak"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/cli"
	"github.com/tracecheck/tracecheck/harness/sessioncheck"
	"github.com/tracecheck/tracecheck/htmlreport"
	"github.com/tracecheck/tracecheck/impl/session"
	"github.com/tracecheck/tracecheck/impl/session/sessiontest"
	"github.com/tracecheck/tracecheck/internal/bundled"
	"github.com/tracecheck/tracecheck/spec"
	"github.com/tracecheck/tracecheck/trace"
)

// sessionsStage runs the session coordinators (impl/session) under the
// realistic mix (session.RunDemo, seeded with the run's seed): thousands of
// concurrent sessions with barge-ins, speculative and preempted responses,
// compaction overlapping responses, failing work, and hang-ups, dropped
// connections and child panics in every state. Their trace goes to the
// coverage stage, which requires all of session.fizz's transitions. Then
// porcupine checks a concurrent history of calls on shared sessions (its
// visualization goes into the run directory), and no goroutine may
// outlive the sessions.
func sessionsStage(ctx context.Context, r *run, s *stage) error {
	baseline := goleak.IgnoreCurrent() // the process's own goroutines
	n := r.opt.Mode.pick(200, 2000, 10000)
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
	w := trace.NewWriter(bw)
	sink := trace.NewCutoff(w)
	h, _ := spec.SHA256(spec.SessionFiles...)
	if err := w.WriteHeader(trace.Header{Spec: bundled.Session().Name, SpecSHA256: h, Emitter: "tracecheck verify (impl/session)"}); err != nil {
		return err
	}
	rep, err := session.RunDemo(ctx, session.DemoConfig{Sessions: n, Speed: 50, Seed: r.seed, Sink: sink})
	late := sink.Cut()
	failed := 0
	for _, e := range rep.Errs {
		if e != nil {
			if failed < 10 {
				s.fail("%v", e)
			}
			failed++
		}
	}
	if failed > 10 {
		s.fail("... %d sessions failed in all", failed)
	}
	if err != nil && failed == 0 {
		s.fail("sessions: %v", err)
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
	s.figure("%d sessions (%d scripted, %d racing), %d turns, %d barge-ins, %d drops, %d panics, %d hang-ups, %d responses (%d canceled, %d preempted), %d compactions (%d overlapping a response), %d failures, %d late audio chunks",
		rep.Sessions, rep.Scripted, rep.Racing, rep.Turns, rep.BargeIns, rep.Drops, rep.Panics, rep.HangUps,
		rep.Responses, rep.Canceled, rep.Preempted, rep.Compactions, rep.Overlaps, rep.Failures, rep.LateAudio)
	s.Detail += fmt.Sprintf("realistic mix, seed %d: %d sessions (%d scripted, %d racing), %d turns\n", r.seed, rep.Sessions, rep.Scripted, rep.Racing, rep.Turns)
	s.Detail += fmt.Sprintf("barge-ins %d; responses %d: %d completed (%d finished by the client), %d canceled, %d preempted, %d failed, %d torn down\n",
		rep.BargeIns, rep.Responses, rep.Completed, rep.Finished, rep.Canceled, rep.Preempted, rep.FailedResponses, rep.ClosedResponses)
	s.Detail += fmt.Sprintf("compactions %d (%d overlapping a response); work failed without panicking %d; racing calls refused %d\n",
		rep.Compactions, rep.Overlaps, rep.Failures, rep.Refused)
	s.Detail += fmt.Sprintf("ends: %d hang-ups, %d connection drops, %d child panics (vad %d, tts %d, compaction %d)\n",
		rep.HangUps, rep.Drops, rep.Panics, rep.PanicsBy["vad"], rep.PanicsBy["tts"], rep.PanicsBy["compaction"])
	s.Detail += fmt.Sprintf("barge-in: %d responses interrupted; audio chunks received after their response was canceled, preempted or torn down: %d; sent by a TTS pipeline whose response was already canceled: %d (both must be 0)\n",
		rep.Interrupted, rep.LateAudio, rep.SentAfterCancel)
	// Its timing: teardown within the join timeout, no audio after a
	// response's end, and the barge-in latency.
	if tf, err := os.Open(path); err == nil {
		src := bundled.Session()
		src.Projections = nil // checked, with their coverage, by the coverage stage
		proj, perr := cli.CheckProjections(ctx, bundled.Specs(), &src, bufio.NewReaderSize(tf, 1<<16), "sessions.ndjson", check.Options{}, nil, false)
		tf.Close()
		if perr != nil {
			s.fail("timing: %v", perr)
		}
		for _, m := range proj.Monitors {
			for _, f := range m.Figures {
				s.figure("%s: %s", m.Monitor.Name, f)
			}
			for _, v := range m.Violations {
				s.fail("%s: %s: %s", m.Monitor.Name, v.Instance, v.Reason)
			}
		}
	}
	if rep.LateAudio > 0 || rep.SentAfterCancel > 0 {
		s.fail("audio after an early end: %d chunks received after their response ended, %d sent after its cancel (an ended response's buffered audio must be discarded)", rep.LateAudio, rep.SentAfterCancel)
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}

	if err := linearStage(r, s, r.opt.Mode.pick(500, 2000, 10000)); err != nil {
		return err
	}

	if err := finishRaceStage(s, r.opt.Mode.pick(300, 1000, 5000)); err != nil {
		return err
	}
	if err := pressureStage(ctx, s, r.opt.Mode.pick(50, 200, 1000)); err != nil {
		return err
	}

	if err := goleak.Find(baseline); err != nil {
		s.fail("goroutines outlived their sessions: %s", firstLines(err.Error(), 60))
	} else {
		s.figure("leaks 0")
	}
	return nil
}

// The porcupine run: linearGoroutines clients call random operations on
// linearSessions shared sessions, with the default workers, SilenceFrames 1
// (the model's), and responses that complete on their own; a session ends
// by a Close or by its connection dropping.
const (
	linearGoroutines = 8
	linearSessions   = 16
)

// linearStage runs opsEach operations per client, checks the history with
// porcupine (the visualization goes to sessions/porcupine.html, linked
// from the report), checks that every trace event with a caller lies in
// that call's window and every response's TTS closed before Teardown, and
// registers the trace for the coverage stage.
func linearStage(r *run, s *stage, opsEach int) error {
	clock := &sessioncheck.Clock{}
	rec := sessioncheck.NewRecorder(clock)
	type shared struct {
		s      *session.Session
		drop   context.CancelFunc
		mu     sync.Mutex
		latest uint64 // the last response started
	}
	sessions := make([]*shared, linearSessions)
	var audio sync.WaitGroup
	for i := range sessions {
		ctx, drop := context.WithCancel(context.Background())
		defer drop()
		ss, err := session.New(ctx, session.Config{Instance: fmt.Sprintf("linear-%d", i), Sink: rec, SilenceFrames: 1,
			JoinTimeout: 10 * time.Second,
			Generator:   session.CannedGenerator{Replies: []string{"Sure.", "One moment.", "Okay, done."}},
			Synthesizer: &session.PacedSynthesizer{Speed: -1}})
		if err != nil {
			return err
		}
		sessions[i] = &shared{s: ss, drop: drop}
	}
	speech, silence := session.SyntheticFrame(true, 0), session.SyntheticFrame(false, 0)
	// perform calls op as client and returns the operation, and the key of
	// the trace event it caused (none: an empty Action). A drop (cancel
	// the session's context, wait for the teardown) is a Close to the
	// model; so is a Close that reports the drop as the teardown's cause.
	perform := func(client int, op sessioncheck.Op, drop bool) (porcupine.Operation, sessioncheck.EventKey) {
		sh := sessions[op.Session]
		inst := fmt.Sprintf("linear-%d", op.Session)
		var res sessioncheck.Result
		var key sessioncheck.EventKey
		call := clock.Now()
		switch op.Kind {
		case sessioncheck.OpPush:
			frame := silence
			if op.Speech {
				frame = speech
			}
			ev, err := sh.s.PushAudio(frame)
			res = sessioncheck.Result{Err: sessioncheck.Classify(err), Turn: ev.Kind, Frame: ev.Frame, BargeIn: ev.BargeIn, Interrupted: ev.Interrupted}
			switch ev.Kind {
			case session.TurnStarted:
				key = sessioncheck.EventKey{Instance: inst, Action: session.ActVadStart, ID: ev.Frame}
			case session.TurnStopped:
				key = sessioncheck.EventKey{Instance: inst, Action: session.ActVadStop, ID: ev.Frame}
			}
		case sessioncheck.OpStart:
			resp, err := sh.s.StartResponse("a question")
			res.Err = sessioncheck.Classify(err)
			if err == nil {
				res.ID = resp.ID()
				key = sessioncheck.EventKey{Instance: inst, Action: session.ActRespStart, ID: resp.ID()}
				sh.mu.Lock()
				sh.latest = max(sh.latest, resp.ID())
				sh.mu.Unlock()
				audio.Add(1)
				go func() { // the client plays the answer
					defer audio.Done()
					for range resp.Audio() {
					}
				}()
			}
		case sessioncheck.OpFinish, sessioncheck.OpCancel:
			var err error
			if op.Kind == sessioncheck.OpFinish {
				err = sh.s.FinishResponse(op.ID)
			} else {
				err = sh.s.CancelResponse(op.ID)
			}
			res.Err = sessioncheck.Classify(err)
			if err == nil {
				key = sessioncheck.EventKey{Instance: inst, Action: session.ActRespFinish, ID: op.ID}
			}
		case sessioncheck.OpTrigger:
			j, err := sh.s.TriggerCompaction()
			res.Err = sessioncheck.Classify(err)
			if err == nil {
				res.ID = j.ID()
				key = sessioncheck.EventKey{Instance: inst, Action: session.ActCompTrigger, ID: j.ID()}
			}
		case sessioncheck.OpClose:
			var err error
			if drop {
				sh.drop()
				<-sh.s.Done()
			} else if err = sh.s.Close(); errors.Is(err, session.ErrConnectionDropped) && !errors.Is(err, session.ErrAbandoned) {
				err = nil
			}
			res.Err = sessioncheck.Classify(err)
			key = sessioncheck.EventKey{Instance: inst, Action: session.ActTeardown}
		}
		ret := clock.Now()
		return porcupine.Operation{ClientId: client, Input: op, Call: call, Output: res, Return: ret}, key
	}
	type local struct {
		ops     []porcupine.Operation
		windows map[sessioncheck.EventKey][]sessioncheck.Window
	}
	add := func(l *local, o porcupine.Operation, key sessioncheck.EventKey) {
		l.ops = append(l.ops, o)
		if key.Action != "" {
			l.windows[key] = append(l.windows[key], sessioncheck.Window{Call: o.Call, Return: o.Return})
		}
	}
	locals := make([]local, linearGoroutines+1)
	var wg sync.WaitGroup
	for g := 0; g < linearGoroutines; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(r.seed), uint64(g)+0x11ea7))
			l := &locals[g]
			l.windows = map[sessioncheck.EventKey][]sessioncheck.Window{}
			for k := 0; k < opsEach; k++ {
				op := sessioncheck.Op{Session: rng.IntN(linearSessions)}
				drop := false
				switch x := rng.Float64(); {
				case x < 0.0004:
					op.Kind = sessioncheck.OpClose
				case x < 0.0008:
					op.Kind, drop = sessioncheck.OpClose, true
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
					sh := sessions[op.Session]
					sh.mu.Lock()
					op.ID = sh.latest
					sh.mu.Unlock()
					if rng.IntN(5) == 0 && op.ID > 1 {
						op.ID-- // an answer already replaced
					}
				}
				o, key := perform(g, op, drop)
				add(l, o, key)
			}
		}(g)
	}
	wg.Wait()
	last := &locals[linearGoroutines]
	last.windows = map[sessioncheck.EventKey][]sessioncheck.Window{}
	for i := range sessions { // close the rest, as one more client
		o, key := perform(linearGoroutines, sessioncheck.Op{Session: i, Kind: sessioncheck.OpClose}, false)
		add(last, o, key)
	}
	audio.Wait()
	var ops []porcupine.Operation
	windows := map[sessioncheck.EventKey][]sessioncheck.Window{}
	for _, l := range locals {
		ops = append(ops, l.ops...)
		for k, ws := range l.windows {
			windows[k] = append(windows[k], ws...)
		}
	}

	model := sessioncheck.ModelWith(sessioncheck.ModelOptions{ResponsesComplete: true,
		// The sessions' default barge-in threshold, in SyntheticFrame's
		// 20 ms frames (320 samples at 16 kHz).
		BargeInFrames: int(session.DefaultBargeInMinSpeech / (20 * time.Millisecond))})
	res, info := porcupine.CheckOperationsVerbose(model, ops, 2*time.Minute)
	html, err := r.path("sessions", "porcupine.html")
	if err != nil {
		return err
	}
	if err := porcupine.VisualizePath(model, info, html); err != nil {
		s.fail("porcupine: writing the visualization: %v", err)
	} else {
		r.mu.Lock()
		r.links = append(r.links, htmlreport.Link{Text: "porcupine: the sessions' concurrent history, linearized", Href: filepath.ToSlash(relPath(r.opt.Dir, html))})
		r.mu.Unlock()
	}
	if res != porcupine.Ok {
		s.fail("porcupine: the history of %d operations on %d sessions is %v (see %s)", len(ops), linearSessions, res, relPath(r.opt.Dir, html))
	} else {
		s.figure("porcupine: %d operations by %d clients on %d sessions linearizable", len(ops), linearGoroutines, linearSessions)
	}
	stamped := rec.Events()
	if bad := sessioncheck.Windows(stamped, windows); len(bad) > 0 {
		sort.Strings(bad)
		s.fail("%d trace events outside their caller's window, e.g. %s", len(bad), bad[0])
	}
	events := make([]trace.Event, len(stamped))
	for i, st := range stamped {
		events[i] = st.Event
	}
	if bad := sessioncheck.TTSClosedBeforeTeardown(events); len(bad) > 0 {
		s.fail("M5: %d responses' TTS not closed before Teardown, e.g. %s", len(bad), bad[0])
	}
	// The trace, for the coverage stage to check.
	path, err := r.path("sessions", "linear.ndjson")
	if err != nil {
		return err
	}
	var b bytes.Buffer
	h, _ := spec.SHA256(spec.SessionFiles...)
	if err := trace.NewWriter(&b).WriteHeader(trace.Header{Spec: bundled.Session().Name, SpecSHA256: h, Emitter: "tracecheck verify (impl/session, porcupine run)"}); err != nil {
		return err
	}
	b.Write(rec.NDJSON())
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return err
	}
	r.addTrace("session", path, false)
	return nil
}

// firstLines returns s's first n lines.
func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, "\n")
}

// pressureStage tears sessions down under pressure: a join timeout of a
// microsecond while a client keeps starting responses, so that teardown
// abandons a child coordinator busy or starved. Whatever teardown does,
// every response a caller got must end for it (Done closes) once Close
// has returned, and (checked after) no goroutine may be left.
func pressureStage(ctx context.Context, s *stage, rounds int) error {
	gate := sessiontest.NewGate()
	defer gate.Release()
	abandoned, stuck, dishonest := 0, 0, 0
	budget := time.NewTimer(5 * time.Second)
	defer budget.Stop()
	expired := false
	for i := 0; i < rounds; i++ {
		rec := &trace.Recorder{}
		sess, err := session.New(context.Background(), session.Config{Instance: fmt.Sprintf("pressure-%d", i), JoinTimeout: time.Microsecond,
			Sink: rec, Detector: &sessiontest.Detector{}, Generator: &sessiontest.Generator{Words: []string{"w"}, Gate: gate},
			Synthesizer: sessiontest.Synthesizer{}, Compactor: &sessiontest.Compactor{}})
		if err != nil {
			return err
		}
		var resps []*session.Response
		first := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for n := 0; ; n++ {
				rsp, err := sess.StartResponse("p")
				if err != nil {
					if n == 0 {
						close(first)
					}
					return
				}
				resps = append(resps, rsp)
				if n == 0 {
					close(first)
				}
			}
		}()
		<-first
		ab := errors.Is(sess.Close(), session.ErrAbandoned)
		if ab {
			abandoned++
		}
		<-done
		// The trace tells the truth: a teardown that abandoned a child
		// leaves it non-terminal, a violation of ChildrenDieWithParent;
		// one that did not is valid.
		want := check.Valid
		if ab {
			want = check.Violation
		}
		if rep, err := sessioncheck.Check(ctx, bytes.NewReader(rec.NDJSON()), fmt.Sprintf("pressure-%d", i), false); err != nil {
			return err
		} else if len(rep.Instances) != 1 || rep.Instances[0].Verdict != want {
			if dishonest == 0 {
				s.fail("teardown under pressure: pressure-%d's trace is not %s (abandoned a child: %v): %+v", i, want, ab, rep.Instances)
			}
			dishonest++
		}
		for _, rsp := range resps {
			if expired {
				select {
				case <-rsp.Done():
				default:
					stuck++
				}
				continue
			}
			select {
			case <-rsp.Done():
			case <-budget.C: // one wait for the whole stage: then only look
				expired = true
				stuck++
			}
		}
	}
	if stuck > 0 {
		s.fail("teardown under pressure: %d responses never ended for their caller after Close returned (%d of %d teardowns abandoned a child)", stuck, abandoned, rounds)
	}
	if dishonest > 0 {
		s.fail("teardown under pressure: %d of %d traces do not say what the teardown did", dishonest, rounds)
	}
	s.figure("%d teardowns under pressure (%d abandoned a child, each trace a violation of ChildrenDieWithParent as it must be), every response ended", rounds, abandoned)
	return nil
}

// finishRaceStage races FinishResponse of the active response against a
// StartResponse that preempts it, round after round, alternating which
// call goes first (one on this goroutine, one released on another as it
// starts). Whichever wins, the finish may end only the response it names:
// the new response must still be active after the race, and finishing it
// must succeed. A check-then-act race in FinishResponse breaks that.
func finishRaceStage(s *stage, rounds int) error {
	never := sessiontest.NewGate() // responses end only by a call
	defer never.Release()
	sess, err := session.New(context.Background(), session.Config{Instance: "finish-race",
		Detector: &sessiontest.Detector{}, Generator: &sessiontest.Generator{Words: []string{"w"}, Gate: never},
		Synthesizer: sessiontest.Synthesizer{}, Compactor: &sessiontest.Compactor{}})
	if err != nil {
		return err
	}
	defer sess.Close()
	wrong, ended := 0, 0
	for round := 0; round < rounds; round++ {
		old, err := sess.StartResponse("p")
		if err != nil {
			return fmt.Errorf("finish race: round %d: %w", round, err)
		}
		var fresh *session.Response
		var finErr, startErr error
		finish := func() { finErr = sess.FinishResponse(old.ID()) }
		start := func() { fresh, startErr = sess.StartResponse("p") }
		sessioncheck.Race(round, finish, start)
		if startErr != nil {
			return fmt.Errorf("finish race: round %d: start: %w", round, startErr)
		}
		if finErr == nil {
			ended++
		}
		if err := sess.FinishResponse(fresh.ID()); err != nil {
			wrong++
		}
	}
	if wrong > 0 {
		s.fail("finish racing a new response: in %d of %d rounds the finish of the old response ended the new one", wrong, rounds)
	}
	s.figure("%d finish/start races (the finish won %d), each finish ended only its own response", rounds, ended)
	return nil
}
