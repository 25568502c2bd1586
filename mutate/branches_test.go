package mutate_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/tracecheck/tracecheck/mutate"
)

// branch-swap exchanges an if's branches (and only a plain else's); the
// releases of a lock, Unlock and RUnlock, and their acquisitions are
// dropped by call-drop; each mutant is killed by the test that covers it,
// for the reason it should be.
func TestBranchSwapAndLocks(t *testing.T) {
	const dir = "testdata/branches"
	ms, st, err := mutate.Generate(dir, ".")
	if err != nil {
		t.Fatal(err)
	}
	want := []struct {
		name, op, old, new string
		kind               string // the kind of detector that kills it
	}{
		{"op/branches.go:9:2/branch-swap", mutate.OpBranchSwap, "\t\treturn -x\n\t} else {\n\t\treturn x\n", "\t\treturn x\n\t} else {\n\t\treturn -x\n", mutate.KindAssertion},
		{"op/branches.go:9:7/boundary", mutate.OpBoundary, "\tif x < 0 {", "\tif x <= 0 {", ""}, // x = 0 either way: survives
		{"op/branches.go:24:2/call-drop", mutate.OpCallDrop, "\ts.mu.RLock()\n", "\t\n", mutate.KindCrashed},
		{"op/branches.go:26:2/call-drop", mutate.OpCallDrop, "\ts.mu.RUnlock()\n", "\t\n", mutate.KindAssertion},
		{"op/branches.go:32:2/call-drop", mutate.OpCallDrop, "\ts.mu.Lock()\n", "\t\n", mutate.KindCrashed},
		{"op/branches.go:34:2/call-drop", mutate.OpCallDrop, "\ts.mu.Unlock()\n", "\t\n", mutate.KindAssertion},
	}
	if len(ms) != len(want) || st.Dropped != 0 {
		var names []string
		for _, m := range ms {
			names = append(names, m.Name)
		}
		t.Fatalf("%d mutants (%+v), want %d:\n%s", len(ms), st, len(want), strings.Join(names, "\n"))
	}
	for i, w := range want {
		m := ms[i]
		if m.Name != w.name || m.Operator != w.op || !strings.Contains(m.Old, w.old) || !strings.Contains(m.New, w.new) {
			t.Errorf("mutant %d: %s (%s) %q → %q; want %s (%s) with %q → %q", i, m.Name, m.Operator, m.Old, m.New, w.name, w.op, w.old, w.new)
		}
	}
	if testing.Short() {
		t.Skip("SKIP in -short: runs go test on a scratch module")
	}
	// The same verdicts, and detectors, through go test and through a
	// test binary built once per mutant (Staged).
	for _, staged := range []bool{false, true} {
		c := &mutate.Campaign{Options: mutate.Options{Root: dir, Timeout: 2 * time.Minute, NoVet: true, Staged: staged}, Jobs: 2, Select: true}
		mx, err := c.Run(context.Background(), ms)
		if err != nil {
			t.Fatal(err)
		}
		for i, w := range want {
			r := mx.Results[i]
			wantStatus := mutate.StatusKilled
			if w.kind == "" {
				wantStatus = mutate.StatusSurvived
			}
			if r.Status != wantStatus || r.Kind != w.kind || (r.Status == mutate.StatusKilled && !strings.HasPrefix(r.Detector, "example.com/branches.Test")) {
				t.Errorf("staged %v: %s: %s by %s (%s: %q), want %s by %s", staged, r.Mutant, r.Status, r.Detector, r.Kind, r.Evidence, wantStatus, w.kind)
			}
		}
	}
}
