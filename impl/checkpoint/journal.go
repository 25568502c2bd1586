package checkpoint

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tracecheck/tracecheck/trace"
)

// Phase is a run's lifecycle phase; its String is the name Program.tla
// gives it.
type Phase uint8

// The phases of a run.
const (
	PhaseReady Phase = iota
	PhaseRunning
	PhaseStaging
	PhaseVerified
	PhasePublished
	PhaseFailed
	PhaseInterrupted
)

var phaseNames = [...]string{"Ready", "Running", "Staging", "Verified", "Published", "Failed", "Interrupted"}

// String returns the phase's name in the journal.
func (p Phase) String() string {
	if int(p) < len(phaseNames) {
		return phaseNames[p]
	}
	return fmt.Sprintf("Phase(%d)", uint8(p))
}

// Terminal reports whether p ends a run.
func (p Phase) Terminal() bool {
	return p == PhasePublished || p == PhaseFailed || p == PhaseInterrupted
}

// parsePhase returns the phase named s.
func parsePhase(s string) (Phase, bool) {
	for i, n := range phaseNames {
		if n == s {
			return Phase(i), true
		}
	}
	return 0, false
}

// The transitions a run records, one receipt each: the journal's action
// names.
const (
	ActionInit                       = trace.InitAction
	ActionExecutePython              = "ExecutePython"
	ActionProgramSucceeds            = "ProgramSucceeds"
	ActionExecutionFails             = "ExecutionFails"
	ActionReloadAndVerify            = "ReloadAndVerify"
	ActionSaveOrVerificationFails    = "SaveOrVerificationFails"
	ActionInterrupt                  = "Interrupt"
	ActionAtomicPublication          = "AtomicPublication"
	ActionPublicationFails           = "PublicationFails"
	ActionInterruptBeforePublication = "InterruptBeforePublication"
)

// The journal's state variables.
const (
	VarPhase     = "phase"
	VarVerified  = "verified"
	VarPublished = "published"
)

// journal writes receipts. After a failed write it writes nothing more, so
// the journal on disk is always a prefix of the run's transitions.
type journal struct {
	f     File
	w     *trace.Writer
	run   string
	seq   uint64
	clock Clock
	err   error
}

func openJournal(fsys FS, path, run string, clock Clock) (*journal, error) {
	f, err := fsys.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%w: open journal: %w", ErrJournal, err)
	}
	w := trace.NewWriter(f)
	w.SyncEach = true // every receipt is fsynced before the run goes on
	return &journal{f: f, w: w, run: run, clock: clock}, nil
}

// emit writes one receipt and fsyncs it.
func (j *journal) emit(action string, phase Phase, verified, published bool, detail map[string]any) error {
	if j.err != nil {
		return j.err
	}
	e := trace.Event{
		V: trace.Version, Instance: j.run, Seq: j.seq, Action: action,
		State:  map[string]any{VarPhase: phase.String(), VarVerified: verified, VarPublished: published},
		Time:   j.clock.Now().UTC(),
		Detail: detail,
	}
	j.seq++
	if err := j.w.Emit(e); err != nil {
		j.err = fmt.Errorf("%w: %s: %w", ErrJournal, action, err)
		return j.err
	}
	return nil
}

func (j *journal) close() error { return j.f.Close() }

// JournalEntry is one receipt read back from a journal.
type JournalEntry = trace.Event

// JournalSummary is what a journal says about its run.
type JournalSummary struct {
	// Run is the journal's instance.
	Run string
	// Events are the complete receipts, in file order.
	Events []trace.Event
	// Last is the phase of the last receipt ("" without receipts).
	Last string
	// Terminal reports that the last receipt is in a terminal phase.
	Terminal bool
	// Truncated reports a last line cut off without its newline.
	Truncated bool
	// PublishDir and Name are what the Init receipt recorded.
	PublishDir, Name string
}

// ReadJournal reads a journal of one run, tolerating a truncated last line.
// It fails with [ErrForeignJournal] if receipts of several runs are mixed.
func ReadJournal(r io.Reader) (*JournalSummary, error) {
	br := bufio.NewReader(r)
	s := &JournalSummary{}
	for line := 1; ; line++ {
		b, err := br.ReadBytes('\n')
		if len(b) > 0 && b[len(b)-1] != '\n' {
			s.Truncated = true
			break
		}
		if len(b) > 0 {
			var e trace.Event
			if jerr := json.Unmarshal(b, &e); jerr != nil {
				return nil, fmt.Errorf("journal line %d: %w", line, jerr)
			}
			if s.Run == "" {
				s.Run = e.Instance
			} else if e.Instance != s.Run {
				return nil, fmt.Errorf("%w: line %d is run %q, the journal is run %q", ErrForeignJournal, line, e.Instance, s.Run)
			}
			if e.Action == ActionInit && e.Detail != nil {
				s.PublishDir, _ = e.Detail["publish_dir"].(string)
				s.Name, _ = e.Detail["name"].(string)
			}
			if ph, ok := e.State[VarPhase].(string); ok {
				s.Last = ph
				p, _ := parsePhase(ph)
				s.Terminal = p.Terminal()
			}
			s.Events = append(s.Events, e)
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
	}
	return s, nil
}

// journalOwner returns the run of an existing non-empty journal at path,
// or "" if the file is absent or empty.
func journalOwner(fsys FS, path string) (string, error) {
	f, err := fsys.OpenFile(path, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	line, err := bufio.NewReader(io.LimitReader(f, 1<<20)).ReadString('\n')
	if strings.TrimSpace(line) == "" {
		return "", nil
	}
	var e trace.Event
	if jerr := json.Unmarshal([]byte(line), &e); jerr != nil || e.Instance == "" {
		if err != nil && !errors.Is(err, io.EOF) {
			return "", err
		}
		return "?", nil // not empty, not ours: refuse all the same
	}
	return e.Instance, nil
}
