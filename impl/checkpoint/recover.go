package checkpoint

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"
)

// Outcome is what recovery found a run's real outcome to be. Its text (in
// reports and JSON) is the hyphenated name of each constant.
type Outcome uint8

// The outcomes of a run, as recovery establishes them.
const (
	// OutcomeUnknown: recovery could not examine the run (RunReport.Error
	// says why).
	OutcomeUnknown Outcome = iota
	// OutcomePublished: the run's checkpoint is in the publish directory,
	// its manifest names the run, it verifies against the manifest, and
	// the run's journal (if any) recorded the verification of exactly it.
	OutcomePublished
	// OutcomeNotPublished: no checkpoint of this run is published.
	OutcomeNotPublished
	// OutcomeUnverified: a checkpoint whose manifest names this run is
	// published but does not verify, or differs from the one the run
	// verified (modified after publication). Never reported as
	// published-and-verified.
	OutcomeUnverified
	// OutcomeActive: the run's publisher is alive; it was left alone.
	OutcomeActive
)

var outcomeNames = [...]string{"unknown", "published-and-verified", "not-published", "published-but-fails-verification", "active"}

// String returns the outcome's name, e.g. "published-and-verified".
func (o Outcome) String() string {
	if int(o) < len(outcomeNames) {
		return outcomeNames[o]
	}
	return fmt.Sprintf("Outcome(%d)", uint8(o))
}

// MarshalText implements encoding.TextMarshaler: the outcome's name.
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText implements encoding.TextUnmarshaler.
func (o *Outcome) UnmarshalText(b []byte) error {
	for i, n := range outcomeNames {
		if n == string(b) {
			*o = Outcome(i)
			return nil
		}
	}
	return fmt.Errorf("unknown recovery outcome %q", b)
}

// RunReport is what recovery found and did for one run.
type RunReport struct {
	// Run is the run's ID; Name the checkpoint name it publishes under.
	Run  string `json:"run"`
	Name string `json:"name,omitempty"`
	// Outcome is the run's real outcome.
	Outcome Outcome `json:"outcome"`
	// Checkpoint and Digest describe the published checkpoint, if any.
	Checkpoint string `json:"checkpoint,omitempty"`
	Digest     string `json:"digest,omitempty"`
	// JournalPhase is the phase of the journal's last receipt;
	// JournalTerminal whether it ends the run. A nonterminal journal is
	// uncertain: the outcome then comes from the checkpoint directory.
	JournalPhase    string `json:"journal_phase,omitempty"`
	JournalTerminal bool   `json:"journal_terminal"`
	// Appended lists the receipts recovery appended to a nonterminal
	// journal, in order, so that it ends in the terminal phase of Outcome
	// (docs/publisher.md, "A recovered run in Program.tla"); empty if the
	// journal was terminal already or the outcome is not established.
	Appended []string `json:"appended,omitempty"`
	// Removed lists the staging leftovers removed; Killed the PIDs of the
	// run's leftover processes that were killed.
	Removed []string `json:"removed,omitempty"`
	Killed  []int    `json:"killed,omitempty"`
	// Notes explain disagreements between the journal and the directory.
	Notes []string `json:"notes,omitempty"`
	// Error is a problem that kept recovery from finishing this run.
	Error string `json:"error,omitempty"`
	// Time is when recovery looked at the run.
	Time time.Time `json:"time"`
}

// RecoverOptions parameterise [Recover].
type RecoverOptions struct {
	// PublishDir is the publish directory to inspect.
	PublishDir string
	// Journal, if set, limits recovery to that journal's run, which must
	// be a run of PublishDir ([ErrForeignJournal] otherwise). It is also
	// how recovery reads the journal of a run that kept it outside its run
	// directory (run --journal).
	Journal string
	// StagingRoot, if set, is a staging root the runs used besides the
	// default one (run --staging-root): their leftovers there are removed
	// too. Recovery never removes anything at a path it read from disk.
	StagingRoot string
	// Pending limits recovery to runs that need it: a run whose journal is
	// terminal, or that was recovered before, and that left no staging
	// directory is skipped without re-verifying its checkpoint. The
	// publisher's start-up recovery uses it.
	Pending bool
	// FS and Clock default to the real ones.
	FS    FS
	Clock Clock
}

