package gate

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/internal/bundled"
)

// TestSessionsStage: in quick mode the sessions stage runs the realistic
// mix on 200 sessions and a porcupine history, and passes: no session
// failed, the history is linearizable (its visualization is in the run
// directory and linked from the report), no goroutine outlived the
// sessions; and the traces it registered cover all 36 transitions of
// session.fizz in the coverage stage.
func TestSessionsStage(t *testing.T) {
	r := newRun(t, root)
	dir := r.opt.Dir
	s := runStage(t, r, sessionsStage)
	if len(s.Failures) > 0 {
		t.Fatalf("sessions stage failed:\n%s", strings.Join(s.Failures, "\n"))
	}
	for _, want := range []string{"200 sessions", "barge-ins", "drops", "panics", "responses", "compactions", "porcupine: 4016 operations", "linearizable", "leaks 0"} {
		if !strings.Contains(s.Figures, want) {
			t.Errorf("figures lack %q: %s", want, s.Figures)
		}
	}
	if len(r.links) != 1 || r.links[0].Href != filepath.Join("sessions", "porcupine.html") {
		t.Errorf("links %+v", r.links)
	}
	if fi, err := os.Stat(filepath.Join(dir, "sessions", "porcupine.html")); err != nil || fi.Size() == 0 {
		t.Errorf("porcupine.html: %v", err)
	}
	if n := len(r.traces["session"]); n != 2 {
		t.Fatalf("%d session traces registered, want 2 (the mix, the porcupine run)", n)
	}
	c := runStage(t, r, coverageStage)
	for _, f := range c.Failures {
		if !strings.HasPrefix(f, "program: no traces") { // this test wrote none
			t.Errorf("coverage: %s", f)
		}
	}
	if got := r.covered["session"]; got != [2]int{36, 36} {
		t.Errorf("session coverage %d/%d, want 36/36", got[0], got[1])
	}
	// Each machine spec, projected, at least as far as the realistic
	// mix's floor (below it, the coverage stage fails: checked above).
	for _, f := range bundled.MachineCoverageFloors() {
		if got, ok := r.covered[f.Spec+" (projected)"]; !ok || got[0] < f.Min {
			t.Errorf("%s projected: coverage %v, want at least %d", f.Spec, got, f.Min)
		}
	}
}
