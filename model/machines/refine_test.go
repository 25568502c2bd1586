package machines_test

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/model/machines"
	"github.com/tracecheck/tracecheck/model/session"
)

// Every machine spec as written refines session.fizz, and together their
// projected steps take every action of session.fizz.
func TestSessionRefinements(t *testing.T) {
	rs, err := machines.SessionRefinements(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"connection", "turn", "response", "compaction", "tts"}
	covered := map[string]bool{}
	for i, r := range rs {
		if r.Machine != want[i] || r.Abstract != "session" || r.Steps == 0 {
			t.Errorf("refinement %d: %s of %s, %d steps", i, r.Machine, r.Abstract, r.Steps)
		}
		for _, a := range r.Covered {
			covered[a] = true
		}
	}
	var all []string
	for _, a := range session.Spec(session.Options{}).Actions {
		all = append(all, a.Name)
	}
	if got := slices.Sorted(maps.Keys(covered)); !slices.Equal(got, slices.Sorted(slices.Values(all))) {
		t.Errorf("the machines' projected steps take %v, want all of session.fizz's %v", got, all)
	}
}

// An action map that forgets an action, or maps it onto the wrong
// session.fizz action, is refused.
func TestRefinesActionMap(t *testing.T) {
	for _, c := range []struct {
		name   string
		edit   func(map[string][]string)
		action string
		want   string
	}{
		{"unmapped", func(m map[string][]string) { delete(m, machines.CompactionJobEnds) }, machines.CompactionJobEnds,
			"action JobEnds has no projection"},
		{"wrong action", func(m map[string][]string) { m[machines.CompactionTrigger] = []string{session.VadStart} },
			machines.CompactionTrigger, "step Trigger projects onto"},
		{"not a stutter", func(m map[string][]string) { m[machines.CompactionShutdown] = []string{""} },
			machines.CompactionShutdown, "which is not a stutter"},
	} {
		t.Run(c.name, func(t *testing.T) {
			acts := maps.Clone(machines.CompactionSessionActions)
			c.edit(acts)
			_, err := machines.RefinesSession(t.Context(), machines.Compaction(machines.Written), machines.CompactionState.Session, acts)
			if !errors.Is(err, machines.ErrNotRefinement) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err %v; want ErrNotRefinement saying %q", err, c.want)
			}
		})
	}
}
