package checkpoint

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strings"

	"github.com/tracecheck/tracecheck/spec"
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

// Limits on reading a journal back.
const (
	// MaxJournalBytes is the largest journal read back.
	MaxJournalBytes = 16 << 20
	// MaxJournalLine is the longest receipt line read back.
	MaxJournalLine = trace.DefaultMaxLine
	// MaxReceipts is the most receipts a journal of one run may hold (a
	// run writes at most five).
	MaxReceipts = 64
)

// journal writes receipts. After a failed write it writes nothing more, so
// the journal on disk is always a prefix of the run's transitions. It keeps
// what it wrote, to check that nobody else changed the file (check) and to
// put it back if somebody did (restore).
type journal struct {
	root  Root   // the journal's directory
	name  string // its name in root
	out   *journalFile
	w     *trace.Writer
	run   string
	seq   uint64
	clock Clock
	err   error
}

// journalFile is the journal's open file and a copy of every byte written
// to it.
type journalFile struct {
	f       File
	written []byte
}

func (j *journalFile) Write(p []byte) (int, error) {
	n, err := j.f.Write(p)
	j.written = append(j.written, p[:n]...)
	return n, err
}

func (j *journalFile) Sync() error { return j.f.Sync() }

// openJournal opens the journal name in root, which must be absent or
// empty, for appending.
func openJournal(root Root, name, run string, clock Clock) (*journal, error) {
	f, err := root.OpenFile(name, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("%w: open journal: %w", ErrJournal, err)
	}
	if fi, err := f.Stat(); err != nil || fi.Size() != 0 {
		f.Close()
		if err == nil {
			return nil, fmt.Errorf("%w: %s is not empty; a journal records one run", ErrForeignJournal, f.Name())
		}
		return nil, fmt.Errorf("%w: open journal: %w", ErrJournal, err)
	}
	// The journal's name (and, in a run directory, run.json's and the
	// logs') is durable only once its directory is fsynced: without it, a
	// power cut could take the journal and every fsynced receipt with it.
	if err := root.SyncDir(path.Dir(name)); err != nil {
		f.Close()
		return nil, fmt.Errorf("%w: open journal: fsync its directory: %w", ErrJournal, err)
	}
	out := &journalFile{f: f}
	w := trace.NewWriter(out)
	w.SyncEach = true // every receipt is fsynced before the run goes on
	return &journal{root: root, name: name, out: out, w: w, run: run, clock: clock}, nil
}

// JournalSpec names the spec a journal's receipts follow, in its header:
// spec/Program.tla, registered with the checker as "program".
const JournalSpec = "program"

// header writes the journal's header line (docs/trace-format.md): the
// spec, by its name and the hash of the text this build implements.
func (j *journal) header() error {
	h, err := spec.SHA256(spec.ProgramFiles...)
	if err != nil {
		j.err = fmt.Errorf("%w: header: %w", ErrJournal, err)
		return j.err
	}
	if err := j.w.WriteHeader(trace.Header{Spec: JournalSpec, SpecSHA256: h, Emitter: "tracecheck run (impl/checkpoint)"}); err != nil {
		j.err = fmt.Errorf("%w: header: %w", ErrJournal, err)
		return j.err
	}
	return nil
}

// emit writes one receipt, whose detail is one of the *Detail types, and
// fsyncs it.
func (j *journal) emit(action string, phase Phase, verified, published bool, detail any) error {
	if j.err != nil {
		return j.err
	}
	dm, err := detailMap(detail)
	if err != nil {
		j.err = fmt.Errorf("%w: %s: %w", ErrJournal, action, err)
		return j.err
	}
	e := trace.Event{
		V: trace.Version, Instance: j.run, Seq: j.seq, Action: action,
		State:  map[string]any{VarPhase: phase.String(), VarVerified: verified, VarPublished: published},
		Time:   j.clock.Now().UTC(),
		Detail: dm,
	}
	j.seq++
	if err := j.w.Emit(e); err != nil {
		j.err = fmt.Errorf("%w: %s: %w", ErrJournal, action, err)
		return j.err
	}
	return nil
}

// check reports whether the file at the journal's name is still the file
// the journal writes, holding exactly what it wrote: nil if so, an error
// wrapping [ErrTampered] saying what changed if not.
func (j *journal) check() error {
	return checkOwned(j.root, j.name, j.out.f, j.out.written)
}

// checkOwned checks that name in root is the open file f and holds exactly
// want. It returns an error wrapping [ErrTampered] only on evidence that
// somebody changed it (it is gone, replaced, of another size or content);
// a failure to look (an I/O error) is returned as such, wrapping
// [ErrJournal], and must not lead to a restore.
func checkOwned(root Root, name string, f File, want []byte) error {
	fi, err := root.Lstat(name)
	if isNotExist(err) {
		return fmt.Errorf("%w: %s was removed", ErrTampered, name)
	}
	if err != nil {
		if errors.Is(err, ErrUnsafePath) {
			return fmt.Errorf("%w: %s: %w", ErrTampered, name, err)
		}
		return fmt.Errorf("%w: cannot check %s: %w", ErrJournal, name, err)
	}
	ours, err := f.Stat()
	if err != nil {
		return fmt.Errorf("%w: cannot check %s: %w", ErrJournal, name, err)
	}
	a, _ := idOf(fi)
	b, _ := idOf(ours)
	switch {
	case !fi.Mode().IsRegular():
		return fmt.Errorf("%w: %s was replaced by a %s", ErrTampered, name, fileKind(fi.Mode()))
	case a.dev != b.dev || a.ino != b.ino:
		return fmt.Errorf("%w: %s was replaced by another file", ErrTampered, name)
	case fi.Size() != int64(len(want)):
		return fmt.Errorf("%w: %s is %d bytes, the publisher wrote %d", ErrTampered, name, fi.Size(), len(want))
	}
	g, err := root.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return fmt.Errorf("%w: cannot check %s: %w", ErrJournal, name, err)
	}
	defer g.Close()
	got, err := io.ReadAll(io.LimitReader(g, int64(len(want))+1))
	if err != nil {
		return fmt.Errorf("%w: cannot check %s: %w", ErrJournal, name, err)
	}
	if !bytes.Equal(got, want) {
		return fmt.Errorf("%w: %s does not hold what the publisher wrote", ErrTampered, name)
	}
	return nil
}

