package machines_test

import (
	"testing"

	"github.com/tracecheck/tracecheck/model/machines"
	"github.com/tracecheck/tracecheck/model/session"
)

func TestTurn(t *testing.T) {
	r := holds(t, machines.Turn(machines.Written))
	for _, e := range r.Graph.Edges {
		from, to := r.Graph.States[e.From], r.Graph.States[e.To]
		if e.Action == machines.TurnAbort && (to.Turn || to.Vad != "terminated" || from.Vad == "terminated") {
			t.Errorf("Abort from %+v to %+v", from, to)
		}
		if from.Vad == "terminated" && e.Action != machines.Done {
			t.Errorf("%s after the abort", e.Action)
		}
	}
}

func TestTurnMutants(t *testing.T) {
	breaks(t, machines.Turn(machines.TurnAbortKeepsTurn), machines.TurnAbortKeepsTurn, machines.TurnSpeechFrame, machines.TurnAbort)
}

func TestTurnRefinesSession(t *testing.T) {
	refines(t, machines.Turn(machines.Written), machines.TurnState.Session, machines.TurnSessionActions,
		session.Teardown, session.VadStart, session.VadStop)
	// A detector that keeps listening after it was stopped starts a turn
	// after teardown: a VadStart from session.fizz's torn-down state.
	late := withGuard(machines.Turn(machines.Written), machines.TurnSpeechFrame, func(machines.TurnState) string { return "" })
	refuted(t, late, machines.TurnState.Session, nil, machines.TurnSpeechFrame)
	refuted(t, late, machines.TurnState.Session, machines.TurnSessionActions, machines.TurnSpeechFrame)
}
