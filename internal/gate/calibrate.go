package gate

import (
	"context"
	"fmt"
	"strings"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/internal/refspec"
)

// The bundled specs are deterministic: no state has two successors by one
// action, so every candidate set on their traces holds one state, and a
// checker that kept only one candidate would pass the corpus. Before the
// gate trusts the checker's verdicts, it calibrates it on a small
// nondeterministic reference spec whose traces need the whole candidate
// set (package refspec's Counter, which the checker's own tests use too).

// calibration is one trace of the reference spec (its events' action and
// state, a JSON object's members) and the verdict it must get.
var calibration = []struct {
	name   string
	events [][2]string
	want   check.Verdict
}{
	// The first Bump leaves x out: x is 1 or 2; only 2 reaches x = 4.
	{"the second candidate decides", [][2]string{{"Init", `"x":0`}, {"Bump", ``}, {"Bump", `"x":4`}, {"Finish", `"done":true`}}, check.Valid},
	// x = 1 or 2 after one Bump, 2 to 4 after two: none reaches 7.
	{"no candidate fits", [][2]string{{"Init", `"x":0`}, {"Bump", ``}, {"Bump", `"x":7`}}, check.Violation},
	// Three Bumps, states unknown: not finished.
	{"ambiguous end", [][2]string{{"Init", ``}, {"Bump", ``}, {"Bump", ``}, {"Bump", ``}}, check.Incomplete},
}

// calibrate checks the calibration traces and returns how many got their
// verdict; a wrong one is a failure of the stage.
func calibrate(ctx context.Context, s *stage) (int, error) {
	ok := 0
	for _, c := range calibration {
		var b strings.Builder
		for i, e := range c.events {
			fmt.Fprintf(&b, `{"v":1,"instance":"c","seq":%d,"action":%q,"state":{%s}}`+"\n", i, e[0], e[1])
		}
		rep, err := check.Check(ctx, refspec.CounterSpec(), strings.NewReader(b.String()), c.name, check.Options{})
		if err != nil {
			return ok, err
		}
		if got := rep.Verdict(); got != c.want {
			s.fail("checker calibration %q: %s, want %s (a nondeterministic reference spec: the checker must keep every candidate state)", c.name, got, c.want)
			continue
		}
		ok++
	}
	return ok, nil
}
