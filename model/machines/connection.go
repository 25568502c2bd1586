package machines

import (
	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/model/session"
)

// Path is a set of the connection's exit paths, as a bit mask.
type Path uint8

// The exit paths.
const (
	PathClose Path = 1 << iota // Session.Close
	PathDrop                   // the context given to New is cancelled
	PathPanic                  // a child's work panicked or its detector failed
)

var pathNames = [...]string{"close", "drop", "panic"}

// Value returns the set as Connection.tla writes it: {"close", "drop"}.
func (p Path) Value() model.Value {
	var elems []model.Value
	for i, n := range pathNames {
		if p&(1<<i) != 0 {
			elems = append(elems, model.Str(n))
		}
	}
	return model.Set(elems...)
}

// ConnectionState is one state of spec/machines/Connection.tla (M1).
type ConnectionState struct {
	// Conn is "live" or "torn".
	Conn string
	// Exits are the exit paths that fired; Handled those the connection
	// goroutine acted on.
	Exits, Handled Path
	// Teardowns counts the runs of teardown.
	Teardowns int8
}

// Connection.tla's action names, in the order of its Next.
const (
	ConnectionClose           = "Close"
	ConnectionDrop            = "Drop"
	ConnectionChildPanics     = "ChildPanics"
	ConnectionTeardownOnClose = "TeardownOnClose"
	ConnectionTeardownOnDrop  = "TeardownOnDrop"
	ConnectionTeardownOnPanic = "TeardownOnPanic"
)

// The mutants of Connection.tla.
var (
	// ConnectionTeardownPerExit tears down once per exit path instead of
	// once: the goroutine keeps serving exit paths after teardown.
	ConnectionTeardownPerExit = Mutant{"teardown-per-exit", "TeardownOnce",
		"the connection goroutine tears down again on every exit path that fires"}
	// ConnectionMutants lists them.
	ConnectionMutants = []Mutant{ConnectionTeardownPerExit}
)

// Session projects the state onto session.fizz's variables: conn is 1 once
// torn, and teardown drives every child to 2 (outside M1: 0 before).
func (s ConnectionState) Session() session.State {
	if s.Conn == "torn" {
		return session.State{Conn: 1, Vad: 2, Resp: 2, Compaction: 2}
	}
	return session.State{}
}

// ConnectionSessionActions says which of session.fizz's actions each of
// Connection.tla's projects onto ("" a stutter): an exit path firing is
// invisible to session.fizz; each teardown is its Teardown. A second
// teardown projects onto a stutter of the torn state, which the state
// projection alone would accept: the action map refuses it.
var ConnectionSessionActions = map[string][]string{
	ConnectionClose: {""}, ConnectionDrop: {""}, ConnectionChildPanics: {""},
	ConnectionTeardownOnClose: {session.Teardown}, ConnectionTeardownOnDrop: {session.Teardown},
	ConnectionTeardownOnPanic: {session.Teardown}, Done: {""},
}

// Connection returns the transcription of spec/machines/Connection.tla, or
// of its mutant m.
func Connection(m Mutant) *model.Spec[ConnectionState] {
	live := guard[ConnectionState]{`conn = "live"`, func(s ConnectionState) bool { return s.Conn == "live" }}
	fire := func(name string, p Path) model.Action[ConnectionState] {
		return model.Action[ConnectionState]{Name: name,
			Guard: guards(live, guard[ConnectionState]{`"` + pathNames[bit(p)] + `" \notin exits`,
				func(s ConnectionState) bool { return s.Exits&p == 0 }}),
			Next: set(func(s *ConnectionState) { s.Exits |= p })}
	}
	teardown := func(name string, p Path) model.Action[ConnectionState] {
		first := live
		if m == ConnectionTeardownPerExit {
			first = guard[ConnectionState]{`"` + pathNames[bit(p)] + `" \notin handled`,
				func(s ConnectionState) bool { return s.Handled&p == 0 }}
		}
		return model.Action[ConnectionState]{Name: name,
			Guard: guards(first, guard[ConnectionState]{`"` + pathNames[bit(p)] + `" \in exits`,
				func(s ConnectionState) bool { return s.Exits&p != 0 }}),
			Next: set(func(s *ConnectionState) { s.Conn = "torn"; s.Handled |= p; s.Teardowns++ })}
	}
	return &model.Spec[ConnectionState]{
		Name: specName("connection", m),
		Vars: []string{"conn", "exits", "handled", "teardowns"},
		Valuation: func(s ConnectionState) []model.Value {
			return []model.Value{str(s.Conn), s.Exits.Value(), s.Handled.Value(), num(s.Teardowns)}
		},
		Init: func() []ConnectionState { return []ConnectionState{{Conn: "live"}} },
		Actions: []model.Action[ConnectionState]{
			fire(ConnectionClose, PathClose),
			fire(ConnectionDrop, PathDrop),
			fire(ConnectionChildPanics, PathPanic),
			teardown(ConnectionTeardownOnClose, PathClose),
			teardown(ConnectionTeardownOnDrop, PathDrop),
			teardown(ConnectionTeardownOnPanic, PathPanic),
			done(`conn = "torn"`, func(s ConnectionState) bool { return s.Conn == "torn" }),
		},
		Invariants: []model.Invariant[ConnectionState]{
			{Name: "TypeOK", Holds: func(s ConnectionState) bool {
				return oneOf(s.Conn, "live", "torn") && s.Exits < 1<<len(pathNames) && s.Handled < 1<<len(pathNames) &&
					s.Teardowns >= 0 && s.Teardowns <= 3
			}},
			{Name: "TeardownOnce", Holds: func(s ConnectionState) bool { return s.Teardowns <= 1 }},
			{Name: "TornByAnExit", Holds: func(s ConnectionState) bool {
				torn := s.Conn == "torn"
				return torn == (s.Teardowns > 0) && torn == (s.Handled != 0) && s.Handled&^s.Exits == 0
			}},
		},
		CheckDeadlock: true,
	}
}

// bit returns the index of p's single bit.
func bit(p Path) int {
	for i := range pathNames {
		if p == 1<<i {
			return i
		}
	}
	return 0
}
