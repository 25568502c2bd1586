package session_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/impl/session"
	"github.com/tracecheck/tracecheck/trace"
)

// runMix runs the realistic mix and returns its report and trace.
func runMix(t *testing.T, dc session.DemoConfig) (session.DemoReport, []trace.Event) {
	t.Helper()
	var rec trace.Recorder
	dc.Sink = &rec
	rep, err := session.RunDemo(context.Background(), dc)
	if err != nil {
		t.Fatalf("RunDemo(%+v): %v", dc, err)
	}
	return rep, rec.Events()
}

// steps returns, per scripted session, its trace's steps (stutters left
// out: when a canceled pipeline reports its end is the scheduler's), each
// as its action and the variable it carries.
func steps(events []trace.Event) map[string][]string {
	out := map[string][]string{}
	for _, e := range events {
		if e.Stutter || strings.HasSuffix(e.Instance, "-racing") {
			continue
		}
		keys := make([]string, 0, len(e.State))
		for k := range e.State {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		step := e.Action
		for _, k := range keys {
			step += fmt.Sprintf(" %s=%v", k, e.State[k])
		}
		out[e.Instance] = append(out[e.Instance], step)
	}
	return out
}

// TestMixDeterministic: a seed fixes every scripted session's trace of
// steps, whatever the scheduler does; another seed gives other scripts.
func TestMixDeterministic(t *testing.T) {
	dc := session.DemoConfig{Sessions: 10, Speed: 400, Seed: 7}
	_, a := runMix(t, dc)
	_, b := runMix(t, dc)
	sa, sb := steps(a), steps(b)
	if len(sa) != 8 {
		t.Fatalf("%d scripted sessions in the trace, want 8 (of 10)", len(sa))
	}
	for inst, want := range sa {
		if got := sb[inst]; !slices.Equal(got, want) {
			t.Errorf("%s: the same seed gave other steps:\n%q\n%q", inst, want, got)
		}
	}
	dc.Seed = 8
	_, c := runMix(t, dc)
	same := 0
	for inst, want := range sa {
		if slices.Equal(steps(c)[inst], want) {
			same++
		}
	}
	if same == len(sa) {
		t.Error("seeds 7 and 8 gave the same scripts")
	}
}

// TestMixWorkload: the mix does what it says — barge-ins that cancel
// responses, speculative drafts and preemptions, compaction overlapping
// responses, failing work, every kind of end — and every scripted session
// is where its script put it at each step (RunDemo reports no error).
func TestMixWorkload(t *testing.T) {
	rep, events := runMix(t, session.DemoConfig{Sessions: 40, Speed: 400})
	if rep.Sessions != 40 || rep.Scripted != 32 || rep.Racing != 8 {
		t.Fatalf("sessions %d: %d scripted, %d racing", rep.Sessions, rep.Scripted, rep.Racing)
	}
	if rep.HangUps+rep.Drops+rep.Panics != 40 {
		t.Errorf("ends: %d hang-ups + %d drops + %d panics != 40", rep.HangUps, rep.Drops, rep.Panics)
	}
	for name, n := range map[string]int{"barge-ins": rep.BargeIns, "canceled": rep.Canceled, "preempted": rep.Preempted,
		"completed": rep.Completed, "finished": rep.Finished, "failed responses": rep.FailedResponses,
		"overlaps": rep.Overlaps, "failures": rep.Failures, "drops": rep.Drops,
		"vad panics": rep.PanicsBy["vad"], "tts panics": rep.PanicsBy["tts"], "compaction panics": rep.PanicsBy["compaction"],
		"audio bytes": int(rep.AudioBytes)} {
		if n == 0 {
			t.Errorf("no %s in %+v", name, rep)
		}
	}
	if got := rep.Completed + rep.Canceled + rep.Preempted + rep.FailedResponses + rep.ClosedResponses; got != rep.Responses {
		t.Errorf("%d responses ended, %d started", got, rep.Responses)
	}
	// Every session's trace starts with Init and ends with Teardown; the
	// drops and panics say so in the Teardown's cause.
	causes := map[string]int{}
	last := map[string]trace.Event{}
	for _, e := range events {
		last[e.Instance] = e
		if e.Action == session.ActTeardown {
			c, _ := e.Detail["cause"].(string)
			switch {
			case strings.Contains(c, session.ErrConnectionDropped.Error()):
				causes["drop"]++
			case strings.Contains(c, session.ErrChildPanic.Error()):
				causes["panic"]++
			case c == "":
				causes["close"]++
			}
		}
	}
	if len(last) != 40 || causes["drop"] != rep.Drops || causes["panic"] != rep.Panics || causes["close"] != rep.HangUps {
		t.Errorf("%d sessions traced, Teardown causes %v; report: %d drops, %d panics, %d hang-ups", len(last), causes, rep.Drops, rep.Panics, rep.HangUps)
	}
	for inst, e := range last {
		if e.Action != session.ActTeardown {
			t.Errorf("%s: last event %s", inst, e.Action)
		}
	}
}

func TestParseMix(t *testing.T) {
	for _, m := range []session.Mix{session.MixRealistic, session.MixPlain} {
		if got, err := session.ParseMix(m.String()); got != m || err != nil {
			t.Errorf("ParseMix(%q) = %v, %v", m, got, err)
		}
	}
	if _, err := session.ParseMix("chaos"); !errors.Is(err, session.ErrConfig) {
		t.Errorf("ParseMix(chaos): %v", err)
	}
}
