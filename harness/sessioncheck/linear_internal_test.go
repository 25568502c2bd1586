package sessioncheck

import (
	"strings"
	"testing"

	"github.com/anishathalye/porcupine"

	"github.com/tracecheck/tracecheck/impl/session"
	"github.com/tracecheck/tracecheck/trace"
)

// op builds a porcupine operation.
func op(client int, call, ret int64, in Op, out Result) porcupine.Operation {
	return porcupine.Operation{ClientId: client, Input: in, Call: call, Output: out, Return: ret}
}

// TestModelJudges shows the sequential model accepting linearizable
// histories and rejecting non-linearizable ones: it is not vacuous.
func TestModelJudges(t *testing.T) {
	start := Op{Kind: OpStart}
	tests := []struct {
		name string
		h    []porcupine.Operation
		want porcupine.CheckResult
	}{
		{"overlapping starts get 1 and 2", []porcupine.Operation{
			op(0, 1, 4, start, Result{ID: 2}), op(1, 2, 3, start, Result{ID: 1})}, porcupine.Ok},
		{"two starts both get 1", []porcupine.Operation{
			op(0, 1, 2, start, Result{ID: 1}), op(1, 3, 4, start, Result{ID: 1})}, porcupine.Illegal},
		{"finish of a superseded response succeeds", []porcupine.Operation{
			op(0, 1, 2, start, Result{ID: 1}), op(0, 3, 4, start, Result{ID: 2}),
			op(0, 5, 6, Op{Kind: OpFinish, ID: 1}, Result{})}, porcupine.Illegal},
		{"push after close succeeds", []porcupine.Operation{
			op(0, 1, 2, Op{Kind: OpClose}, Result{}),
			op(1, 3, 4, Op{Kind: OpPush, Speech: true}, Result{Turn: session.TurnStarted, Frame: 1})}, porcupine.Illegal},
		{"push concurrent with close may be refused", []porcupine.Operation{
			op(0, 1, 4, Op{Kind: OpClose}, Result{}),
			op(1, 2, 3, Op{Kind: OpPush, Speech: true}, Result{Err: ErrClosed})}, porcupine.Ok},
		{"busy with nothing running", []porcupine.Operation{
			op(0, 1, 2, Op{Kind: OpTrigger}, Result{Err: ErrBusy})}, porcupine.Illegal},
		{"busy, then a finished job lets a trigger in", []porcupine.Operation{
			op(0, 1, 2, Op{Kind: OpTrigger}, Result{ID: 1}), op(0, 3, 4, Op{Kind: OpTrigger}, Result{Err: ErrBusy}),
			op(0, 5, 6, Op{Kind: OpTrigger}, Result{ID: 2})}, porcupine.Ok},
		{"silence ends the turn", []porcupine.Operation{
			op(0, 1, 2, Op{Kind: OpPush, Speech: true}, Result{Turn: session.TurnStarted, Frame: 1}),
			op(0, 3, 4, Op{Kind: OpPush}, Result{Turn: session.TurnNone, Frame: 2})}, porcupine.Illegal},
		{"other sessions are independent", []porcupine.Operation{
			op(0, 1, 2, Op{Session: 0, Kind: OpStart}, Result{ID: 1}),
			op(1, 3, 4, Op{Session: 1, Kind: OpStart}, Result{ID: 1})}, porcupine.Ok},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := porcupine.CheckOperationsTimeout(Model(), tt.h, 0); got != tt.want {
				t.Fatalf("porcupine says %v, want %v", got, tt.want)
			}
		})
	}
	// When responses may complete on their own, a refused finish of the
	// active response means it completed; finishing it later is illegal.
	completing := ModelWith(ModelOptions{ResponsesComplete: true})
	for _, tt := range []struct {
		name string
		h    []porcupine.Operation
		want porcupine.CheckResult
	}{
		{"refused finish: it completed", []porcupine.Operation{
			op(0, 1, 2, start, Result{ID: 1}), op(0, 3, 4, Op{Kind: OpFinish, ID: 1}, Result{Err: ErrNoResponse})}, porcupine.Ok},
		{"finished after it completed", []porcupine.Operation{
			op(0, 1, 2, start, Result{ID: 1}), op(0, 3, 4, Op{Kind: OpCancel, ID: 1}, Result{Err: ErrNoResponse}),
			op(0, 5, 6, Op{Kind: OpFinish, ID: 1}, Result{})}, porcupine.Illegal},
	} {
		t.Run("completing/"+tt.name, func(t *testing.T) {
			if got := porcupine.CheckOperationsTimeout(completing, tt.h, 0); got != tt.want {
				t.Fatalf("porcupine says %v, want %v", got, tt.want)
			}
		})
	}
	// Barge-in at the turn's second speech frame: that push cancels the
	// active response, in the response coordinator's partition.
	barging := ModelWith(ModelOptions{BargeInFrames: 2})
	speech := Op{Kind: OpPush, Speech: true}
	started := Result{Turn: session.TurnStarted, Frame: 1}
	for _, tt := range []struct {
		name string
		h    []porcupine.Operation
		want porcupine.CheckResult
	}{
		{"barge-in interrupts the active response", []porcupine.Operation{
			op(0, 1, 2, start, Result{ID: 1}), op(1, 3, 4, speech, started),
			op(1, 5, 6, speech, Result{Frame: 2, BargeIn: true, Interrupted: true}),
			op(0, 7, 8, Op{Kind: OpCancel, ID: 1}, Result{Err: ErrNoResponse})}, porcupine.Ok},
		{"the interrupted response is still finished", []porcupine.Operation{
			op(0, 1, 2, start, Result{ID: 1}), op(1, 3, 4, speech, started),
			op(1, 5, 6, speech, Result{Frame: 2, BargeIn: true, Interrupted: true}),
			op(0, 7, 8, Op{Kind: OpFinish, ID: 1}, Result{})}, porcupine.Illegal},
		{"a barge-in missing the active response", []porcupine.Operation{
			op(0, 1, 2, start, Result{ID: 1}), op(1, 3, 4, speech, started),
			op(1, 5, 6, speech, Result{Frame: 2, BargeIn: true})}, porcupine.Illegal},
		{"a barge-in concurrent with the start may miss it", []porcupine.Operation{
			op(0, 1, 8, start, Result{ID: 1}), op(1, 3, 4, speech, started),
			op(1, 5, 6, speech, Result{Frame: 2, BargeIn: true})}, porcupine.Ok},
		{"a barge-in at the wrong frame", []porcupine.Operation{
			op(1, 3, 4, speech, Result{Turn: session.TurnStarted, Frame: 1, BargeIn: true})}, porcupine.Illegal},
		{"no barge-in at the threshold", []porcupine.Operation{
			op(1, 3, 4, speech, started), op(1, 5, 6, speech, Result{Frame: 2})}, porcupine.Illegal},
	} {
		t.Run("barge-in/"+tt.name, func(t *testing.T) {
			if got := porcupine.CheckOperationsTimeout(barging, tt.h, 0); got != tt.want {
				t.Fatalf("porcupine says %v, want %v", got, tt.want)
			}
		})
	}
}

