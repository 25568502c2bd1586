package session

import (
	"errors"
	"testing"
)

func TestVADCoreFrame(t *testing.T) {
	tests := []struct {
		name   string
		from   vadCore
		speech bool
		quiet  int
		want   VADState
		kind   TurnKind
	}{
		{"silence stays silent", vadCore{}, false, 2, VADSilent, TurnNone},
		{"speech starts a turn", vadCore{}, true, 2, VADSpeech, TurnStarted},
		{"speech continues", vadCore{state: VADSpeech, silence: 1}, true, 2, VADSpeech, TurnNone},
		{"one quiet frame is not enough", vadCore{state: VADSpeech}, false, 2, VADSpeech, TurnNone},
		{"enough quiet frames stop", vadCore{state: VADSpeech, silence: 1}, false, 2, VADSilent, TurnStopped},
		{"terminated ignores frames", vadCore{state: VADTerminated}, true, 1, VADTerminated, TurnNone},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, kind := tt.from.frame(tt.speech, tt.quiet)
			if got.state != tt.want || kind != tt.kind {
				t.Fatalf("frame(%v) from %v = %v, %v; want %v, %v", tt.speech, tt.from.state, got.state, kind, tt.want, tt.kind)
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
		op     respOp
		id     uint64
		want   respCore
		action string
		end    uint64
		err    error
		endErr error
	}{
		{"start from idle", idle, opStart, 0, respCore{RespActive, 1, 1}, ActRespStart, 0, nil, nil},
		{"start preempts", active, opStart, 0, respCore{RespActive, 4, 4}, ActRespStart, 3, nil, ErrPreempted},
		{"finish active", active, opFinish, 3, respCore{RespIdle, 0, 3}, ActRespFinish, 3, nil, nil},
		{"cancel active", active, opCancel, 3, respCore{RespIdle, 0, 3}, ActRespFinish, 3, nil, ErrCanceled},
		{"finish stale id", active, opFinish, 2, active, "", 0, ErrNoResponse, nil},
		{"finish when idle", idle, opFinish, 1, idle, "", 0, ErrNoResponse, nil},
		{"racy finish takes the active", active, opFinishActive, 1, respCore{RespIdle, 0, 3}, ActRespFinish, 3, nil, nil},
		{"completion of active", active, opCompleted, 3, respCore{RespIdle, 0, 3}, ActRespFinish, 3, nil, nil},
		{"late completion ignored", active, opCompleted, 2, active, "", 0, nil, nil},
		{"terminated refuses", respCore{state: RespTerminated}, opStart, 0, respCore{state: RespTerminated}, "", 0, ErrClosed, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, out := tt.from.step(tt.op, tt.id, nil)
			if got != tt.want || out.action != tt.action || out.end != tt.end || !errors.Is(out.err, tt.err) || (tt.err == nil && out.err != nil) || out.endErr != tt.endErr {
				t.Fatalf("step = %+v, %+v; want %+v action %q end %d err %v endErr %v", got, out, tt.want, tt.action, tt.end, tt.err, tt.endErr)
			}
		})
	}
}

func TestCompCoreStep(t *testing.T) {
	running := compCore{state: CompRunning, job: 2, next: 2}
	tests := []struct {
		name   string
		from   compCore
		op     compOp
		job    uint64
		want   compCore
		action string
		err    error
	}{
		{"trigger idle", compCore{}, opTrigger, 0, compCore{CompRunning, 1, 1}, ActCompTrigger, nil},
		{"trigger busy", running, opTrigger, 0, running, "", ErrBusy},
		{"finish running", running, opCompDone, 2, compCore{CompIdle, 0, 2}, ActCompFinish, nil},
		{"stale finish", running, opCompDone, 1, running, "", nil},
		{"terminated refuses", compCore{state: CompTerminated}, opTrigger, 0, compCore{state: CompTerminated}, "", ErrClosed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, action, err := tt.from.step(tt.op, tt.job)
			if got != tt.want || action != tt.action || !errors.Is(err, tt.err) || (tt.err == nil && err != nil) {
				t.Fatalf("step = %+v, %q, %v; want %+v, %q, %v", got, action, err, tt.want, tt.action, tt.err)
			}
		})
	}
}
