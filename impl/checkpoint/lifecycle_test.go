package checkpoint

import "testing"

func TestDecide(t *testing.T) {
	type tr struct {
		action string
		to     Phase
	}
	want := map[Phase]map[event]tr{
		PhaseReady:    {evDone: {ActionExecutePython, PhaseRunning}},
		PhaseRunning:  {evDone: {ActionProgramSucceeds, PhaseStaging}, evFailed: {ActionExecutionFails, PhaseFailed}, evInterrupted: {ActionInterrupt, PhaseInterrupted}},
		PhaseStaging:  {evDone: {ActionReloadAndVerify, PhaseVerified}, evFailed: {ActionSaveOrVerificationFails, PhaseFailed}, evInterrupted: {ActionInterrupt, PhaseInterrupted}},
		PhaseVerified: {evDone: {ActionAtomicPublication, PhasePublished}, evFailed: {ActionPublicationFails, PhaseFailed}, evInterrupted: {ActionInterruptBeforePublication, PhaseInterrupted}},
	}
	for p := PhaseReady; p <= PhaseInterrupted; p++ {
		for _, e := range []event{evDone, evFailed, evInterrupted, 0, 9} {
			action, to, ok := decide(p, e)
			w, exp := want[p][e]
			if ok != exp || ok && (action != w.action || to != w.to) {
				t.Errorf("decide(%s, %d) = %q, %s, %v; want %q, %s, %v", p, e, action, to, ok, w.action, w.to, exp)
			}
			if ok && p.Terminal() {
				t.Errorf("a transition out of terminal %s", p)
			}
		}
	}
}
