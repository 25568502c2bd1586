package machines

import (
	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/model/session"
)

// TurnState is one state of spec/machines/Turn.tla (M2).
type TurnState struct {
	// Vad is "silent", "speech" or "terminated".
	Vad string
	// Silence counts the non-speech frames heard in speech (0..1).
	Silence int8
	// Turn records that a turn is open.
	Turn bool
}

// Turn.tla's action names, in the order of its Next.
const (
	TurnSpeechFrame = "SpeechFrame"
	TurnQuietFrame  = "QuietFrame"
	TurnAbort       = "Abort"
)

// The mutants of Turn.tla.
var (
	// TurnAbortKeepsTurn leaves the open turn open when the detector is
	// stopped.
	TurnAbortKeepsTurn = Mutant{"abort-keeps-turn", "TurnIsSpeech",
		"Abort stops the detector but leaves the open turn open"}
	// TurnMutants lists them.
	TurnMutants = []Mutant{TurnAbortKeepsTurn}
)

// Session projects the state onto session.fizz's variables: vad is 1 while
// a turn is open, 2 once the detector is terminated (which is teardown:
// conn 1, resp and compaction 2; outside M2, 0 before), else 0.
func (s TurnState) Session() session.State {
	switch {
	case s.Vad == "terminated":
		return session.State{Conn: 1, Vad: 2, Resp: 2, Compaction: 2}
	case s.Turn:
		return session.State{Vad: 1}
	}
	return session.State{}
}

// TurnSessionActions says which of session.fizz's actions each of
// Turn.tla's projects onto ("" a stutter): a speech frame opens a turn
// (VadStart) or continues it, a quiet frame closes it (VadStop) or counts,
// an abort is the teardown.
var TurnSessionActions = map[string][]string{
	TurnSpeechFrame: {session.VadStart, ""},
	TurnQuietFrame:  {session.VadStop, ""},
	TurnAbort:       {session.Teardown},
	Done:            {""},
}

// Turn returns the transcription of spec/machines/Turn.tla, or of its
// mutant m.
func Turn(m Mutant) *model.Spec[TurnState] {
	listening := guard[TurnState]{`vad \in {"silent", "speech"}`, func(s TurnState) bool { return s.Vad != "terminated" }}
	return &model.Spec[TurnState]{
		Name: specName("turn", m),
		Vars: []string{"vad", "silence", "turn"},
		Valuation: func(s TurnState) []model.Value {
			return []model.Value{str(s.Vad), num(s.Silence), model.Bool(s.Turn)}
		},
		Init: func() []TurnState { return []TurnState{{Vad: "silent"}} },
		Actions: []model.Action[TurnState]{
			{Name: TurnSpeechFrame, Guard: guards(listening),
				Next: set(func(s *TurnState) { s.Vad, s.Silence, s.Turn = "speech", 0, true })},
			{Name: TurnQuietFrame, Guard: guards(listening),
				Next: set(func(s *TurnState) {
					switch {
					case s.Vad == "speech" && s.Silence+1 >= 2:
						s.Vad, s.Silence, s.Turn = "silent", 0, false
					case s.Vad == "speech":
						s.Silence++
					default:
						s.Silence = 0
					}
				})},
			{Name: TurnAbort, Guard: guards(guard[TurnState]{`vad /= "terminated"`, func(s TurnState) bool { return s.Vad != "terminated" }}),
				Next: set(func(s *TurnState) {
					s.Vad, s.Silence = "terminated", 0
					if m != TurnAbortKeepsTurn {
						s.Turn = false
					}
				})},
			done(`vad = "terminated"`, func(s TurnState) bool { return s.Vad == "terminated" }),
		},
		Invariants: []model.Invariant[TurnState]{
			{Name: "TypeOK", Holds: func(s TurnState) bool {
				return oneOf(s.Vad, "silent", "speech", "terminated") && s.Silence >= 0 && s.Silence <= 1
			}},
			{Name: "TurnIsSpeech", Holds: func(s TurnState) bool { return s.Turn == (s.Vad == "speech") }},
			{Name: "SilenceInSpeech", Holds: func(s TurnState) bool { return s.Silence == 0 || s.Vad == "speech" }},
		},
		CheckDeadlock: true,
	}
}
