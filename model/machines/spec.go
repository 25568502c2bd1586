package machines

import (
	"slices"

	"github.com/tracecheck/tracecheck/model"
)

// Mutant names a mutant of one machine spec: the spec with one bug made in
// it, kept to show that its checks catch the bug. The zero value is the
// spec as written.
type Mutant struct {
	// Name names the mutant on the command line (explore NAME --mutant
	// Name), e.g. "cancel-keeps-audio".
	Name string
	// Breaks names the invariant the mutant violates.
	Breaks string
	// Doc says what was changed.
	Doc string
}

// Written is the spec as written, for every machine.
var Written = Mutant{}

// String returns the mutant's name ("" for the spec as written).
func (m Mutant) String() string { return m.Name }

// Done is every machine spec's last action: a self-loop where the
// machine's work is over, so that a trace may end there (check takes a
// state whose only enabled action stutters for an end, as Program.tla's
// Terminated) and TLC's deadlock check holds.
const Done = "Done"

// done returns the Done action, enabled where over holds (its guard text
// the spec's words for it).
func done[S comparable](text string, over func(S) bool) model.Action[S] {
	return model.Action[S]{Name: Done, Guard: guards(guard[S]{text, over}), Next: func(s S, emit func(S)) { emit(s) }}
}

// specName names a transcription: "tts", or "tts[cancel-keeps-audio]".
func specName(machine string, m Mutant) string {
	if m.Name == "" {
		return machine
	}
	return machine + "[" + m.Name + "]"
}

// guard is one conjunct of an action's enabling condition, with the spec's
// words for it.
type guard[S any] struct {
	text string
	ok   func(S) bool
}

// guards returns an action guard: "" when every conjunct holds, else the
// first one that fails.
func guards[S any](gs ...guard[S]) func(S) string {
	return func(s S) string {
		for _, g := range gs {
			if !g.ok(s) {
				return g.text
			}
		}
		return ""
	}
}

// set returns an action body that applies f to a copy of the state.
func set[S any](f func(*S)) func(S, func(S)) {
	return func(s S, emit func(S)) { f(&s); emit(s) }
}

func str(s string) model.Value { return model.Str(s) }

// oneOf reports whether s is one of the values (a TypeOK conjunct
// s \in {...}).
func oneOf(s string, values ...string) bool { return slices.Contains(values, s) }

func num[N ~int8](n N) model.Value { return model.Int(int64(n)) }
