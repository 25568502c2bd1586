package checkpoint

import (
	"bytes"
	"fmt"
	"os"

	"github.com/tracecheck/tracecheck/spec"
	"github.com/tracecheck/tracecheck/trace"
)

// RecoveredDetail is the detail of the receipts that recovery appends to
// the journal of a run whose publisher died (docs/publisher.md, "A
// recovered run in Program.tla"): the journal then ends in the terminal
// phase of the outcome recovery established from the publish directory.
type RecoveredDetail struct {
	// Recovered is always true: the receipt was written by recovery, not
	// by the run's publisher.
	Recovered bool `json:"recovered"`
	// Outcome is the outcome recovery established.
	Outcome Outcome `json:"outcome"`
	// Reason says why recovery wrote this receipt and what it stands for.
	Reason string `json:"reason"`
	// Digest is the published checkpoint's digest (AtomicPublication).
	Digest string `json:"digest,omitempty"`
}

// recoveredInit is the detail of an Init receipt recovery writes for a
// run whose publisher died before writing it.
type recoveredInit struct {
	InitDetail
	Recovered bool   `json:"recovered"`
	Reason    string `json:"reason"`
}

// recoveryStep is one receipt recovery appends: the action and the phase
// it leads to.
type recoveryStep struct {
	action string
	to     Phase
	reason string
}

// recoveryEnding returns the receipts that take a journal left in phase
// last to the terminal phase of outcome, each a step Program.tla allows:
// the death of the publisher stands as Interrupt (InterruptBeforePublication
// from Verified), a publication recovery verified as AtomicPublication, and
// a journal left in Ready (the publisher died before recording the
// program's start) first records the attempt to execute, as the publisher
// does when the program cannot start. ok is false when no ending applies
// (the journal is terminal already, or the outcome is not established).
func recoveryEnding(last Phase, outcome Outcome) (steps []recoveryStep, ok bool) {
	died := fmt.Sprintf("the publisher died in phase %s (its process was killed or crashed: outside Program.tla)", last)
	switch {
	case last.Terminal():
		return nil, false
	case outcome == OutcomePublished && last == PhaseVerified:
		return []recoveryStep{{ActionAtomicPublication, PhasePublished,
			died + "; recovery found this run's checkpoint published and verified it against its manifest and the journal's ReloadAndVerify receipt: the rename happened"}}, true
	case outcome != OutcomeNotPublished:
		return nil, false
	case last == PhaseReady:
		return []recoveryStep{
			{ActionExecutePython, PhaseRunning, died + " before recording the program's start; this receipt records the attempt, so that the run can end (the program may never have run)"},
			{ActionInterrupt, PhaseInterrupted, "the publisher's death ended the run: Interrupt stands for it; nothing of this run is published"},
		}, true
	case last == PhaseRunning || last == PhaseStaging:
		return []recoveryStep{{ActionInterrupt, PhaseInterrupted,
			died + "; Interrupt stands for it; nothing of this run is published and its staging leftovers were removed"}}, true
	case last == PhaseVerified:
		return []recoveryStep{{ActionInterruptBeforePublication, PhaseInterrupted,
			died + "; InterruptBeforePublication stands for it: the checkpoint was verified but never published"}}, true
	}
	return nil, false
}