func TestWindows(t *testing.T) {
	ev := func(action string, detail map[string]any) trace.Event {
		return trace.Event{Instance: "s", Action: action, Detail: detail}
	}
	events := []Stamped{
		{At: 5, Event: ev("RespStart", map[string]any{"response": uint64(1)})},
		{At: 9, Event: ev("RespFinish", map[string]any{"response": uint64(1), "cause": "finish"})},
		{At: 12, Event: ev("RespFinish", map[string]any{"response": uint64(2), "cause": "complete"})}, // no caller
		{At: 20, Event: ev("CompTrigger", map[string]any{"job": float64(1)})},                         // decoded JSON
	}
	windows := map[EventKey][]Window{
		{"s", "RespStart", 1}:   {{Call: 4, Return: 6}},
		{"s", "RespFinish", 1}:  {{Call: 1, Return: 3}, {Call: 10, Return: 11}}, // neither contains 9
		{"s", "CompTrigger", 1}: {{Call: 19, Return: 21}},
	}
	bad := Windows(events, windows)
	if len(bad) != 1 {
		t.Fatalf("got %d events outside windows, want 1 (the finish at 9): %q", len(bad), bad)
	}
	if _, ok := KeyOf(ev("CompFinish", map[string]any{"job": uint64(1)})); ok {
		t.Fatal("CompFinish has no caller")
	}
}

func TestTTSClosedBeforeTeardown(t *testing.T) {
	ev := func(inst, action string, stutter bool, id uint64) trace.Event {
		return trace.Event{Instance: inst, Action: action, Stutter: stutter, Detail: map[string]any{"response": id}}
	}
	events := []trace.Event{
		ev("a", "RespStart", false, 1), ev("a", "RespStart", false, 2), ev("a", "TTSClosed", true, 1),
		ev("b", "RespStart", false, 1), ev("b", "TTSClosed", true, 1), ev("b", "Teardown", false, 0),
		ev("a", "Teardown", false, 0), ev("a", "TTSClosed", true, 2), // too late
	}
	bad := TTSClosedBeforeTeardown(events)
	if len(bad) != 2 || !strings.Contains(bad[0], "response 2") || !strings.Contains(bad[1], "response 2") {
		t.Fatalf("got %q, want two complaints about a's response 2 (not closed before Teardown, closed after it)", bad)
	}
	twice := []trace.Event{ev("c", "RespStart", false, 1), ev("c", "TTSClosed", true, 1), ev("c", "TTSClosed", true, 1), ev("c", "Teardown", false, 0)}
	if bad := TTSClosedBeforeTeardown(twice); len(bad) != 1 || !strings.Contains(bad[0], "closed twice") {
		t.Fatalf("got %q, want one complaint about c's response 1 closed twice", bad)
	}
}
