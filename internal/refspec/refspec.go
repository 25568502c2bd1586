// Package refspec holds a small nondeterministic reference spec, Counter,
// on which the checker's own tests and the gate's calibration of the
// checker run: its traces need the whole candidate set, which the bundled
// specs (deterministic: one successor per state and action) never do.
package refspec

import "github.com/tracecheck/tracecheck/model"

// Counter is Counter's state.
type Counter struct {
	X    int
	Done bool
}

// CounterSpec is a counter: Bump adds 1 or 2 to x (while x < 6 and not
// done); Finish sets done once x >= 3; a done state is terminal.
// Invariant XBelow7 holds of every reachable state; property
// NoBigStepPast3 forbids bumping by 2 from 3 or more, which the spec
// allows (it is there to be violated).
func CounterSpec() *model.Spec[Counter] {
	return &model.Spec[Counter]{
		Name: "counter",
		Vars: []string{"x", "done"},
		Valuation: func(s Counter) []model.Value {
			return []model.Value{model.Int(int64(s.X)), model.Bool(s.Done)}
		},
		Init: func() []Counter { return []Counter{{}} },
		Actions: []model.Action[Counter]{
			{Name: "Bump", Guard: func(s Counter) string {
				if s.Done || s.X >= 6 {
					return "~done /\\ x < 6"
				}
				return ""
			}, Next: func(s Counter, emit func(Counter)) {
				emit(Counter{s.X + 1, false})
				emit(Counter{s.X + 2, false})
			}},
			{Name: "Finish", Guard: func(s Counter) string {
				if s.Done || s.X < 3 {
					return "~done /\\ x >= 3"
				}
				return ""
			}, Next: func(s Counter, emit func(Counter)) { emit(Counter{s.X, true}) }},
		},
		Invariants: []model.Invariant[Counter]{{Name: "XBelow7", Holds: func(s Counter) bool { return s.X < 7 }}},
		Properties: []model.Property[Counter]{{Name: "NoBigStepPast3", Holds: func(from Counter, a string, to Counter) bool {
			return from.X < 3 || to.X-from.X < 2
		}}},
		Terminal: func(s Counter) bool { return s.Done },
	}
}
