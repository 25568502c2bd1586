package session

import (
	"errors"
	"reflect"
	"testing"
)

func TestVADCoreStep(t *testing.T) {
	tests := []struct {
		name   string
		from   vadCore
		speech bool
		want   VADState
		kind   TurnKind
		action string
	}{
		{"silence stays silent", vadCore{quiet: 2}, false, VADSilent, TurnNone, ""},
		{"speech starts a turn", vadCore{quiet: 2}, true, VADSpeech, TurnStarted, ActVadStart},
		{"speech continues", vadCore{state: VADSpeech, quiet: 2, silence: 1}, true, VADSpeech, TurnNone, ""},
		{"one quiet frame is not enough", vadCore{state: VADSpeech, quiet: 2}, false, VADSpeech, TurnNone, ""},
		{"enough quiet frames stop", vadCore{state: VADSpeech, quiet: 2, silence: 1}, false, VADSilent, TurnStopped, ActVadStop},
		{"terminated ignores frames", vadCore{state: VADTerminated, quiet: 1}, true, VADTerminated, TurnNone, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, o := tt.from.step(frameIn{speech: tt.speech})
			if got.state != tt.want || o.reply.Kind != tt.kind || o.ev.action != tt.action || o.reply.Frame != got.frames {
				t.Fatalf("step(%v) from %v = %v, %+v; want %v, %v, %q", tt.speech, tt.from.state, got.state, o, tt.want, tt.kind, tt.action)
			}
			if o.ev.action != "" && (o.ev.key != "frame" || o.ev.id != got.frames) {
				t.Fatalf("event %+v does not name frame %d", o.ev, got.frames)
			}
		})
	}
	if got := (vadCore{state: VADSpeech}).terminate(); got.state != VADTerminated {
		t.Fatalf("terminate = %v", got.state)
	}
}

func TestRespCoreStep(t *testing.T) {
	idle := respCore{}
	active := respCore{state: RespActive, active: 3, next: 3}
	tests := []struct {
		name   string
		from   respCore
		in     respIn
		exit   *exit // step the exit instead of in
		want   respCore
		action string
		start  uint64
		end    uint64
		err    error
		endErr error
	}{
		{"start from idle", idle, respIn{op: opStart}, nil, respCore{RespActive, 1, 1}, ActRespStart, 1, 0, nil, nil},
		{"start preempts", active, respIn{op: opStart}, nil, respCore{RespActive, 4, 4}, ActRespStart, 4, 3, nil, ErrPreempted},
		{"finish active", active, respIn{op: opFinish, id: 3}, nil, respCore{RespIdle, 0, 3}, ActRespFinish, 0, 3, nil, nil},
		{"cancel active", active, respIn{op: opCancel, id: 3}, nil, respCore{RespIdle, 0, 3}, ActRespFinish, 0, 3, nil, ErrCanceled},
		{"finish stale id", active, respIn{op: opFinish, id: 2}, nil, active, "", 0, 0, ErrNoResponse, nil},
		{"finish when idle", idle, respIn{op: opFinish, id: 1}, nil, idle, "", 0, 0, ErrNoResponse, nil},
		{"completion of active", active, respIn{}, &exit{id: 3}, respCore{RespIdle, 0, 3}, ActRespFinish, 0, 3, nil, nil},
		{"failure of active", active, respIn{}, &exit{id: 3, err: ErrChildPanic}, respCore{RespIdle, 0, 3}, ActRespFinish, 0, 3, nil, ErrChildPanic},
		{"late completion ignored", active, respIn{}, &exit{id: 2}, active, "", 0, 0, nil, nil},
		{"terminated refuses", respCore{state: RespTerminated}, respIn{op: opStart}, nil, respCore{state: RespTerminated}, "", 0, 0, ErrClosed, nil},
		{"barge-in cancels active", active, respIn{op: opBargeIn}, nil, respCore{RespIdle, 0, 3}, ActRespFinish, 0, 3, nil, ErrCanceled},
		{"barge-in when idle", idle, respIn{op: opBargeIn}, nil, idle, "", 0, 0, ErrNoResponse, nil},
		{"barge-in after teardown", respCore{state: RespTerminated}, respIn{op: opBargeIn}, nil, respCore{state: RespTerminated}, "", 0, 0, ErrClosed, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, o := tt.from.step(tt.in)
			if tt.exit != nil {
				got, o = tt.from.exited(*tt.exit)
			}
			if got != tt.want || o.ev.action != tt.action || o.start != tt.start || o.end != tt.end ||
				!errors.Is(o.err, tt.err) || (tt.err == nil && o.err != nil) || o.endErr != tt.endErr {
				t.Fatalf("step = %+v, %+v; want %+v action %q start %d end %d err %v endErr %v", got, o, tt.want, tt.action, tt.start, tt.end, tt.err, tt.endErr)
			}
		})
	}
}

