// Package session is the Go transcription of spec/session.fizz: the
// realtime session hierarchy of seed 001, where the connection (M1) is the
// parent region of VAD (M2), the response coordinator (M3, which owns the
// TTS pipeline M5) and compaction (M4).
//
// The variables and values are the spec's: conn (0 live, 1 torn), vad
// (0 stopped, 1 running, 2 terminated), resp (0 idle, 1 active,
// 2 terminated) and compaction (0 idle, 1 running, 2 terminated). The
// actions are VadStart, VadStop, RespStart, RespFinish, CompTrigger,
// CompFinish and Teardown.
//
// Stuttering. FizzBee re-assigns resp = 1 in RespStart when a response is
// already active; that is a real self-loop of the spec and counts as a
// transition (4 of the 36). Once torn down no action is enabled, and
// FizzBee, with deadlock detection off, records one "end" stutter edge on
// the torn-down state. This transcription declares that state Terminal
// instead: the stutter is declared, not an action, and it is not counted,
// so the graph has 9 states and 36 transitions. The conformance test maps
// FizzBee's stutter edge onto the declared terminal state.
package session

import (
	"strings"

	"github.com/tracecheck/tracecheck/model"
)

// State is one state of session.fizz's Session role.
type State struct {
	Conn, Vad, Resp, Compaction int8
}

// Variable names, as the spec spells them.
const (
	VarConn       = "conn"
	VarVad        = "vad"
	VarResp       = "resp"
	VarCompaction = "compaction"
)

// Action names, as the spec spells them.
const (
	VadStart    = "VadStart"
	VadStop     = "VadStop"
	RespStart   = "RespStart"
	RespFinish  = "RespFinish"
	CompTrigger = "CompTrigger"
	CompFinish  = "CompFinish"
	Teardown    = "Teardown"
)

// Options select mutants of the spec, for mutation experiments. The zero
// value is the spec as written.
type Options struct {
	// NoCompactionTeardown deletes `self.compaction = 2` from Teardown: the
	// real M4 gap, compaction left fire-and-forget.
	NoCompactionTeardown bool
	// NoVadTeardown deletes `self.vad = 2` from Teardown (a leaked VAD).
	NoVadTeardown bool
	// NoRespTeardown deletes `self.resp = 2` from Teardown (a leaked response).
	NoRespTeardown bool
	// ChildStartsAfterTeardown deletes RespStart's guard (`self.conn == 0
	// and self.resp != 2`): a response may start after the connection is
	// torn (a send after close).
	ChildStartsAfterTeardown bool
}

// String names the selected mutations, e.g. "no-compaction-teardown", or
// "" for the spec as written.
func (o Options) String() string {
	var parts []string
	if o.NoVadTeardown {
		parts = append(parts, "no-vad-teardown")
	}
	if o.NoRespTeardown {
		parts = append(parts, "no-resp-teardown")
	}
	if o.NoCompactionTeardown {
		parts = append(parts, "no-compaction-teardown")
	}
	if o.ChildStartsAfterTeardown {
		parts = append(parts, "child-starts-after-teardown")
	}
	return strings.Join(parts, ",")
}

type guard struct {
	text string
	ok   func(State) bool
}

func guards(gs ...guard) func(State) string {
	return func(s State) string {
		for _, g := range gs {
			if !g.ok(s) {
				return g.text
			}
		}
		return ""
	}
}

var connLive = guard{"self.conn == 0", func(s State) bool { return s.Conn == 0 }}

func set(f func(*State)) func(State, func(State)) {
	return func(s State, emit func(State)) { f(&s); emit(s) }
}

// Spec returns the transcription of session.fizz. With a non-zero opt it
// returns the selected mutant.
func Spec(opt Options) *model.Spec[State] {
	name := "session"
	if m := opt.String(); m != "" {
		name += "[" + m + "]"
	}
	respStart := guards(connLive, guard{"self.resp != 2", func(s State) bool { return s.Resp != 2 }})
	if opt.ChildStartsAfterTeardown {
		respStart = guards()
	}
	return &model.Spec[State]{
		Name: name,
		Vars: []string{VarConn, VarVad, VarResp, VarCompaction},
		Valuation: func(s State) []model.Value {
			return []model.Value{model.Int(int64(s.Conn)), model.Int(int64(s.Vad)),
				model.Int(int64(s.Resp)), model.Int(int64(s.Compaction))}
		},
		Init: func() []State { return []State{{}} },
		Actions: []model.Action[State]{
			{Name: VadStart, Guard: guards(connLive, guard{"self.vad == 0", func(s State) bool { return s.Vad == 0 }}),
				Next: set(func(s *State) { s.Vad = 1 })},
			{Name: VadStop, Guard: guards(connLive, guard{"self.vad == 1", func(s State) bool { return s.Vad == 1 }}),
				Next: set(func(s *State) { s.Vad = 0 })},
			{Name: RespStart, Guard: respStart, Next: set(func(s *State) { s.Resp = 1 })},
			{Name: RespFinish, Guard: guards(guard{"self.resp == 1", func(s State) bool { return s.Resp == 1 }}),
				Next: set(func(s *State) { s.Resp = 0 })},
			{Name: CompTrigger, Guard: guards(connLive, guard{"self.compaction == 0", func(s State) bool { return s.Compaction == 0 }}),
				Next: set(func(s *State) { s.Compaction = 1 })},
			{Name: CompFinish, Guard: guards(guard{"self.compaction == 1", func(s State) bool { return s.Compaction == 1 }}),
				Next: set(func(s *State) { s.Compaction = 0 })},
			{Name: Teardown, Guard: guards(connLive),
				Next: set(func(s *State) {
					s.Conn = 1
					if !opt.NoVadTeardown {
						s.Vad = 2
					}
					if !opt.NoRespTeardown {
						s.Resp = 2
					}
					if !opt.NoCompactionTeardown {
						s.Compaction = 2
					}
				})},
		},
		Invariants: []model.Invariant[State]{
			{Name: "ChildrenDieWithParent", Holds: func(s State) bool {
				return s.Conn == 0 || (s.Vad == 2 && s.Resp == 2 && s.Compaction == 2)
			}},
		},
		// The spec sets deadlock_detection: false; a torn-down session
		// stutters, as FizzBee's "end" edge does.
		Terminal: func(s State) bool { return s.Conn == 1 },
	}
}
