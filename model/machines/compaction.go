package machines

import (
	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/model/session"
)

// CompactionState is one state of spec/machines/Compaction.tla (M4).
type CompactionState struct {
	// Conn is "live" or "torn" (teardown has begun).
	Conn string
	// Comp is the coordinator's state: "idle", "running" or "terminated".
	Comp string
	// Jobs counts the compaction goroutines started and not yet joined.
	Jobs int8
}

// Compaction.tla's action names, in the order of its Next.
const (
	CompactionTrigger  = "Trigger"
	CompactionJobEnds  = "JobEnds"
	CompactionConnTorn = "ConnTorn"
	CompactionShutdown = "Shutdown"
)

// The mutants of Compaction.tla.
var (
	// CompactionFireAndForget is seed 001's real M4 gap: Shutdown
	// terminates the coordinator but leaves the job in flight running.
	CompactionFireAndForget = Mutant{"fire-and-forget", "NoneAfterTeardown",
		"Shutdown leaves the compaction in flight running (the real M4 gap)"}
	// CompactionMutants lists them.
	CompactionMutants = []Mutant{CompactionFireAndForget}
)

// Session projects the state onto session.fizz's variables. The
// coordinator's shutdown is session.fizz's atomic Teardown: until it, conn
// projects to 0 even once teardown has begun (a trigger served in between
// is a CompTrigger of the live session, the linearization impl/session's
// trace uses), and from it conn is 1, vad and resp 2 (outside M4: 0 before).
// compaction is what session.fizz means by it: 1 while a compaction job
// lives (jobs > 0), else 2 once terminated, else 0. So a shutdown that
// leaves a job running projects onto conn = 1 with compaction = 1, which
// session.fizz never reaches (its mutant no-compaction-teardown).
func (s CompactionState) Session() session.State {
	var p session.State
	if s.Comp == "terminated" {
		p = session.State{Conn: 1, Vad: 2, Resp: 2, Compaction: 2}
	}
	if s.Jobs > 0 {
		p.Compaction = 1
	}
	return p
}

// CompactionSessionActions says which of session.fizz's actions each of
// Compaction.tla's projects onto ("" a stutter).
var CompactionSessionActions = map[string][]string{
	CompactionTrigger:  {session.CompTrigger},
	CompactionJobEnds:  {session.CompFinish},
	CompactionConnTorn: {""},
	CompactionShutdown: {session.Teardown},
	Done:               {""},
}

// Compaction returns the transcription of spec/machines/Compaction.tla, or
// of its mutant m.
func Compaction(m Mutant) *model.Spec[CompactionState] {
	return &model.Spec[CompactionState]{
		Name: specName("compaction", m),
		Vars: []string{"conn", "comp", "jobs"},
		Valuation: func(s CompactionState) []model.Value {
			return []model.Value{str(s.Conn), str(s.Comp), num(s.Jobs)}
		},
		Init: func() []CompactionState { return []CompactionState{{Conn: "live", Comp: "idle"}} },
		Actions: []model.Action[CompactionState]{
			{Name: CompactionTrigger, Guard: guards(guard[CompactionState]{`comp = "idle"`, func(s CompactionState) bool { return s.Comp == "idle" }}),
				Next: set(func(s *CompactionState) { s.Comp = "running"; s.Jobs++ })},
			{Name: CompactionJobEnds, Guard: guards(
				guard[CompactionState]{`comp = "running"`, func(s CompactionState) bool { return s.Comp == "running" }},
				guard[CompactionState]{`jobs > 0`, func(s CompactionState) bool { return s.Jobs > 0 }}),
				Next: set(func(s *CompactionState) { s.Comp = "idle"; s.Jobs-- })},
			{Name: CompactionConnTorn, Guard: guards(guard[CompactionState]{`conn = "live"`, func(s CompactionState) bool { return s.Conn == "live" }}),
				Next: set(func(s *CompactionState) { s.Conn = "torn" })},
			{Name: CompactionShutdown, Guard: guards(
				guard[CompactionState]{`conn = "torn"`, func(s CompactionState) bool { return s.Conn == "torn" }},
				guard[CompactionState]{`comp /= "terminated"`, func(s CompactionState) bool { return s.Comp != "terminated" }}),
				Next: set(func(s *CompactionState) {
					s.Comp = "terminated"
					if m != CompactionFireAndForget {
						s.Jobs = 0
					}
				})},
			done(`comp = "terminated"`, func(s CompactionState) bool { return s.Comp == "terminated" }),
		},
		Invariants: []model.Invariant[CompactionState]{
			{Name: "TypeOK", Holds: func(s CompactionState) bool {
				return oneOf(s.Conn, "live", "torn") && oneOf(s.Comp, "idle", "running", "terminated") && s.Jobs >= 0 && s.Jobs <= 2
			}},
			{Name: "NoneAfterTeardown", Holds: func(s CompactionState) bool {
				return s.Comp != "terminated" || (s.Jobs == 0 && s.Conn == "torn")
			}},
			{Name: "SingleFlight", Holds: func(s CompactionState) bool {
				want := int8(0)
				if s.Comp == "running" {
					want = 1
				}
				return s.Jobs == want
			}},
		},
		CheckDeadlock: true,
	}
}
