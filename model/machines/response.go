package machines

import (
	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/model/session"
)

// ResponseState is one state of spec/machines/Response.tla (M3).
type ResponseState struct {
	// Conn is "live" or "torn" (teardown has begun).
	Conn string
	// Coord is the coordinator's state: "idle", "active" or "terminated".
	Coord string
	// R holds responses 1 and 2: "none", "live" or "ended".
	R [2]string
	// Next is the last response number handed out (0..2).
	Next int8
}

// Response.tla's action names, in the order of its Next.
const (
	ResponseStart    = "Start"
	ResponseEnd      = "End"
	ResponseConnTorn = "ConnTorn"
	ResponseShutdown = "Shutdown"
)

// The mutants of Response.tla.
var (
	// ResponseSupersedeKeepsOld launches a new response without ending the
	// active one.
	ResponseSupersedeKeepsOld = Mutant{"supersede-keeps-old", "AtMostOneLive",
		"Start launches the new response without ending the old: two live responses"}
	// ResponseShutdownLeavesResponse terminates the coordinator without
	// ending its live response.
	ResponseShutdownLeavesResponse = Mutant{"shutdown-leaves-response", "NoneAfterTeardown",
		"Shutdown leaves the live response running after teardown"}
	// ResponseMutants lists them.
	ResponseMutants = []Mutant{ResponseSupersedeKeepsOld, ResponseShutdownLeavesResponse}
)

// live reports whether some response is live.
func (s ResponseState) live() bool { return s.R[0] == "live" || s.R[1] == "live" }

// Session projects the state onto session.fizz's variables. As for
// compaction, the coordinator's shutdown is session.fizz's Teardown (conn
// 1, vad and compaction 2 from it on, 0 before: outside M3). resp is 1
// while a response is live, else 2 once terminated, else 0: a shutdown
// that leaves a response live projects onto conn = 1 with resp = 1, which
// session.fizz never reaches (its mutant no-resp-teardown). Superseding
// projects onto RespStart's self-loop on resp = 1.
func (s ResponseState) Session() session.State {
	var p session.State
	if s.Coord == "terminated" {
		p = session.State{Conn: 1, Vad: 2, Resp: 2, Compaction: 2}
	}
	if s.live() {
		p.Resp = 1
	}
	return p
}

// ResponseSessionActions says which of session.fizz's actions each of
// Response.tla's projects onto ("" a stutter).
var ResponseSessionActions = map[string][]string{
	ResponseStart:    {session.RespStart},
	ResponseEnd:      {session.RespFinish},
	ResponseConnTorn: {""},
	ResponseShutdown: {session.Teardown},
	Done:             {""},
}

// Response returns the transcription of spec/machines/Response.tla, or of
// its mutant m.
func Response(m Mutant) *model.Spec[ResponseState] {
	return &model.Spec[ResponseState]{
		Name: specName("response", m),
		Vars: []string{"conn", "coord", "r", "next"},
		Valuation: func(s ResponseState) []model.Value {
			return []model.Value{str(s.Conn), str(s.Coord), model.Seq(str(s.R[0]), str(s.R[1])), num(s.Next)}
		},
		Init: func() []ResponseState {
			return []ResponseState{{Conn: "live", Coord: "idle", R: [2]string{"none", "none"}}}
		},
		Actions: []model.Action[ResponseState]{
			{Name: ResponseStart, Guard: guards(
				guard[ResponseState]{`coord /= "terminated"`, func(s ResponseState) bool { return s.Coord != "terminated" }},
				guard[ResponseState]{`next < 2`, func(s ResponseState) bool { return s.Next < 2 }}),
				Next: set(func(s *ResponseState) {
					if m != ResponseSupersedeKeepsOld {
						for i := range s.R {
							if s.R[i] == "live" {
								s.R[i] = "ended"
							}
						}
					}
					s.R[s.Next] = "live"
					s.Next++
					s.Coord = "active"
				})},
			{Name: ResponseEnd, Guard: guards(guard[ResponseState]{`coord = "active"`, func(s ResponseState) bool { return s.Coord == "active" }}),
				Next: set(func(s *ResponseState) { s.R[s.Next-1] = "ended"; s.Coord = "idle" })},
			{Name: ResponseConnTorn, Guard: guards(guard[ResponseState]{`conn = "live"`, func(s ResponseState) bool { return s.Conn == "live" }}),
				Next: set(func(s *ResponseState) { s.Conn = "torn" })},
			{Name: ResponseShutdown, Guard: guards(
				guard[ResponseState]{`conn = "torn"`, func(s ResponseState) bool { return s.Conn == "torn" }},
				guard[ResponseState]{`coord /= "terminated"`, func(s ResponseState) bool { return s.Coord != "terminated" }}),
				Next: set(func(s *ResponseState) {
					s.Coord = "terminated"
					if m != ResponseShutdownLeavesResponse {
						for i := range s.R {
							if s.R[i] == "live" {
								s.R[i] = "ended"
							}
						}
					}
				})},
			done(`coord = "terminated"`, func(s ResponseState) bool { return s.Coord == "terminated" }),
		},
		Invariants: []model.Invariant[ResponseState]{
			{Name: "TypeOK", Holds: func(s ResponseState) bool {
				return oneOf(s.Conn, "live", "torn") && oneOf(s.Coord, "idle", "active", "terminated") &&
					oneOf(s.R[0], "none", "live", "ended") && oneOf(s.R[1], "none", "live", "ended") && s.Next >= 0 && s.Next <= 2
			}},
			{Name: "AtMostOneLive", Holds: func(s ResponseState) bool { return !(s.R[0] == "live" && s.R[1] == "live") }},
			{Name: "NoneAfterTeardown", Holds: func(s ResponseState) bool {
				return s.Coord != "terminated" || (s.Conn == "torn" && !s.live())
			}},
			{Name: "LiveIsActive", Holds: func(s ResponseState) bool {
				if (s.Coord == "active") != s.live() {
					return false
				}
				for i, r := range s.R {
					if r == "live" && int8(i+1) != s.Next {
						return false
					}
				}
				return true
			}},
		},
		CheckDeadlock: true,
	}
}
