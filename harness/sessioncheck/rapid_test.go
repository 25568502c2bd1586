package sessioncheck_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/harness/sessioncheck"
	"github.com/tracecheck/tracecheck/impl/session"
	"github.com/tracecheck/tracecheck/impl/session/sessiontest"
	"github.com/tracecheck/tracecheck/model"
	msession "github.com/tracecheck/tracecheck/model/session"
	"github.com/tracecheck/tracecheck/trace"
)

// stepCompactor hands the test a release channel for each job, so that
// CompFinish happens exactly when the model says.
type stepCompactor struct{ starts chan chan struct{} }

func (c stepCompactor) Compact(ctx context.Context, h []string) ([]string, error) {
	rel := make(chan struct{})
	select {
	case c.starts <- rel:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	select {
	case <-rel:
		return h, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// stepGenerator hands the test a release channel for each response: the
// response completes on its own when the test closes it.
type stepGenerator struct{ starts chan chan struct{} }

func (g stepGenerator) Generate(ctx context.Context, prompt string, emit func(string) error) error {
	rel := make(chan struct{})
	select {
	case g.starts <- rel:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case <-rel:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// driver performs the spec's actions on a real session.
type driver struct {
	s        *session.Session
	rec      *trace.Recorder
	starts   chan chan struct{}
	release  chan struct{}
	job      *session.CompactionJob
	lastID   uint64
	resp     *session.Response
	complete chan struct{} // closes to let resp complete on its own
	gens     chan chan struct{}
	barge    int // the speech frames of a turn that interrupt a response (0: barge-in off)
	speech   int // speech frames in the turn in progress
}

// newDriver starts the session; barge is its barge-in threshold in speech
// frames (0: off).
func newDriver(barge int) (*driver, error) {
	d := &driver{rec: &trace.Recorder{}, starts: make(chan chan struct{}), gens: make(chan chan struct{}), barge: barge}
	minSpeech := session.BargeInOff
	if barge > 0 {
		minSpeech = time.Duration(barge) * 20 * time.Millisecond // sessiontest's frames are 20 ms
	}
	s, err := session.New(context.Background(), session.Config{
		Instance: "mbt", Sink: d.rec, SilenceFrames: 1, JoinTimeout: 10 * time.Second,
		BargeInMinSpeech: minSpeech,
		Detector:         &sessiontest.Detector{},
		Generator:        stepGenerator{starts: d.gens},
		Synthesizer:      sessiontest.Synthesizer{},
		Compactor:        stepCompactor{starts: d.starts},
	})
	d.s = s
	return d, err
}

func observed(st session.State) msession.State {
	return msession.State{Conn: int8(st.Conn), Vad: int8(st.VAD), Resp: int8(st.Resp), Compaction: int8(st.Compaction)}
}

// do performs action on the session, given the model state before it and
// whether the model enables it, and returns an error if the call's result
// is not what the model implies. A speech frame that reaches the barge-in
// threshold while a response is active also ends it: do then returns the
// model action that follows (RespFinish).
func (d *driver) do(action string, prev msession.State, enabled bool, how int) (follow string, err error) {
	switch action {
	case msession.VadStart, msession.VadStop:
		return d.push(action, prev, enabled)
	}
	return "", d.call(action, prev, enabled, how)
}

// push performs VadStart (a speech frame) or VadStop (a silent one).
func (d *driver) push(action string, prev msession.State, enabled bool) (string, error) {
	torn := prev.Conn == 1
	speech := action == msession.VadStart
	frame, want := sessiontest.Speech(), session.TurnStarted
	if !speech {
		frame, want = sessiontest.Silence(), session.TurnStopped
	}
	ev, err := d.s.PushAudio(frame)
	if torn {
		if !errors.Is(err, session.ErrClosed) {
			return "", fmt.Errorf("%s: got error %v, want ErrClosed", action, err)
		}
		return "", nil
	}
	if !enabled {
		want = session.TurnNone
	}
	if err != nil || ev.Kind != want {
		return "", fmt.Errorf("%s: got %v, %v; want %v", action, ev.Kind, err, want)
	}
	barge := false
	if speech {
		if enabled {
			d.speech = 0 // a new turn
		}
		d.speech++
		barge = d.barge > 0 && d.speech == d.barge
	}
	interrupt := barge && prev.Resp == 1
	if ev.BargeIn != barge || ev.Interrupted != interrupt {
		return "", fmt.Errorf("%s: barge-in %v, interrupted %v; want %v, %v (speech frame %d of the turn, threshold %d)",
			action, ev.BargeIn, ev.Interrupted, barge, interrupt, d.speech, d.barge)
	}
	if !interrupt {
		return "", nil
	}
	select {
	case <-d.resp.Done():
	default:
		return "", fmt.Errorf("%s: barge-in returned before response %d ended", action, d.resp.ID())
	}
	if !errors.Is(d.resp.Err(), session.ErrCanceled) {
		return "", fmt.Errorf("%s: interrupted response's Err %v, want ErrCanceled", action, d.resp.Err())
	}
	if chunk, ok := <-d.resp.Audio(); ok {
		return "", fmt.Errorf("%s: chunk %q after the barge-in", action, chunk)
	}
	return msession.RespFinish, nil
}

// call performs every other action.
func (d *driver) call(action string, prev msession.State, enabled bool, how int) error {
	expectErr := func(err, want error) error {
		if want == nil && err != nil || want != nil && !errors.Is(err, want) {
			return fmt.Errorf("%s: got error %v, want %v", action, err, want)
		}
		return nil
	}
	torn := prev.Conn == 1
	switch action {
	case msession.RespStart:
		r, err := d.s.StartResponse("p")
		if !enabled {
			return expectErr(err, session.ErrClosed)
		}
		if err != nil {
			return fmt.Errorf("%s: %v", action, err)
		}
		d.lastID, d.resp = r.ID(), r
		select {
		case d.complete = <-d.gens:
		case <-time.After(5 * time.Second):
			return fmt.Errorf("%s: the response never started generating", action)
		}
	case msession.RespFinish:
		var err error
		switch how {
		case 0:
			err = d.s.FinishResponse(d.lastID)
		case 1:
			err = d.s.CancelResponse(d.lastID)
		default: // the response completes on its own
			if !enabled {
				return nil // nothing is generating
			}
			close(d.complete)
			select {
			case <-d.resp.Done():
			case <-time.After(5 * time.Second):
				return fmt.Errorf("%s: the response never completed", action)
			}
			return expectErr(d.resp.Err(), nil)
		}
		switch {
		case enabled:
			return expectErr(err, nil)
		case prev.Resp == 2 || torn && !enabled:
			return expectErr(err, session.ErrClosed)
		default:
			return expectErr(err, session.ErrNoResponse)
		}
	case msession.CompTrigger:
		job, err := d.s.TriggerCompaction()
		switch {
		case enabled:
			if err != nil {
				return fmt.Errorf("%s: %v", action, err)
			}
			d.job = job
			select {
			case d.release = <-d.starts:
			case <-time.After(5 * time.Second):
				return fmt.Errorf("%s: the compaction never started", action)
			}
		case torn:
			return expectErr(err, session.ErrClosed)
		default:
			return expectErr(err, session.ErrBusy)
		}
	case msession.CompFinish:
		if !enabled {
			return nil // nothing to finish
		}
		close(d.release)
		select {
		case <-d.job.Done():
		case <-time.After(5 * time.Second):
			return fmt.Errorf("%s: the compaction never finished", action)
		}
	case msession.Teardown:
		return expectErr(d.s.Close(), nil)
	default:
		return fmt.Errorf("unknown action %q", action)
	}
	return nil
}

// close tears the session down and lets everything it started end.
func (d *driver) close() {
	d.s.Close()
	if d.release != nil && d.job != nil {
		select {
		case <-d.job.Done():
		default:
			close(d.release)
			<-d.job.Done()
		}
	}
}

// modelBased is the property: a random sequence of the spec's actions,
// drawn from sp, drives a real session; after every step the session's
// observed state equals the model's. At the end the trace validates
// against sp. log receives the sequence.
func modelBased(sp *model.Spec[msession.State], log func([]string)) func(*rapid.T) {
	names := make([]string, len(sp.Actions))
	for i, a := range sp.Actions {
		names[i] = a.Name
	}
	// Speech and responses twice as often: a user talking over a response
	// (barge-in) is then common.
	names = append(names, msession.VadStart, msession.RespStart)
	return func(t *rapid.T) {
		// Barge-in off, at the turn's first speech frame, or at its third.
		d, err := newDriver(rapid.SampledFrom([]int{0, 1, 3}).Draw(t, "barge-in-frames"))
		if err != nil {
			t.Fatal(err)
		}
		defer d.close()
		state := sp.Init()[0]
		var seq []string
		defer func() {
			if log != nil {
				log(seq)
			}
		}()
		n := rapid.IntRange(1, 30).Draw(t, "steps")
		for i := 0; i < n; i++ {
			name := rapid.SampledFrom(names).Draw(t, "action")
			how := 0 // RespFinish: 0 FinishResponse, 1 CancelResponse, 2 completes on its own
			if name == msession.RespFinish {
				how = rapid.IntRange(0, 2).Draw(t, "finish-how")
			}
			frames := 1 // VadStart: the user speaks 1 to 4 frames, each the action (taken or refused)
			if name == msession.VadStart {
				frames = rapid.IntRange(1, 4).Draw(t, "speech-frames")
			}
			act, _ := sp.Action(name)
			for f := 0; f < frames; f++ {
				seq = append(seq, name)
				enabled := act.Guard(state) == ""
				follow, err := d.do(name, state, enabled, how)
				if err != nil {
					t.Fatalf("step %d %v: %v", i+1, seq, err)
				}
				if enabled {
					act.Next(state, func(s msession.State) { state = s })
				}
				if follow != "" { // the barge-in: the model's next action, taken by the same call
					seq = append(seq, follow+" (barge-in)")
					fa, _ := sp.Action(follow)
					if g := fa.Guard(state); g != "" {
						t.Fatalf("step %d %v: the barge-in's %s is not enabled in the model: %s", i+1, seq, follow, g)
					}
					fa.Next(state, func(s msession.State) { state = s })
				}
			}
			if diff := cmp.Diff(state, observed(d.s.State())); diff != "" {
				t.Fatalf("step %d %v: state differs from the model (-model +impl):\n%s", i+1, seq, diff)
			}
		}
		if err := d.s.Close(); err != nil {
			t.Fatalf("final Close: %v", err)
		}
		if state.Conn == 0 {
			act, _ := sp.Action(msession.Teardown)
			act.Next(state, func(s msession.State) { state = s })
			if diff := cmp.Diff(state, observed(d.s.State())); diff != "" {
				t.Fatalf("final Teardown: state differs from the model (-model +impl):\n%s", diff)
			}
		}
		rep, err := check.Check(context.Background(), sp, bytes.NewReader(d.rec.NDJSON()), "mbt.ndjson", check.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Verdict() != check.Valid {
			t.Fatalf("trace of %v: %v %s", seq, rep.Verdict(), firstBad(rep))
		}
	}
}

func TestModelBased(t *testing.T) {
	runs, barged := 0, 0
	rapid.Check(t, modelBased(sessioncheck.Spec(false), func(seq []string) {
		runs++
		for _, a := range seq {
			if strings.HasSuffix(a, "(barge-in)") {
				barged++
				break
			}
		}
	}))
	if barged == 0 {
		t.Fatalf("no barge-in interrupted a response in %d sequences", runs)
	}
	t.Logf("%d of %d sequences had a barge-in interrupt a response", barged, runs)
}

// TestShrinking runs the implementation against the M4 mutant of the spec
// (the compaction teardown deleted) and checks that rapid fails and shrinks
// the failing sequence to a minimal one, of one action (the mutant spec's
// Teardown leaves compaction idle; the implementation terminates it).
func TestShrinking(t *testing.T) {
	var longest int
	var last []string
	tb := &captureTB{name: "TestShrinkingInner"}
	defer func() { // rapid saved the failure it found on purpose; drop it
		os.RemoveAll(filepath.Join("testdata", "rapid", tb.name))
		os.Remove(filepath.Join("testdata", "rapid"))
		os.Remove("testdata")
	}()
	rapid.Check(tb, modelBased(sessioncheck.Spec(true), func(seq []string) {
		last = slices.Clone(seq)
		longest = max(longest, len(seq))
	}))
	if !tb.failed {
		t.Fatal("rapid did not catch the implementation departing from the M4 mutant spec")
	}
	// Any one action fails (the session's final Teardown terminates
	// compaction, which the mutant spec leaves idle), so the minimal case
	// has one step.
	if len(last) != 1 {
		t.Fatalf("minimal failing sequence %v, want one action; rapid said:\n%s", last, tb.out.String())
	}
	if out := tb.out.String(); !strings.Contains(out, "state differs from the model") || !strings.Contains(out, "Compaction: 2,") || !strings.Contains(out, "Compaction: 0,") {
		t.Fatalf("no state diff in rapid's report:\n%s", tb.out.String())
	}
	t.Logf("rapid shrank failing sequences (up to %d actions seen) to %v", longest, last)
}

// captureTB is a rapid.TB that records a failure instead of failing the
// test.
type captureTB struct {
	name   string
	failed bool
	out    strings.Builder
}

func (c *captureTB) Helper()                   {}
func (c *captureTB) Name() string              { return c.name }
func (c *captureTB) Logf(f string, a ...any)   { fmt.Fprintf(&c.out, f+"\n", a...) }
func (c *captureTB) Log(a ...any)              { fmt.Fprintln(&c.out, a...) }
func (c *captureTB) Skipf(f string, a ...any)  { c.Logf(f, a...) }
func (c *captureTB) Skip(a ...any)             { c.Log(a...) }
func (c *captureTB) SkipNow()                  {}
func (c *captureTB) Errorf(f string, a ...any) { c.failed = true; c.Logf(f, a...) }
func (c *captureTB) Error(a ...any)            { c.failed = true; c.Log(a...) }
func (c *captureTB) Fatalf(f string, a ...any) { c.Errorf(f, a...) }
func (c *captureTB) Fatal(a ...any)            { c.Error(a...) }
func (c *captureTB) FailNow()                  { c.failed = true }
func (c *captureTB) Fail()                     { c.failed = true }
func (c *captureTB) Failed() bool              { return c.failed }
