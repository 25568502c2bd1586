// Package program is the Go transcription of spec/Program.tla: Python
// execution and checkpoint publication (seed 000).
//
// The variables, their values and the action names are the spec's own:
// phase ∈ {"Ready", "Running", "Staging", "Verified", "Published", "Failed",
// "Interrupted"}, verified and published ∈ BOOLEAN; actions ExecutePython,
// ProgramSucceeds, ExecutionFails, Interrupt, ReloadAndVerify,
// SaveOrVerificationFails, AtomicPublication, PublicationFails,
// InterruptBeforePublication and Terminated (the explicit terminal
// self-loop). The conformance test in conform checks that this
// transcription's state graph equals the one TLC dumps for the spec.
package program

import "github.com/tracecheck/tracecheck/model"

// Phase is the lifecycle phase: seed 000's chart states.
type Phase uint8

// The phases, as Program.tla spells them.
const (
	Ready Phase = iota
	Running
	Staging
	Verified
	Published
	Failed
	Interrupted
)

var phaseNames = [...]string{"Ready", "Running", "Staging", "Verified", "Published", "Failed", "Interrupted"}

// String returns the phase as the spec spells it.
func (p Phase) String() string {
	if int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return "Phase(?)"
}

// ParsePhase returns the phase the spec spells name.
func ParsePhase(name string) (Phase, bool) {
	for i, n := range phaseNames {
		if n == name {
			return Phase(i), true
		}
	}
	return 0, false
}

// Terminal reports whether p is Published, Failed or Interrupted.
func (p Phase) Terminal() bool { return p == Published || p == Failed || p == Interrupted }

// State is one state of Program.tla.
type State struct {
	Phase     Phase
	Verified  bool
	Published bool
}

// Variable names, in the spec's declaration order.
const (
	VarPhase     = "phase"
	VarVerified  = "verified"
	VarPublished = "published"
)

// Action names, in the order of the spec's Next.
const (
	ExecutePython              = "ExecutePython"
	ProgramSucceeds            = "ProgramSucceeds"
	ExecutionFails             = "ExecutionFails"
	ReloadAndVerify            = "ReloadAndVerify"
	SaveOrVerificationFails    = "SaveOrVerificationFails"
	Interrupt                  = "Interrupt"
	AtomicPublication          = "AtomicPublication"
	PublicationFails           = "PublicationFails"
	InterruptBeforePublication = "InterruptBeforePublication"
	Terminated                 = "Terminated"
)

// Labels maps each action to the label of seed 000's chart. Terminated has
// none: the chart hides terminal self-loops.
var Labels = map[string]string{
	ExecutePython:              "Execute Python",
	ProgramSucceeds:            "Program succeeds",
	ExecutionFails:             "Execution fails",
	Interrupt:                  "Interrupt",
	ReloadAndVerify:            "Reload and verify",
	SaveOrVerificationFails:    "Save or verification fails",
	AtomicPublication:          "Atomic publication",
	PublicationFails:           "Publication fails",
	InterruptBeforePublication: "Interrupt before publication",
}

// phaseIs returns the guard phase = want (or phase \in {...}); its failure
// text is the conjunct that failed, computed once.
func phaseIs(want ...Phase) func(State) string {
	text := `phase = "` + want[0].String() + `"`
	if len(want) > 1 {
		set := ""
		for i, w := range want {
			if i > 0 {
				set += ", "
			}
			set += `"` + w.String() + `"`
		}
		text = "phase \\in {" + set + "}"
	}
	return func(s State) string {
		for _, w := range want {
			if s.Phase == w {
				return ""
			}
		}
		return text
	}
}

// to returns an action body that moves to phase p and applies f.
func to(p Phase, f func(*State)) func(State, func(State)) {
	return func(s State, emit func(State)) {
		s.Phase = p
		if f != nil {
			f(&s)
		}
		emit(s)
	}
}

// Mutant names a mutant of Program.tla: the spec with one bug of the
// publisher's made in it, for mutation experiments. The zero value is the
// spec as written.
type Mutant uint8

