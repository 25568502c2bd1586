package gate

import (
	"context"
	"fmt"
	"strings"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/model"
)

// The bundled specs are deterministic: no state has two successors by one
// action, so every candidate set on their traces holds one state, and a
// checker that kept only one candidate would pass the corpus. Before the
// gate trusts the checker's verdicts, it calibrates it on a small
// nondeterministic reference spec whose traces need the whole candidate
// set.

// counter is the reference spec's state: Bump adds 1 or 2 (below 6),
// Finish ends at 3 or more.
type counter struct {
	X    int
	Done bool
}

func counterSpec() *model.Spec[counter] {
	return &model.Spec[counter]{
		Name: "counter",
		Vars: []string{"x", "done"},
		Valuation: func(s counter) []model.Value {
			return []model.Value{model.Int(int64(s.X)), model.Bool(s.Done)}
		},
		Init: func() []counter { return []counter{{}} },
		Actions: []model.Action[counter]{
			{Name: "Bump", Guard: func(s counter) string {
				if s.Done || s.X >= 6 {
					return "~done /\\ x < 6"
				}
				return ""
			}, Next: func(s counter, emit func(counter)) {
				emit(counter{s.X + 1, false})
				emit(counter{s.X + 2, false})
			}},
			{Name: "Finish", Guard: func(s counter) string {
				if s.Done || s.X < 3 {
					return "~done /\\ x >= 3"
				}
				return ""
			}, Next: func(s counter, emit func(counter)) { emit(counter{s.X, true}) }},
		},
		Terminal: func(s counter) bool { return s.Done },
	}
}

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
		rep, err := check.Check(ctx, counterSpec(), strings.NewReader(b.String()), c.name, check.Options{})
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
