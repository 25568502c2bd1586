package machines_test

import (
	"testing"

	"github.com/tracecheck/tracecheck/model/machines"
	"github.com/tracecheck/tracecheck/model/session"
)

func TestCompaction(t *testing.T) {
	sp := machines.Compaction(machines.Written)
	r := holds(t, sp)
	for _, e := range r.Graph.Edges {
		if from := r.Graph.States[e.From]; from.Comp == "terminated" && e.Action != machines.Done {
			t.Errorf("a step after the coordinator terminated: %s from %s", e.Action, sp.Format(from))
		}
	}
}

func TestCompactionMutants(t *testing.T) {
	breaks(t, machines.Compaction(machines.CompactionFireAndForget), machines.CompactionFireAndForget,
		machines.CompactionTrigger, machines.CompactionConnTorn, machines.CompactionShutdown)
}

func TestCompactionRefinesSession(t *testing.T) {
	refines(t, machines.Compaction(machines.Written), machines.CompactionState.Session, machines.CompactionSessionActions,
		session.CompFinish, session.CompTrigger, session.Teardown)
	// The fire-and-forget shutdown is session.fizz's own mutant
	// no-compaction-teardown: the job outlives the session.
	for _, acts := range []map[string][]string{nil, machines.CompactionSessionActions} {
		refuted(t, machines.Compaction(machines.CompactionFireAndForget), machines.CompactionState.Session, acts,
			machines.CompactionShutdown)
	}
	// A trigger served after the coordinator terminated starts a child
	// after teardown.
	late := withGuard(machines.Compaction(machines.Written), machines.CompactionTrigger,
		func(s machines.CompactionState) string {
			if s.Comp == "running" {
				return `comp /= "running"`
			}
			return ""
		})
	refuted(t, late, machines.CompactionState.Session, nil, machines.CompactionTrigger)
	refuted(t, late, machines.CompactionState.Session, machines.CompactionSessionActions, machines.CompactionTrigger)
}