// The mutants of Program.tla, each with the property it breaks.
const (
	// Written is the spec as written.
	Written Mutant = iota
	// PublishFromStaging lets AtomicPublication fire from Staging,
	// skipping the reload and verification: PublishedOnlyVerified breaks.
	PublishFromStaging
	// FailedToPublished lets AtomicPublication fire from Failed:
	// PublishedOnlyVerified breaks (a failed execution, then published).
	FailedToPublished
	// LeavePublished lets PublicationFails fire from Published (a receipt
	// failure relabels a published checkpoint as failed):
	// FailedNeverPublished breaks.
	LeavePublished
	// InterruptAfterPublished lets InterruptBeforePublication fire from
	// Published: PublicationIsTerminal breaks.
	InterruptAfterPublished
)

var mutantNames = [...]string{"", "publish-from-staging", "failed-to-published", "leave-published", "interrupt-after-published"}

// Mutants lists the mutants, Written excluded.
var Mutants = []Mutant{PublishFromStaging, FailedToPublished, LeavePublished, InterruptAfterPublished}

// String names the mutant ("" for the spec as written).
func (m Mutant) String() string {
	if int(m) < len(mutantNames) {
		return mutantNames[m]
	}
	return "Mutant(?)"
}

// Breaks names the property the mutant is expected to violate.
func (m Mutant) Breaks() string {
	switch m {
	case PublishFromStaging, FailedToPublished:
		return "PublishedOnlyVerified"
	case LeavePublished:
		return "FailedNeverPublished"
	case InterruptAfterPublished:
		return "PublicationIsTerminal"
	}
	return ""
}

// Spec returns the transcription of Program.tla with Program.cfg's checks.
func Spec() *model.Spec[State] { return MutantSpec(Written) }

// MutantSpec returns the transcription of the mutant m of Program.tla
// (spec/mutants/Program_<m>.tla), or of the spec as written.
func MutantSpec(m Mutant) *model.Spec[State] {
	publishFrom, failFrom, interruptFrom := []Phase{Verified}, []Phase{Verified}, []Phase{Verified}
	name := "program"
	switch m {
	case PublishFromStaging:
		publishFrom = []Phase{Staging, Verified}
	case FailedToPublished:
		publishFrom = []Phase{Verified, Failed}
	case LeavePublished:
		failFrom = []Phase{Verified, Published}
	case InterruptAfterPublished:
		interruptFrom = []Phase{Verified, Published}
	}
	if m != Written {
		name += "[" + m.String() + "]"
	}
	return &model.Spec[State]{
		Name: name,
		Vars: []string{VarPhase, VarVerified, VarPublished},
		Valuation: func(s State) []model.Value {
			return []model.Value{model.Str(s.Phase.String()), model.Bool(s.Verified), model.Bool(s.Published)}
		},
		Init: func() []State { return []State{{Phase: Ready}} },
		Actions: []model.Action[State]{
			{Name: ExecutePython, Guard: phaseIs(Ready), Next: to(Running, nil)},
			{Name: ProgramSucceeds, Guard: phaseIs(Running), Next: to(Staging, nil)},
			{Name: ExecutionFails, Guard: phaseIs(Running), Next: to(Failed, nil)},
			{Name: ReloadAndVerify, Guard: phaseIs(Staging), Next: to(Verified, func(s *State) { s.Verified = true })},
			{Name: SaveOrVerificationFails, Guard: phaseIs(Staging), Next: to(Failed, nil)},
			{Name: Interrupt, Guard: phaseIs(Running, Staging), Next: to(Interrupted, nil)},
			{Name: AtomicPublication, Guard: phaseIs(publishFrom...), Next: to(Published, func(s *State) { s.Published = true })},
			{Name: PublicationFails, Guard: phaseIs(failFrom...), Next: to(Failed, nil)},
			{Name: InterruptBeforePublication, Guard: phaseIs(interruptFrom...), Next: to(Interrupted, nil)},
			{Name: Terminated, Guard: phaseIs(Published, Failed, Interrupted),
				Next: func(s State, emit func(State)) { emit(s) }},
		},
		Invariants: []model.Invariant[State]{
			{Name: "TypeOK", Holds: func(s State) bool { return int(s.Phase) < len(phaseNames) }},
			{Name: "PublishedOnlyVerified", Holds: func(s State) bool {
				return !(s.Published || s.Phase == Published) || (s.Verified && s.Published)
			}},
			{Name: "FailedNeverPublished", Holds: func(s State) bool { return s.Phase != Failed || !s.Published }},
		},
		Properties: []model.Property[State]{
			{Name: "PublicationIsTerminal", Holds: func(from State, _ string, to State) bool {
				return !from.Published || (to.Published && to.Phase == Published)
			}},
		},
		CheckDeadlock: true,
	}
}