// completeJournal appends to the journal name in root (a journal the run's
// dead publisher left nonterminal) the receipts of recoveryEnding, so that
// it ends in the terminal phase of rep.Outcome. It reads the journal again
// from the descriptor it appends through (opened beneath root, without
// following a symlink or blocking, read within [MaxJournalBytes]), after
// the run's processes were killed, and appends nothing unless the journal
// is this run's, ends in a nonterminal phase and has an Init receipt. A
// last line cut off without its newline (a receipt the publisher was
// killed while writing) is dropped: the journal is then replaced, as the
// publisher restores its own journal, by its complete lines and the new
// receipts. A journal without receipts (the publisher died before its Init
// receipt) gets the header if it lacks it, an Init receipt written from the
// run's run.json (meta; nothing if it is unreadable) naming runDir, and the ending of a
// run left in Ready, when nothing of the run was published. It returns the
// actions appended.
func completeJournal(root Root, name string, rep *RunReport, meta *runMeta, runDir string, clock Clock) ([]string, error) {
	f, err := root.OpenFile(name, os.O_RDWR|os.O_APPEND, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := readBounded(f, MaxJournalBytes, "the journal")
	if err != nil {
		return nil, err
	}
	complete := b[:bytes.LastIndexByte(b, '\n')+1]
	s, err := ReadJournal(bytes.NewReader(complete))
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	w := trace.NewWriter(&buf)
	var actions []string
	var lastEvent trace.Event
	switch {
	case len(s.Events) == 0 && meta != nil && (s.Spec == "" || s.Spec == JournalSpec) && rep.Outcome == OutcomeNotPublished:
		// The publisher died after creating its journal, before its Init
		// receipt: the run existed (run.json says what it was), nothing
		// ran. Its Init receipt is written from run.json, then the ending
		// of a run left in Ready.
		if s.Spec == "" {
			h, err := spec.SHA256(spec.ProgramFiles...)
			if err != nil {
				return nil, err
			}
			if err := w.WriteHeader(trace.Header{Spec: JournalSpec, SpecSHA256: h, Emitter: "tracecheck recover (impl/checkpoint)"}); err != nil {
				return nil, err
			}
		}
		d, err := detailMap(recoveredInit{
			InitDetail: InitDetail{Run: rep.Run, Name: meta.Name, PublishDir: meta.PublishDir, StagingDir: meta.Staging,
				RunDir: runDir, Command: meta.Command},
			Recovered: true,
			Reason:    "the publisher died after creating its journal, before writing its Init receipt; recovery wrote it from run.json",
		})
		if err != nil {
			return nil, err
		}
		lastEvent = trace.Event{V: trace.Version, Instance: rep.Run, Seq: 0, Action: ActionInit,
			State: map[string]any{VarPhase: PhaseReady.String(), VarVerified: false, VarPublished: false}, Time: clock.Now().UTC(), Detail: d}
		if err := w.Emit(lastEvent); err != nil {
			return nil, err
		}
		actions = append(actions, ActionInit)
		s.Last = PhaseReady.String()
	case len(s.Events) == 0 || s.Events[0].Action != ActionInit || s.Run != rep.Run || s.Terminal:
		return nil, nil
	default:
		lastEvent = s.Events[len(s.Events)-1]
	}
	last, ok := parsePhase(s.Last)
	if !ok {
		return nil, fmt.Errorf("the journal's last receipt has phase %q", s.Last)
	}
	steps, ok := recoveryEnding(last, rep.Outcome)
	if !ok {
		return nil, nil
	}
	verified, _ := lastEvent.State[VarVerified].(bool)
	published, _ := lastEvent.State[VarPublished].(bool)
	for i, st := range steps {
		if st.to == PhasePublished {
			published = true
		}
		d := RecoveredDetail{Recovered: true, Outcome: rep.Outcome, Reason: st.reason}
		if st.action == ActionAtomicPublication {
			d.Digest = rep.Digest
		}
		dm, err := detailMap(d)
		if err != nil {
			return nil, err
		}
		e := trace.Event{V: trace.Version, Instance: rep.Run, Seq: lastEvent.Seq + 1 + uint64(i), Action: st.action,
			State:  map[string]any{VarPhase: st.to.String(), VarVerified: verified, VarPublished: published},
			Time:   clock.Now().UTC(),
			Detail: dm,
		}
		if err := w.Emit(e); err != nil {
			return nil, err
		}
		actions = append(actions, st.action)
	}
	if len(complete) == len(b) {
		if _, err := f.Write(buf.Bytes()); err != nil {
			return nil, err
		}
		return actions, f.Sync()
	}
	g, err := replaceOwned(root, name, append(complete, buf.Bytes()...))
	if err != nil {
		return nil, err
	}
	return actions, g.Close()
}