// Recover inspects the runs recorded under PublishDir/.tracecheck: for each
// run whose publisher is gone it reports the real outcome — established
// from the publish directory, verified against the manifest and against
// the journal's Verified receipt, never guessed from a nonterminal journal
// — kills the run's leftover processes, removes its staging leftovers, and
// records what it did in the run directory's recovery.json. Runs whose
// publisher still holds the lock are reported active and left alone.
//
// Every path recovery acts on is derived from PublishDir and the run's ID
// (the name of its directory); nothing read from disk names a path it
// removes. A run that could not be examined (an unreadable run.json or
// journal, a journal that is a symlink or a FIFO) has RunReport.Error set.
func Recover(ctx context.Context, opt RecoverOptions) ([]RunReport, error) {
	if opt.PublishDir == "" {
		return nil, fmt.Errorf("%w: no publish directory", ErrConfig)
	}
	pubDir, err := filepath.Abs(opt.PublishDir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	opt.PublishDir = pubDir
	if opt.FS == nil {
		opt.FS = OSFS{}
	}
	pub, err := opt.FS.OpenRoot(pubDir)
	if err != nil {
		return nil, fmt.Errorf("%w: publish directory: %w", ErrConfig, err)
	}
	defer pub.Close()
	st := where{root: pub, name: stagingDir}
	if opt.StagingRoot != "" {
		sr, err := opt.FS.OpenRoot(opt.StagingRoot)
		if err != nil {
			return nil, fmt.Errorf("%w: staging root: %w", ErrConfig, err)
		}
		defer sr.Close()
		st = where{root: sr, name: "."}
	}
	return recoverIn(ctx, pub, opt, st)
}

// recoverIn is Recover on the open publish directory pub, whose runs' extra
// staging root (if any) is st.
func recoverIn(ctx context.Context, pub Root, opt RecoverOptions, st where) ([]RunReport, error) {
	if opt.Clock == nil {
		opt.Clock = SystemClock{}
	}
	rc := recoverer{ctx: ctx, pub: pub, opt: opt, staging: []where{{pub, stagingDir}}}
	if st.name != stagingDir || st.root != pub {
		rc.staging = append(rc.staging, st)
	}
	if opt.Journal != "" {
		run, err := rc.journalRun()
		if err != nil {
			return nil, err
		}
		return []RunReport{rc.run(run)}, nil
	}
	if fi, err := pub.Lstat(MetaDir); isNotExist(err) {
		return nil, nil
	} else if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStorage, err)
	} else if !fi.IsDir() {
		return nil, fmt.Errorf("%w: %s is a %s, not the publisher's directory", ErrStorage, filepath.Join(pub.Path(), MetaDir), fileKind(fi.Mode()))
	}
	ents, err := pub.ReadDir(runsDir, MaxRuns)
	if isNotExist(err) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStorage, err)
	}
	var out []RunReport
	for _, e := range ents {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		name := e.Name()
		if strings.HasSuffix(name, ".lock") {
			continue
		}
		if run, ok := strings.CutPrefix(name, ".new-"); ok {
			// A publisher that died while creating its run directory: its
			// lock, taken before the directory was made, is free.
			if ValidateName(run) != nil {
				continue
			}
			l, err := lockRun(pub, lockName(run), false)
			if err == nil || isNotExist(err) {
				_ = pub.RemoveAll(runsDir + "/" + name)
			}
			l.unlock()
			continue
		}
		if strings.HasPrefix(name, ".") {
			continue
		}
		if ValidateName(name) != nil {
			out = append(out, RunReport{Run: name, Time: opt.Clock.Now().UTC(),
				Error: fmt.Sprintf("%q is not a run ID: not examined", name)})
			continue
		}
		if opt.Pending && rc.settled(name) {
			continue
		}
		out = append(out, rc.run(name))
	}
	return out, nil
}

// MaxRuns is the most entries recovery reads from the runs directory.
const MaxRuns = 1 << 20

// recoverer is one recovery of a publish directory.
type recoverer struct {
	ctx     context.Context
	pub     Root
	opt     RecoverOptions
	staging []where // staging roots whose leftovers are removed
}

// stagingLeft returns the staging leftovers of run that exist.
func (rc *recoverer) stagingLeft(run string) []where {
	var out []where
	for _, st := range rc.staging {
		w := where{st.root, path.Join(st.name, run)}
		if _, err := w.root.Lstat(w.name); !isNotExist(err) {
			out = append(out, w)
		}
	}
	return out
}