func TestCompCoreStep(t *testing.T) {
	running := compCore{state: CompRunning, job: 2, next: 2, history: []string{"a", "b", "c"}, cutoff: 2}
	tests := []struct {
		name   string
		from   compCore
		in     compIn
		exit   *exit // step the exit instead of in
		want   compCore
		action string
		start  uint64
		err    error
		reply  []string
	}{
		{"trigger idle", compCore{history: []string{"a"}}, compIn{op: opTrigger}, nil, compCore{CompRunning, 1, 1, []string{"a"}, 1}, ActCompTrigger, 1, nil, nil},
		{"trigger busy", running, compIn{op: opTrigger}, nil, running, "", 0, ErrBusy, nil},
		{"append while running", running, compIn{op: opAppend, item: "d"}, nil, compCore{CompRunning, 2, 2, []string{"a", "b", "c", "d"}, 2}, "", 0, nil, nil},
		{"history", running, compIn{op: opHistory}, nil, running, "", 0, nil, []string{"a", "b", "c"}},
		{"finish running", running, compIn{}, &exit{id: 2, result: []string{"ab"}}, compCore{CompIdle, 0, 2, []string{"ab", "c"}, 0}, ActCompFinish, 0, nil, nil},
		{"failed job keeps the history", running, compIn{}, &exit{id: 2, err: errors.New("x")}, compCore{CompIdle, 0, 2, []string{"a", "b", "c"}, 0}, ActCompFinish, 0, nil, nil},
		{"stale finish", running, compIn{}, &exit{id: 1}, running, "", 0, nil, nil},
		{"terminated refuses", compCore{state: CompTerminated}, compIn{op: opTrigger}, nil, compCore{state: CompTerminated}, "", 0, ErrClosed, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, o := tt.from.step(tt.in)
			if tt.exit != nil {
				got, o = tt.from.exited(*tt.exit)
			}
			if !reflect.DeepEqual(got, tt.want) || o.ev.action != tt.action || o.start != tt.start ||
				!errors.Is(o.err, tt.err) || (tt.err == nil && o.err != nil) || !reflect.DeepEqual(o.reply.history, tt.reply) {
				t.Fatalf("step = %+v, %+v; want %+v, %q, start %d, err %v, history %q", got, o, tt.want, tt.action, tt.start, tt.err, tt.reply)
			}
		})
	}
}

// TestEventDetail: the detail each kind of event carries, as the trace
// format documents it.
func TestEventDetail(t *testing.T) {
	tests := []struct {
		name string
		ev   event
		want map[string]any
	}{
		{"init", event{action: "Init"}, nil},
		{"vad", event{action: ActVadStart, key: "frame", id: 7}, map[string]any{"frame": uint64(7)}},
		{"preempt", event{action: ActRespStart, key: "response", id: 2, preempted: 1}, map[string]any{"response": uint64(2), "preempted": uint64(1)}},
		{"error", event{action: ActRespFinish, key: "response", id: 2, cause: "error", err: ErrChildPanic},
			map[string]any{"response": uint64(2), "cause": "error", "error": ErrChildPanic.Error()}},
		{"teardown", event{action: ActTeardown}, map[string]any{}},
		{"abandoned", event{action: ActTeardown, abandoned: []string{"vad"}}, map[string]any{"abandoned": []string{"vad"}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.ev.detail(); !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("detail = %#v, want %#v", got, tt.want)
			}
		})
	}
}
