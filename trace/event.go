// Package trace defines tracecheck's trace format, writes it ([Writer])
// and reads it ([Decoder], streaming, with file:line in every error and
// truncation told apart from corruption; ITF documents through [AsNDJSON]).
//
// A trace is NDJSON: one [Event] a line, in the spec's vocabulary. Events of
// many instances (runs, sessions) may interleave in one stream; each
// instance's events carry strictly increasing sequence numbers. The format
// is versioned per line ("v": 1) so that streams from different writers can
// be concatenated. docs/trace-format.md is the full description.
//
// Implementations (impl/...) emit events through a [Sink]; this package
// knows nothing of the models, so an implementation that emits traces does
// not depend on the spec it is checked against.
package trace

import "time"

// Version is the trace format version this package writes.
const Version = 1

// InitAction is the action name of an instance's first event: the state it
// starts in, which must be an initial state of the spec.
const InitAction = "Init"

// Part values for a composite step: an atomic step of the spec that the
// implementation performs in several events (e.g. session Teardown).
const (
	PartBegin = "begin" // opens the composite; the action names the spec action
	PartStep  = "step"  // one piece of it; its state changes accumulate
	PartEnd   = "end"   // closes it; the accumulated step must be one spec step
)

// Event is one line of a trace: a committed transition of one instance.
type Event struct {
	// V is the format version; writers set it to [Version].
	V int `json:"v"`
	// Instance names the run or session the event belongs to.
	Instance string `json:"instance"`
	// Seq is the event's sequence number within its instance; it strictly
	// increases.
	Seq uint64 `json:"seq"`
	// Action is the spec action taken, [InitAction] for the first event, or
	// an implementation-internal name when Stutter is set.
	Action string `json:"action"`
	// Args are the action's arguments, in the spec's parameter order, each
	// a value in the encoding of State's values (optional): an event that
	// names a parameterised action with its arguments is matched only by
	// the steps taken with them, as TLC labels them (RMPrepare("r1") is
	// Action "RMPrepare", Args ["r1"]). Nil or empty: the action alone,
	// any of its steps. A stutter event takes none.
	Args []any `json:"args,omitempty"`
	// State holds the spec variables after the step, in full or in part.
	// Values are JSON scalars, arrays (sequences) or ITF-style objects
	// ({"#set": [...]}, {"#map": [[k, v], ...]}, {"#tup": [...]},
	// {"#bigint": "123"}) and plain objects (records).
	State map[string]any `json:"state"`
	// Part marks a piece of a composite step: PartBegin, PartStep, PartEnd.
	Part string `json:"part,omitempty"`
	// Stutter marks an event the spec does not see (TTS internals, say): it
	// is accepted only if the spec variables it carries are unchanged.
	Stutter bool `json:"stutter,omitempty"`
	// Time is when the step happened (optional).
	Time time.Time `json:"time,omitzero"`
	// Detail carries implementation detail: exit code, hash, error text.
	Detail map[string]any `json:"detail,omitempty"`
}

// Sink receives the events an implementation emits. Emit must be safe for
// concurrent use if the implementation emits from several goroutines.
type Sink interface {
	Emit(Event) error
}

// Discard is a Sink that drops every event at no cost.
var Discard Sink = discard{}

type discard struct{}

func (discard) Emit(Event) error { return nil }