// settled reports whether a run needs no recovery: it left no staging
// directory, and its journal is terminal or it was recovered before.
func (rc *recoverer) settled(run string) bool {
	if len(rc.stagingLeft(run)) > 0 {
		return false
	}
	if fi, err := rc.pub.Lstat(runDirName(run) + "/recovery.json"); err == nil && fi.Mode().IsRegular() {
		return true
	}
	s, err := readJournalAt(rc.pub, runDirName(run)+"/journal.ndjson")
	return err == nil && s.Terminal && s.Run == run
}

// readJournalAt reads the journal name in root: a regular file, opened
// without following a symlink or blocking, read within the limits of
// [ReadJournal].
func readJournalAt(root Root, name string) (*JournalSummary, error) {
	f, err := root.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ReadJournal(f)
}

// journalRun returns the run of the journal opt.Journal, which must be a
// run of the publish directory that keeps its journal there.
func (rc *recoverer) journalRun() (string, error) {
	opt := rc.opt
	abs, err := filepath.Abs(opt.Journal)
	if err != nil {
		return "", fmt.Errorf("%w: journal: %w", ErrConfig, err)
	}
	jr, err := opt.FS.OpenRoot(filepath.Dir(abs))
	if err != nil {
		return "", fmt.Errorf("%w: journal: %w", ErrConfig, err)
	}
	defer jr.Close()
	s, err := readJournalAt(jr, filepath.Base(abs))
	if err != nil {
		return "", fmt.Errorf("%w: journal %s: %w", ErrConfig, opt.Journal, err)
	}
	if s.Run == "" {
		return "", fmt.Errorf("%w: journal %s holds no receipt", ErrConfig, opt.Journal)
	}
	if s.PublishDir != "" && filepath.Clean(s.PublishDir) != opt.PublishDir {
		return "", fmt.Errorf("%w: journal %s is run %q of publish directory %s, not of %s", ErrForeignJournal, opt.Journal, s.Run, s.PublishDir, opt.PublishDir)
	}
	if ValidateName(s.Run) != nil {
		return "", fmt.Errorf("%w: journal %s names run %q", ErrForeignJournal, opt.Journal, s.Run)
	}
	meta, err := readRunMeta(rc.pub, s.Run)
	if err != nil {
		return "", fmt.Errorf("%w: journal %s is run %q, which is not a run of %s: %w", ErrForeignJournal, opt.Journal, s.Run, opt.PublishDir, err)
	}
	if meta.Journal != abs {
		return "", fmt.Errorf("%w: run %q of %s keeps its journal at %s, not %s", ErrForeignJournal, s.Run, opt.PublishDir, meta.Journal, abs)
	}
	return s.Run, nil
}

// maxRunMetaBytes bounds the read of run.json.
const maxRunMetaBytes = 64 << 10

// readRunMeta reads run.json of run, strictly and within bounds, and
// checks that it names this run and a valid checkpoint name.
func readRunMeta(root Root, run string) (*runMeta, error) {
	f, err := root.OpenFile(runDirName(run)+"/run.json", os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := readBounded(f, maxRunMetaBytes, "run.json")
	if err != nil {
		return nil, err
	}
	if err := strictJSON(b, 8); err != nil {
		return nil, fmt.Errorf("run.json: %w", err)
	}
	var m runMeta
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("run.json: %w", err)
	}
	if m.Run != run {
		return nil, fmt.Errorf("run.json of run %s names run %q", run, m.Run)
	}
	if err := ValidateName(m.Name); err != nil {
		return nil, fmt.Errorf("run.json of run %s: checkpoint %w", run, err)
	}
	return &m, nil
}

