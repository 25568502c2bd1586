package machines_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/model/machines"
	"github.com/tracecheck/tracecheck/model/session"
)

func TestTTS(t *testing.T) {
	sp := machines.TTS(machines.Written)
	r := holds(t, sp)
	// Close is idempotent: on every ended response whose worker is still
	// live it is a self-loop; it never closes done a second time.
	for id, s := range r.Graph.States {
		if (s.Resp == "cancelled" || s.Resp == "finished") && s.Worker != "joined" {
			loop := false
			for _, e := range r.Graph.Edges {
				loop = loop || (e.From == id && e.To == id && e.Action == machines.TTSClose)
			}
			if !loop {
				t.Errorf("Close on %s is not a self-loop", sp.Format(s))
			}
		}
		if s.Resp != "live" && s.Resp != "complete" && (s.Buf != 0 || s.Stream != "cut") {
			t.Errorf("ended response with audio left: %s", sp.Format(s))
		}
	}
}

func TestTTSMutants(t *testing.T) {
	breaks(t, machines.TTS(machines.TTSCancelKeepsAudio), machines.TTSCancelKeepsAudio,
		machines.TTSSend, machines.TTSCancel, machines.TTSPlay)
	breaks(t, machines.TTS(machines.TTSCloseTwice), machines.TTSCloseTwice, machines.TTSCancel, machines.TTSClose)
}

func TestTTSRefinesSession(t *testing.T) {
	r := refines(t, machines.TTS(machines.Written), machines.TTSState.Session, machines.TTSSessionActions, session.RespFinish)
	// The pipeline's own steps (Send, Play, Return, Reap) are invisible to
	// session.fizz; the response's end is its RespFinish.
	for _, a := range []string{machines.TTSSend, machines.TTSPlay, machines.TTSReturn, machines.TTSReap} {
		if len(r.Mapped[a]) != 1 || r.Mapped[a][""] == 0 {
			t.Errorf("%s projects onto %v, want only stutters", a, r.Mapped[a])
		}
	}
	// A pipeline that marks its response live again would project onto
	// a new RespStart, which session.fizz allows: no M5 mutant can break
	// the refinement, because session.fizz does not see the audio, which
	// is why TTS.tla exists. A projection onto a state session.fizz cannot
	// reach is refused from the start.
	_, err := machines.RefinesSession(context.Background(), machines.TTS(machines.Written),
		func(machines.TTSState) session.State { return session.State{Conn: 1, Resp: 1} }, nil)
	if !errors.Is(err, machines.ErrNotRefinement) || !strings.Contains(err.Error(), "initial state") {
		t.Errorf("a projection onto an unreachable state: %v, want ErrNotRefinement naming the initial state", err)
	}
}
