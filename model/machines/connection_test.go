package machines_test

import (
	"testing"

	"github.com/tracecheck/tracecheck/model/machines"
	"github.com/tracecheck/tracecheck/model/session"
)

func TestConnection(t *testing.T) {
	r := holds(t, machines.Connection(machines.Written))
	// Every exit path leads to teardown: each is the handled one in some
	// reachable torn state, reached by its own Teardown action.
	for _, c := range []struct {
		path   machines.Path
		action string
	}{
		{machines.PathClose, machines.ConnectionTeardownOnClose},
		{machines.PathDrop, machines.ConnectionTeardownOnDrop},
		{machines.PathPanic, machines.ConnectionTeardownOnPanic},
	} {
		found := false
		for _, e := range r.Graph.Edges {
			to := r.Graph.States[e.To]
			found = found || (e.Action == c.action && to.Conn == "torn" && to.Handled == c.path && to.Teardowns == 1)
		}
		if !found {
			t.Errorf("exit path %v never tears the connection down", c.path.Value())
		}
	}
	// After teardown nothing happens but Done.
	for _, e := range r.Graph.Edges {
		if from := r.Graph.States[e.From]; from.Conn == "torn" && e.Action != machines.Done {
			t.Errorf("%s after teardown, from %+v", e.Action, from)
		}
	}
}

func TestConnectionMutants(t *testing.T) {
	breaks(t, machines.Connection(machines.ConnectionTeardownPerExit), machines.ConnectionTeardownPerExit,
		machines.ConnectionClose, machines.ConnectionDrop, machines.ConnectionTeardownOnClose, machines.ConnectionTeardownOnDrop)
}

func TestConnectionRefinesSession(t *testing.T) {
	refines(t, machines.Connection(machines.Written), machines.ConnectionState.Session, machines.ConnectionSessionActions,
		session.Teardown)
	// A second teardown changes no projected variable: by states alone
	// it is a stutter, and only the action map refuses it.
	mut := machines.Connection(machines.ConnectionTeardownPerExit)
	if _, err := machines.RefinesSession(t.Context(), mut, machines.ConnectionState.Session, nil); err != nil {
		t.Errorf("by states alone: %v; want the second teardown taken for a stutter", err)
	}
	refuted(t, mut, machines.ConnectionState.Session, machines.ConnectionSessionActions, machines.ConnectionTeardownOnDrop)
}