// run recovers one run.
func (rc *recoverer) run(run string) (rep RunReport) {
	pub, opt := rc.pub, rc.opt
	rep = RunReport{Run: run, Time: opt.Clock.Now().UTC()}
	lock, err := lockRun(pub, lockName(run), false)
	if isNotExist(err) {
		// Runs of earlier versions kept their lock inside the run directory.
		lock, err = lockRun(pub, runDirName(run)+"/lock", false)
	}
	switch {
	case errors.Is(err, ErrRunActive):
		rep.Outcome = OutcomeActive
		return rep
	case err != nil && !isNotExist(err):
		rep.Error = "lock: " + err.Error()
		return rep
	}
	defer lock.unlock()
	if fi, err := pub.Lstat(runDirName(run)); err != nil || !fi.IsDir() {
		if err == nil {
			err = fmt.Errorf("%w: it is a %s", ErrUnsafePath, fileKind(fi.Mode()))
		}
		rep.Error = "run directory: " + err.Error()
		return rep
	}

	// What the journal says (it may be cut short: uncertain).
	var journal *JournalSummary
	var journalErr error
	meta, metaErr := readRunMeta(pub, run)
	defaultJournal := runDirName(run) + "/journal.ndjson"
	switch {
	case opt.Journal != "":
		jr, err := opt.FS.OpenRoot(filepath.Dir(opt.Journal))
		if err == nil {
			journal, journalErr = readJournalAt(jr, filepath.Base(opt.Journal))
			jr.Close()
		} else {
			journalErr = err
		}
	case metaErr == nil && meta.Journal != "" && meta.Journal != filepath.Join(pub.Path(), filepath.FromSlash(defaultJournal)):
		rep.Notes = append(rep.Notes, fmt.Sprintf("the run kept its journal at %s: pass --journal %s to compare it", meta.Journal, meta.Journal))
	default:
		journal, journalErr = readJournalAt(pub, defaultJournal)
		if isNotExist(journalErr) {
			rep.Notes = append(rep.Notes, "no journal: the publisher died before writing it")
			journal, journalErr = nil, nil
		}
	}
	if journalErr != nil {
		rep.Error = "journal: " + journalErr.Error()
		journal = nil
	}
	if journal != nil && journal.Run != "" && journal.Run != run {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the journal belongs to run %q; ignored", journal.Run))
		journal = nil
	}
	if journal != nil {
		rep.JournalPhase, rep.JournalTerminal = journal.Last, journal.Terminal
		if !journal.Terminal {
			rep.Notes = append(rep.Notes, fmt.Sprintf("journal ends in %q without a terminal receipt: uncertain, outcome taken from the checkpoint directory", journal.Last))
		}
	}
	name := ""
	switch {
	case metaErr == nil:
		name = meta.Name
		if journal != nil && journal.Name != "" && journal.Name != name {
			rep.Notes = append(rep.Notes, fmt.Sprintf("run.json names checkpoint %q, the journal %q", name, journal.Name))
		}
	case journal != nil && ValidateName(journal.Name) == nil:
		name = journal.Name
		rep.Notes = append(rep.Notes, "run.json: "+metaErr.Error()+"; the checkpoint name comes from the journal")
	default:
		if rep.Error == "" {
			rep.Error = "run.json: " + metaErr.Error()
		}
	}
	rep.Name = name

	// Nothing of the run may still be writing.
	rep.Killed, _ = killRunProcesses(run, false, opt.Clock)

	// The publish directory is the truth.
	if name != "" {
		rc.outcome(&rep, name, journal)
	} else {
		rep.Outcome = OutcomeNotPublished
		rep.Notes = append(rep.Notes, "the checkpoint name is unknown: the outcome could not be established from the directory")
	}

	// Staging leftovers, where the run's ID puts them.
	for _, w := range rc.stagingLeft(run) {
		if err := w.root.RemoveAll(w.name); err != nil {
			rep.Error = joinText(rep.Error, "removing staging leftover: "+err.Error())
		} else {
			rep.Removed = append(rep.Removed, w.abs())
			_ = w.root.SyncDir(path.Dir(w.name))
		}
	}
	if metaErr != nil {
		meta = nil
	}
	rc.completeJournal(&rep, journal, meta)
	if metaErr == nil && meta.StagingRoot != "" && !rc.knowsStagingRoot(meta.StagingRoot) {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the run staged under %s: pass --staging-root %s to remove its leftovers there", meta.StagingRoot, meta.StagingRoot))
	}
	if err := writeRecord(pub, runDirName(run), rep); err != nil {
		rep.Error = joinText(rep.Error, "recording recovery: "+err.Error())
	}
	return rep
}

// completeJournal ends the run's nonterminal journal (read as journal
// before the run's processes were killed) with the receipts of the outcome
// recovery established, through the same root machinery as the
// publisher's own receipts: the journal in the run directory beneath the
// publish directory, or, with RecoverOptions.Journal, beneath that
// journal's directory.
func (rc *recoverer) completeJournal(rep *RunReport, journal *JournalSummary, meta *runMeta) {
	if journal == nil || journal.Terminal || rep.Error != "" {
		return
	}
	root, name := rc.pub, runDirName(rep.Run)+"/journal.ndjson"
	if rc.opt.Journal != "" {
		jr, err := rc.opt.FS.OpenRoot(filepath.Dir(rc.opt.Journal))
		if err != nil {
			rep.Error = joinText(rep.Error, "completing the journal: "+err.Error())
			return
		}
		defer jr.Close()
		root, name = jr, filepath.Base(rc.opt.Journal)
	}
	actions, err := completeJournal(root, name, rep, meta, where{rc.pub, runDirName(rep.Run)}.abs(), rc.opt.Clock)
	if err != nil {
		rep.Error = joinText(rep.Error, "completing the journal: "+err.Error())
		return
	}
	rep.Appended = actions
}

