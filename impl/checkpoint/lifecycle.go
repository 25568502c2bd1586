package checkpoint

// event is what became of the work of a run's current phase.
type event uint8

const (
	evDone        event = iota + 1 // the work succeeded
	evFailed                       // it failed
	evInterrupted                  // the context ended first
)

// lifecycle is the publisher's own transition table: for a phase and an
// event, the action recorded and the phase reached. It is written here, in
// the implementation, from seed 000's chart; the tests check the journals
// it produces against model/program, which this package never imports.
var lifecycle = map[Phase][3]struct {
	action string
	to     Phase
}{
	PhaseReady: {
		evDone - 1: {ActionExecutePython, PhaseRunning},
	},
	PhaseRunning: {
		evDone - 1:        {ActionProgramSucceeds, PhaseStaging},
		evFailed - 1:      {ActionExecutionFails, PhaseFailed},
		evInterrupted - 1: {ActionInterrupt, PhaseInterrupted},
	},
	PhaseStaging: {
		evDone - 1:        {ActionReloadAndVerify, PhaseVerified},
		evFailed - 1:      {ActionSaveOrVerificationFails, PhaseFailed},
		evInterrupted - 1: {ActionInterrupt, PhaseInterrupted},
	},
	PhaseVerified: {
		evDone - 1:        {ActionAtomicPublication, PhasePublished},
		evFailed - 1:      {ActionPublicationFails, PhaseFailed},
		evInterrupted - 1: {ActionInterruptBeforePublication, PhaseInterrupted},
	},
}

// decide returns the transition that event e causes in phase p: a pure
// function of the two. ok is false where the lifecycle has none (a
// terminal phase; a failure or interrupt before the program runs).
func decide(p Phase, e event) (action string, to Phase, ok bool) {
	row, found := lifecycle[p]
	if !found || e < evDone || e > evInterrupted {
		return "", p, false
	}
	t := row[e-1]
	return t.action, t.to, t.action != ""
}
