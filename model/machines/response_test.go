package machines_test

import (
	"testing"

	"github.com/tracecheck/tracecheck/model/machines"
	"github.com/tracecheck/tracecheck/model/session"
)

func TestResponse(t *testing.T) {
	sp := machines.Response(machines.Written)
	r := holds(t, sp)
	// Superseding: every Start from an active coordinator ends the old
	// response in the same step that makes the new one live.
	supersedes := 0
	for _, e := range r.Graph.Edges {
		from, to := r.Graph.States[e.From], r.Graph.States[e.To]
		if e.Action == machines.ResponseStart && from.Coord == "active" {
			supersedes++
			if old := from.Next - 1; to.R[old] != "ended" || to.R[to.Next-1] != "live" {
				t.Errorf("Start from %s to %s does not end the old before the new", sp.Format(from), sp.Format(to))
			}
		}
	}
	if supersedes == 0 {
		t.Error("no Start supersedes an active response")
	}
}

func TestResponseMutants(t *testing.T) {
	breaks(t, machines.Response(machines.ResponseSupersedeKeepsOld), machines.ResponseSupersedeKeepsOld,
		machines.ResponseStart, machines.ResponseStart)
	breaks(t, machines.Response(machines.ResponseShutdownLeavesResponse), machines.ResponseShutdownLeavesResponse,
		machines.ResponseStart, machines.ResponseConnTorn, machines.ResponseShutdown)
}

func TestResponseRefinesSession(t *testing.T) {
	r := refines(t, machines.Response(machines.Written), machines.ResponseState.Session, machines.ResponseSessionActions,
		session.RespFinish, session.RespStart, session.Teardown)
	if r.Mapped[machines.ResponseStart][session.RespStart] == 0 {
		t.Errorf("Start never projects onto RespStart: %v", r.Mapped)
	}
	// A response left live after the shutdown is session.fizz's
	// no-resp-teardown.
	for _, acts := range []map[string][]string{nil, machines.ResponseSessionActions} {
		refuted(t, machines.Response(machines.ResponseShutdownLeavesResponse), machines.ResponseState.Session, acts,
			machines.ResponseShutdown)
	}
	// A response started after the coordinator terminated.
	late := withGuard(machines.Response(machines.Written), machines.ResponseStart, func(s machines.ResponseState) string {
		if s.Next >= 2 {
			return "next < 2"
		}
		return ""
	})
	refuted(t, late, machines.ResponseState.Session, nil, machines.ResponseStart)
	refuted(t, late, machines.ResponseState.Session, machines.ResponseSessionActions, machines.ResponseStart)
}
