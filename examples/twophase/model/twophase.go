// Package model is the Go transcription of spec/TwoPhase.tla, for three
// resource managers: the same variables, values and action names, so that
// its state graph can be compared with the one TLC dumps (model_test.go)
// and traces of the implementation checked against it.
package model

import "github.com/tracecheck/tracecheck/model"

// RMs are the resource managers, as TwoPhase.cfg names them.
var RMs = [N]string{"r1", "r2", "r3"}

// N is the number of resource managers.
const N = 3

// An RM's state: rmState[r] in the spec.
const (
	Working uint8 = iota
	Prepared
	Committed
	Aborted
)

var rmNames = [...]string{"working", "prepared", "committed", "aborted"}

// The TM's state: tmState in the spec.
const (
	TMInit uint8 = iota
	TMCommitted
	TMAborted
)

var tmNames = [...]string{"init", "committed", "aborted"}

// State is one state of TwoPhase.tla.
type State struct {
	RM [N]uint8 // rmState
	TM uint8    // tmState
	// TMPrepared is tmPrepared: bit i is RMs[i].
	TMPrepared uint8
	// PreparedMsg has bit i set when [type |-> "Prepared", rm |-> RMs[i]]
	// is in msgs; CommitMsg and AbortMsg the TM's decisions.
	PreparedMsg         uint8
	CommitMsg, AbortMsg bool
}

func rmSet(bits uint8) model.Value {
	var out []model.Value
	for i := range N {
		if bits&(1<<i) != 0 {
			out = append(out, model.Str(RMs[i]))
		}
	}
	return model.Set(out...)
}

func msgSet(s State) model.Value {
	var out []model.Value
	for i := range N {
		if s.PreparedMsg&(1<<i) != 0 {
			out = append(out, model.Record(model.Field{Name: "type", Value: model.Str("Prepared")}, model.Field{Name: "rm", Value: model.Str(RMs[i])}))
		}
	}
	if s.CommitMsg {
		out = append(out, model.Record(model.Field{Name: "type", Value: model.Str("Commit")}))
	}
	if s.AbortMsg {
		out = append(out, model.Record(model.Field{Name: "type", Value: model.Str("Abort")}))
	}
	return model.Set(out...)
}

// Valuation is the spec's variables in s, in the order of Spec's Vars.
func Valuation(s State) []model.Value {
	fields := make([]model.Field, N)
	for i := range N {
		fields[i] = model.Field{Name: RMs[i], Value: model.Str(rmNames[s.RM[i]])}
	}
	return []model.Value{model.Record(fields...), model.Str(tmNames[s.TM]), rmSet(s.TMPrepared), msgSet(s)}
}

// perRM builds a parameterised action, \E r \in RM : A(r): enabled when
// A(r) is for some r, its successors those of every r, and its arguments
// from s to t the r (as TLC labels the step A("r1")) whose A(r) leads from
// s to t. guard returns "" when A(r) is enabled, else the conjunct that
// fails.
func perRM(name string, guard func(s State, i int) string, next func(s State, i int) State) model.Action[State] {
	return model.Action[State]{
		Name: name,
		Guard: func(s State) string {
			why := ""
			for i := range N {
				if g := guard(s, i); g == "" {
					return ""
				} else if why == "" {
					why = g
				}
			}
			return why + " for every r in RM"
		},
		Next: func(s State, emit func(State)) {
			for i := range N {
				if guard(s, i) == "" {
					emit(next(s, i))
				}
			}
		},
		Args: func(s, t State) [][]model.Value {
			var out [][]model.Value
			for i := range N {
				if guard(s, i) == "" && next(s, i) == t {
					out = append(out, []model.Value{model.Str(RMs[i])})
				}
			}
			return out
		},
	}
}

func rmIs(want uint8) func(State, int) string {
	return func(s State, i int) string {
		if s.RM[i] != want {
			return `rmState[r] = "` + rmNames[want] + `"`
		}
		return ""
	}
}

// Spec returns the transcription of TwoPhase.tla with TwoPhase.cfg's
// checks.
func Spec() *model.Spec[State] {
	all := uint8(1<<N - 1)
	return &model.Spec[State]{
		Name:      "twophase",
		Vars:      []string{"rmState", "tmState", "tmPrepared", "msgs"},
		Valuation: Valuation,
		Init:      func() []State { return []State{{}} },
		Actions: []model.Action[State]{
			{Name: "TMCommit",
				Guard: func(s State) string {
					switch {
					case s.TM != TMInit:
						return `tmState = "init"`
					case s.TMPrepared != all:
						return "tmPrepared = RM"
					}
					return ""
				},
				Next: func(s State, emit func(State)) { s.TM, s.CommitMsg = TMCommitted, true; emit(s) }},
			{Name: "TMAbort",
				Guard: func(s State) string {
					if s.TM != TMInit {
						return `tmState = "init"`
					}
					return ""
				},
				Next: func(s State, emit func(State)) { s.TM, s.AbortMsg = TMAborted, true; emit(s) }},
			perRM("TMRcvPrepared",
				func(s State, i int) string {
					switch {
					case s.TM != TMInit:
						return `tmState = "init"`
					case s.PreparedMsg&(1<<i) == 0:
						return `[type |-> "Prepared", rm |-> r] \in msgs`
					}
					return ""
				},
				func(s State, i int) State { s.TMPrepared |= 1 << i; return s }),
			perRM("RMPrepare", rmIs(Working),
				func(s State, i int) State { s.RM[i], s.PreparedMsg = Prepared, s.PreparedMsg|1<<i; return s }),
			perRM("RMChooseToAbort", rmIs(Working),
				func(s State, i int) State { s.RM[i] = Aborted; return s }),
			perRM("RMRcvCommitMsg",
				func(s State, i int) string {
					if !s.CommitMsg {
						return `[type |-> "Commit"] \in msgs`
					}
					return ""
				},
				func(s State, i int) State { s.RM[i] = Committed; return s }),
			perRM("RMRcvAbortMsg",
				func(s State, i int) string {
					if !s.AbortMsg {
						return `[type |-> "Abort"] \in msgs`
					}
					return ""
				},
				func(s State, i int) State { s.RM[i] = Aborted; return s }),
		},
		Invariants: []model.Invariant[State]{
			{Name: "TypeOK", Holds: func(s State) bool { return s.TM <= TMAborted }},
			{Name: "Consistent", Holds: func(s State) bool {
				aborted, committed := false, false
				for _, r := range s.RM {
					aborted = aborted || r == Aborted
					committed = committed || r == Committed
				}
				return !(aborted && committed)
			}},
		},
		CheckDeadlock: true,
	}
}