// restore puts back, at the journal's name, a file holding what the journal
// wrote, and goes on writing there.
func (j *journal) restore() error {
	f, err := replaceOwned(j.root, j.name, j.out.written)
	if err != nil {
		return err
	}
	j.out.f.Close()
	j.out.f = f
	return nil
}

// replaceOwned atomically replaces name in root (whatever it is: a symlink
// or a FIFO is replaced as itself, never followed) by a new file holding b:
// written to a fresh name beside it, fsynced, renamed over it, its
// directory fsynced. Until the rename, what was at name stays. It returns
// the new file, open for appending.
func replaceOwned(root Root, name string, b []byte) (File, error) {
	tmp := name + ".restore"
	if err := root.RemoveAll(tmp); err != nil {
		return nil, fmt.Errorf("restore %s: %w", name, err)
	}
	f, err := root.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("restore %s: %w", name, err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		if err = root.Rename(tmp, name); err != nil && root.RemoveAll(name) == nil {
			err = root.Rename(tmp, name) // name was a directory
		}
	}
	if err != nil {
		f.Close()
		_ = root.RemoveAll(tmp)
		return nil, fmt.Errorf("restore %s: %w", name, err)
	}
	_ = root.SyncDir(path.Dir(name))
	return f, nil
}

func (j *journal) close() error { return j.out.f.Close() }

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
	// Spec is the spec its header names ("" without a header).
	Spec string
}

// Receipt returns the detail of the last receipt of action, and whether
// there is one.
func (s *JournalSummary) Receipt(action string) (map[string]any, bool) {
	for i := len(s.Events) - 1; i >= 0; i-- {
		if s.Events[i].Action == action {
			return s.Events[i].Detail, true
		}
	}
	return nil, false
}

// ReadJournal reads a journal of one run, tolerating a truncated last line.
// It reads at most [MaxJournalBytes], lines of at most [MaxJournalLine]
// and [MaxReceipts] receipts (past them it fails with [ErrTooLarge]), each
// decoded strictly as docs/trace-format.md says (a repeated field is an
// error). It fails with [ErrForeignJournal] if receipts of several runs
// are mixed.
func ReadJournal(r io.Reader) (*JournalSummary, error) {
	lr := &io.LimitedReader{R: r, N: MaxJournalBytes + 1}
	br := bufio.NewReaderSize(lr, 64<<10)
	s := &JournalSummary{}
	for line := 1; ; line++ {
		b, err := readLine(br, MaxJournalLine)
		if lr.N <= 0 {
			return nil, fmt.Errorf("%w: the journal is larger than %s", ErrTooLarge, sizeText(MaxJournalBytes))
		}
		if errors.Is(err, ErrTooLarge) {
			return nil, fmt.Errorf("journal line %d: %w", line, err)
		}
		if len(b) > 0 && b[len(b)-1] != '\n' {
			s.Truncated = true
			break
		}
		if h, isHeader, herr := trace.ParseHeader(bytes.TrimRight(b, "\r\n")); isHeader {
			if herr != nil {
				return nil, fmt.Errorf("journal line %d: %w", line, herr)
			}
			s.Spec = h.Spec
			b = nil
		}
		if len(b) > 0 {
			if len(s.Events) == MaxReceipts {
				return nil, fmt.Errorf("%w: more than %d receipts: not the journal of one run", ErrTooLarge, MaxReceipts)
			}
			raw, perr := trace.ParseEvent(bytes.TrimRight(b, "\r\n"), trace.Pos{File: "journal", Line: line})
			if perr != nil {
				return nil, perr
			}
			e, perr := raw.Event()
			if perr != nil {
				return nil, perr
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

// readLine reads one line, with its newline, of at most max bytes.
func readLine(br *bufio.Reader, max int) ([]byte, error) {
	var out []byte
	for {
		b, err := br.ReadSlice('\n')
		out = append(out, b...)
		if len(out) > max+1 {
			return nil, fmt.Errorf("%w: a line longer than %s", ErrTooLarge, sizeText(int64(max)))
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		return out, err
	}
}

// journalOwner returns the run of an existing non-empty journal name in
// root, or "" if the file is absent or empty. A journal that is not a
// regular file (a symlink, a FIFO) is refused.
func journalOwner(root Root, name string) (string, error) {
	f, err := root.OpenFile(name, os.O_RDONLY, 0)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	br := bufio.NewReader(io.LimitReader(f, 2<<20))
	line, err := br.ReadString('\n')
	if _, isHeader, _ := trace.ParseHeader([]byte(strings.TrimSpace(line))); isHeader {
		line, err = br.ReadString('\n') // the first receipt says whose journal it is
	}
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
