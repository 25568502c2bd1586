package machines

import (
	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/model/session"
)

// TTSState is one state of spec/machines/TTS.tla (M5): one response's TTS
// pipeline, its audio stream and the response's status.
type TTSState struct {
	// Resp is "live", "complete", "cancelled" or "finished".
	Resp string
	// Worker is the pipeline goroutine: "running", "returned" or "joined".
	Worker string
	// Stream is the audio channel: "open", "closed" or "cut".
	Stream string
	// Buf counts the chunks buffered (0..1), Sent those the synthesizer
	// sent (0..2), Dones the closes of the worker's done channel, Joins
	// the receipts of its exit.
	Buf, Sent, Dones, Joins int8
	// Late records that a chunk was delivered after the response was
	// cancelled or finished.
	Late bool
}

// TTS.tla's action names, in the order of its Next.
const (
	TTSSend     = "Send"
	TTSPlay     = "Play"
	TTSReturn   = "Return"
	TTSCancel   = "Cancel"
	TTSFinish   = "Finish"
	TTSComplete = "Complete"
	TTSReap     = "Reap"
	TTSClose    = "Close"
)

// The mutants of TTS.tla (spec/machines/mutants/TTS_*.tla).
var (
	// TTSCancelKeepsAudio is issue 15's bug: Cancel cuts the stream but
	// leaves its buffered chunks readable.
	TTSCancelKeepsAudio = Mutant{"cancel-keeps-audio", "NoAudioAfterEnd",
		"Cancel leaves the buffered audio readable: a chunk is delivered after the cancel"}
	// TTSCloseTwice makes Close close the worker's done channel again.
	TTSCloseTwice = Mutant{"close-twice", "CloseOnce",
		"Close closes the worker's done channel again: not idempotent"}
	// TTSMutants lists them.
	TTSMutants = []Mutant{TTSCancelKeepsAudio, TTSCloseTwice}
)

// Session projects the state onto session.fizz's variables: the pipeline
// belongs to a response, so resp is 1 while the response is live and 0
// once it has ended; conn, vad and compaction are outside M5 (0).
func (s TTSState) Session() session.State {
	if s.Resp == "live" {
		return session.State{Resp: 1}
	}
	return session.State{}
}

// TTSSessionActions says which of session.fizz's actions each of TTS.tla's
// projects onto ("" a stutter): the pipeline's own steps are invisible to
// session.fizz; the response's end is its RespFinish; Close ends a live
// response (RespFinish) and changes nothing on an ended one.
var TTSSessionActions = map[string][]string{
	TTSSend: {""}, TTSPlay: {""}, TTSReturn: {""}, TTSReap: {""},
	TTSCancel: {session.RespFinish}, TTSFinish: {session.RespFinish}, TTSComplete: {session.RespFinish},
	TTSClose: {session.RespFinish, ""},
	Done:     {""},
}

// TTS returns the transcription of spec/machines/TTS.tla, or of its mutant m.
func TTS(m Mutant) *model.Spec[TTSState] {
	live := guard[TTSState]{`resp = "live"`, func(s TTSState) bool { return s.Resp == "live" }}
	ended := func(r string) bool { return r == "cancelled" || r == "finished" }
	end := func(how string) func(*TTSState) {
		return func(s *TTSState) {
			s.Resp, s.Stream, s.Dones = how, "cut", 1
			if how != "cancelled" || m != TTSCancelKeepsAudio {
				s.Buf = 0
			}
		}
	}
	return &model.Spec[TTSState]{
		Name: specName("tts", m),
		Vars: []string{"resp", "worker", "stream", "buf", "sent", "dones", "joins", "late"},
		Valuation: func(s TTSState) []model.Value {
			return []model.Value{str(s.Resp), str(s.Worker), str(s.Stream), num(s.Buf), num(s.Sent),
				num(s.Dones), num(s.Joins), model.Bool(s.Late)}
		},
		Init: func() []TTSState { return []TTSState{{Resp: "live", Worker: "running", Stream: "open"}} },
		Actions: []model.Action[TTSState]{
			{Name: TTSSend, Guard: guards(
				guard[TTSState]{`worker = "running"`, func(s TTSState) bool { return s.Worker == "running" }},
				guard[TTSState]{`stream = "open"`, func(s TTSState) bool { return s.Stream == "open" }},
				guard[TTSState]{`buf < 1`, func(s TTSState) bool { return s.Buf < 1 }},
				guard[TTSState]{`sent < 2`, func(s TTSState) bool { return s.Sent < 2 }}),
				Next: set(func(s *TTSState) { s.Buf++; s.Sent++ })},
			{Name: TTSPlay, Guard: guards(guard[TTSState]{`buf > 0`, func(s TTSState) bool { return s.Buf > 0 }}),
				Next: set(func(s *TTSState) { s.Buf--; s.Late = s.Late || ended(s.Resp) })},
			{Name: TTSReturn, Guard: guards(guard[TTSState]{`worker = "running"`, func(s TTSState) bool { return s.Worker == "running" }}),
				Next: set(func(s *TTSState) {
					s.Worker = "returned"
					if s.Stream == "open" {
						s.Stream = "closed"
					}
				})},
			{Name: TTSCancel, Guard: guards(live), Next: set(end("cancelled"))},
			{Name: TTSFinish, Guard: guards(live), Next: set(end("finished"))},
			{Name: TTSComplete, Guard: guards(live,
				guard[TTSState]{`worker = "returned"`, func(s TTSState) bool { return s.Worker == "returned" }}),
				Next: set(func(s *TTSState) { s.Resp, s.Worker, s.Dones = "complete", "joined", 1; s.Joins++ })},
			{Name: TTSReap, Guard: guards(
				guard[TTSState]{`resp \in Ended`, func(s TTSState) bool { return ended(s.Resp) }},
				guard[TTSState]{`worker = "returned"`, func(s TTSState) bool { return s.Worker == "returned" }}),
				Next: set(func(s *TTSState) { s.Worker = "joined"; s.Joins++ })},
			{Name: TTSClose, Guard: guards(guard[TTSState]{`worker /= "joined"`, func(s TTSState) bool { return s.Worker != "joined" }}),
				Next: set(func(s *TTSState) {
					if s.Resp == "live" {
						s.Resp, s.Stream, s.Buf = "cancelled", "cut", 0
					}
					if m == TTSCloseTwice {
						s.Dones = min(s.Dones+1, 2)
					} else {
						s.Dones = 1
					}
				})},
			done(`resp /= "live" /\ worker = "joined" /\ buf = 0`, func(s TTSState) bool {
				return s.Resp != "live" && s.Worker == "joined" && s.Buf == 0
			}),
		},
		Invariants: []model.Invariant[TTSState]{
			{Name: "TypeOK", Holds: func(s TTSState) bool {
				return oneOf(s.Resp, "live", "complete", "cancelled", "finished") &&
					oneOf(s.Worker, "running", "returned", "joined") && oneOf(s.Stream, "open", "closed", "cut") &&
					s.Buf >= 0 && s.Buf <= 1 && s.Sent >= 0 && s.Sent <= 2 && s.Dones >= 0 && s.Dones <= 2 && s.Joins >= 0 && s.Joins <= 2
			}},
			{Name: "NoAudioAfterEnd", Holds: func(s TTSState) bool { return !s.Late }},
			{Name: "CloseOnce", Holds: func(s TTSState) bool { return s.Dones <= 1 }},
			{Name: "JoinOnce", Holds: func(s TTSState) bool { return s.Joins <= 1 }},
		},
		CheckDeadlock: true,
	}
}