func (rc *recoverer) knowsStagingRoot(dir string) bool {
	for _, st := range rc.staging {
		if st.abs() == filepath.Clean(dir) || (st.name == "." && st.root.Path() == filepath.Clean(dir)) {
			return true
		}
	}
	return false
}

func joinText(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// outcome establishes, from the publish directory, whether the checkpoint
// name holds this run's verified checkpoint.
func (rc *recoverer) outcome(rep *RunReport, name string, journal *JournalSummary) {
	rep.Outcome = OutcomeNotPublished
	target := filepath.Join(rc.pub.Path(), name)
	fi, err := rc.pub.Lstat(name)
	switch {
	case isNotExist(err):
	case err != nil:
		rep.Error = joinText(rep.Error, fmt.Sprintf("%s: %v", target, err))
	case !fi.IsDir():
		rep.Notes = append(rep.Notes, fmt.Sprintf("%s is a %s: not this run's checkpoint", target, fileKind(fi.Mode())))
	default:
		m, _, merr := readManifest(rc.pub, name)
		switch {
		case merr != nil:
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s exists without a readable manifest: not this run's", target))
		case m.Run != rep.Run:
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s was published by run %q", target, m.Run))
		default:
			rep.Checkpoint = target
			rep.Digest = m.Digest
			if _, err := verify(rc.ctx, rc.pub, name, verifyOptions{Clock: rc.opt.Clock}); err != nil {
				rep.Outcome = OutcomeUnverified
				rep.Error = joinText(rep.Error, err.Error())
			} else if journal == nil {
				rep.Outcome = OutcomePublished
				rep.Notes = append(rep.Notes, "no journal to compare the checkpoint with: verified against its manifest only")
			} else if err := journalAgrees(journal, m); err != nil {
				rep.Outcome = OutcomeUnverified
				rep.Error = joinText(rep.Error, err.Error())
			} else {
				rep.Outcome = OutcomePublished
			}
		}
	}
	journalSaysPublished := journal != nil && journal.Last == PhasePublished.String()
	if journalSaysPublished && rep.Outcome == OutcomeNotPublished {
		rep.Notes = append(rep.Notes, "the journal says Published but the checkpoint directory does not hold this run's checkpoint")
	}
	if rep.Outcome != OutcomeNotPublished && rep.JournalTerminal && !journalSaysPublished {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the journal says %s but the checkpoint is published", rep.JournalPhase))
	}
}

// journalAgrees checks a published checkpoint's manifest against the
// receipts of the run that published it: the run must have recorded its
// verification (ReloadAndVerify) of exactly this digest, and its
// publication receipt, if written, the same digest. A checkpoint edited
// after publication together with its manifest and digest verifies
// against itself; it does not against the journal.
func journalAgrees(s *JournalSummary, m *Manifest) error {
	if s.Run != m.Run {
		return fmt.Errorf("%w: the journal is run %q, the manifest names run %q", ErrVerification, s.Run, m.Run)
	}
	v, ok := ReceiptDetail[VerifiedDetail](s, ActionReloadAndVerify)
	if !ok {
		return fmt.Errorf("%w: the journal of run %s has no %s receipt: the run never verified a checkpoint", ErrVerification, m.Run, ActionReloadAndVerify)
	}
	if v.Digest != m.Digest {
		return fmt.Errorf("%w: the run verified a checkpoint of digest %s, the published manifest says %s (changed after verification)", ErrVerification, v.Digest, m.Digest)
	}
	if p, ok := ReceiptDetail[PublishedDetail](s, ActionAtomicPublication); ok && p.Digest != m.Digest {
		return fmt.Errorf("%w: the run published a checkpoint of digest %s, the published manifest says %s", ErrVerification, p.Digest, m.Digest)
	}
	return nil
}

// writeRecord replaces dir/recovery.json (dir in root) with rep, durably.
func writeRecord(root Root, dir string, rep RunReport) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	tmp := dir + "/.recovery.json.tmp"
	if err := root.RemoveAll(tmp); err != nil {
		return err
	}
	if err := writeFileSync(root, tmp, append(b, '\n')); err != nil {
		return err
	}
	if err := root.Rename(tmp, dir+"/recovery.json"); err != nil {
		return err
	}
	return root.SyncDir(dir)
}
