package checkpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Recovered outcomes: what recovery found a run's real outcome to be.
const (
	// OutcomePublished: the run's checkpoint is in the publish directory,
	// its manifest names the run, and it verifies against the manifest.
	OutcomePublished = "published-and-verified"
	// OutcomeNotPublished: no checkpoint of this run is published.
	OutcomeNotPublished = "not-published"
	// OutcomeUnverified: a checkpoint whose manifest names this run is
	// published but does not verify (modified after publication). Never
	// reported as published-and-verified.
	OutcomeUnverified = "published-but-fails-verification"
	// OutcomeActive: the run's publisher is alive; it was left alone.
	OutcomeActive = "active"
)

// RunReport is what recovery found and did for one run.
type RunReport struct {
	// Run is the run's ID; Name the checkpoint name it publishes under.
	Run  string `json:"run"`
	Name string `json:"name,omitempty"`
	// Outcome is OutcomePublished, OutcomeNotPublished, OutcomeUnverified
	// or OutcomeActive.
	Outcome string `json:"outcome"`
	// Checkpoint and Digest describe the published checkpoint, if any.
	Checkpoint string `json:"checkpoint,omitempty"`
	Digest     string `json:"digest,omitempty"`
	// JournalPhase is the phase of the journal's last receipt;
	// JournalTerminal whether it ends the run. A nonterminal journal is
	// uncertain: the outcome then comes from the checkpoint directory.
	JournalPhase    string `json:"journal_phase,omitempty"`
	JournalTerminal bool   `json:"journal_terminal"`
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
	// be a run of PublishDir ([ErrForeignJournal] otherwise).
	Journal string
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
// from the publish directory, verified against the manifest, never guessed
// from a nonterminal journal — kills the run's leftover processes, removes
// its staging leftovers, and records what it did in the run directory's
// recovery.json. Runs whose publisher still holds the lock are reported
// active and left alone.
func Recover(ctx context.Context, opt RecoverOptions) ([]RunReport, error) {
	if opt.PublishDir == "" {
		return nil, fmt.Errorf("%w: no publish directory", ErrConfig)
	}
	pub, err := filepath.Abs(opt.PublishDir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	opt.PublishDir = pub
	if opt.FS == nil {
		opt.FS = OSFS{}
	}
	if opt.Clock == nil {
		opt.Clock = SystemClock{}
	}
	if fi, err := opt.FS.Lstat(pub); err != nil || !fi.IsDir() {
		if err == nil {
			err = errors.New("not a directory")
		}
		return nil, fmt.Errorf("%w: publish directory %s: %w", ErrConfig, pub, err)
	}
	runs := filepath.Join(pub, MetaDir, "runs")
	if opt.Journal != "" {
		dir, err := journalRunDir(opt, runs)
		if err != nil {
			return nil, err
		}
		return []RunReport{recoverRun(ctx, opt, dir)}, nil
	}
	ents, err := opt.FS.ReadDir(runs)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	var out []RunReport
	for _, e := range ents {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		dir := filepath.Join(runs, e.Name())
		if strings.HasPrefix(e.Name(), ".new-") {
			// A publisher that died while creating its run directory.
			if l, err := lockRun(filepath.Join(dir, "lock")); err == nil {
				_ = opt.FS.RemoveAll(dir)
				l.unlock()
			}
			continue
		}
		if !e.IsDir() || strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if opt.Pending && settled(opt.FS, dir) {
			continue
		}
		out = append(out, recoverRun(ctx, opt, dir))
	}
	return out, nil
}

// settled reports whether a run needs no recovery: its journal is
// terminal or it was recovered before, and it has no staging directory.
func settled(fsys FS, dir string) bool {
	meta, err := readRunMeta(fsys, dir)
	if err != nil {
		return false
	}
	if _, err := fsys.Lstat(meta.Staging); !errors.Is(err, fs.ErrNotExist) {
		return false
	}
	if _, err := fsys.Lstat(filepath.Join(dir, "recovery.json")); err == nil {
		return true
	}
	f, err := fsys.OpenFile(meta.Journal, os.O_RDONLY, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	s, err := ReadJournal(f)
	return err == nil && s.Terminal && s.Run == meta.Run
}

// journalRunDir finds the run directory of the journal opt.Journal.
func journalRunDir(opt RecoverOptions, runs string) (string, error) {
	f, err := opt.FS.OpenFile(opt.Journal, os.O_RDONLY, 0)
	if err != nil {
		return "", fmt.Errorf("%w: journal: %w", ErrConfig, err)
	}
	s, err := ReadJournal(f)
	f.Close()
	if err != nil {
		return "", err
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
	dir := filepath.Join(runs, s.Run)
	meta, err := readRunMeta(opt.FS, dir)
	if err != nil {
		return "", fmt.Errorf("%w: journal %s is run %q, which is not a run of %s: %w", ErrForeignJournal, opt.Journal, s.Run, opt.PublishDir, err)
	}
	abs, _ := filepath.Abs(opt.Journal)
	if meta.Journal != abs {
		return "", fmt.Errorf("%w: run %q of %s keeps its journal at %s, not %s", ErrForeignJournal, s.Run, opt.PublishDir, meta.Journal, abs)
	}
	return dir, nil
}

func readRunMeta(fsys FS, dir string) (*runMeta, error) {
	f, err := fsys.OpenFile(filepath.Join(dir, "run.json"), os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var m runMeta
	if err := json.NewDecoder(f).Decode(&m); err != nil {
		return nil, fmt.Errorf("run.json: %w", err)
	}
	if m.Run != filepath.Base(dir) || ValidateName(m.Run) != nil || ValidateName(m.Name) != nil {
		return nil, fmt.Errorf("run.json of %s names run %q, checkpoint %q", dir, m.Run, m.Name)
	}
	return &m, nil
}

func recoverRun(ctx context.Context, opt RecoverOptions, dir string) (rep RunReport) {
	fsys := opt.FS
	rep = RunReport{Run: filepath.Base(dir), Time: opt.Clock.Now().UTC()}
	lock, err := lockRun(filepath.Join(dir, "lock"))
	if errors.Is(err, ErrRunActive) {
		rep.Outcome = OutcomeActive
		return rep
	}
	if err != nil {
		rep.Error = err.Error()
		return rep
	}
	defer lock.unlock()
	meta, err := readRunMeta(fsys, dir)
	if err != nil {
		rep.Error = err.Error()
		return rep
	}
	rep.Name = meta.Name
	if meta.PublishDir != opt.PublishDir {
		rep.Notes = append(rep.Notes, fmt.Sprintf("run.json names publish directory %s", meta.PublishDir))
	}

	// What the journal says (it may be cut short: uncertain).
	journalSaysPublished := false
	if f, err := fsys.OpenFile(meta.Journal, os.O_RDONLY, 0); err != nil {
		rep.Notes = append(rep.Notes, "journal unreadable: "+err.Error())
	} else {
		s, err := ReadJournal(f)
		f.Close()
		switch {
		case err != nil:
			rep.Notes = append(rep.Notes, "journal: "+err.Error())
		case s.Run != "" && s.Run != meta.Run:
			rep.Notes = append(rep.Notes, fmt.Sprintf("journal %s belongs to run %q; ignored", meta.Journal, s.Run))
		default:
			rep.JournalPhase, rep.JournalTerminal = s.Last, s.Terminal
			journalSaysPublished = s.Last == PhasePublished.String()
			if !s.Terminal {
				rep.Notes = append(rep.Notes, fmt.Sprintf("journal ends in %q without a terminal receipt: uncertain, outcome taken from the checkpoint directory", s.Last))
			}
		}
	}

	// Nothing of the run may still be writing.
	rep.Killed = killRunProcesses(meta.Run)

	// The publish directory is the truth.
	rep.Outcome = OutcomeNotPublished
	target := filepath.Join(opt.PublishDir, meta.Name)
	if _, err := fsys.Lstat(target); err == nil {
		m, merr := ReadManifest(fsys, target)
		switch {
		case merr != nil:
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s exists without a readable manifest: not this run's", target))
		case m.Run != meta.Run:
			rep.Notes = append(rep.Notes, fmt.Sprintf("%s was published by run %q", target, m.Run))
		default:
			rep.Checkpoint = target
			rep.Digest = m.Digest
			if _, err := Verify(ctx, fsys, target, nil); err != nil {
				rep.Outcome = OutcomeUnverified
				rep.Error = err.Error()
			} else {
				rep.Outcome = OutcomePublished
			}
		}
	}
	if journalSaysPublished && rep.Outcome == OutcomeNotPublished {
		rep.Notes = append(rep.Notes, "the journal says Published but the checkpoint directory does not hold this run's checkpoint")
	}
	if rep.Outcome != OutcomeNotPublished && rep.JournalTerminal && !journalSaysPublished {
		rep.Notes = append(rep.Notes, fmt.Sprintf("the journal says %s but the checkpoint is published", rep.JournalPhase))
	}

	// Staging leftovers.
	if filepath.Base(meta.Staging) == meta.Run && meta.Staging != target {
		if _, err := fsys.Lstat(meta.Staging); err == nil {
			if err := fsys.RemoveAll(meta.Staging); err != nil {
				rep.Error = "removing staging leftover: " + err.Error()
			} else {
				rep.Removed = append(rep.Removed, meta.Staging)
				_ = fsys.SyncDir(filepath.Dir(meta.Staging))
			}
		}
	}
	if err := writeRecord(fsys, dir, rep); err != nil && rep.Error == "" {
		rep.Error = "recording recovery: " + err.Error()
	}
	return rep
}

// writeRecord replaces dir/recovery.json with rep, durably.
func writeRecord(fsys FS, dir string, rep RunReport) error {
	b, err := json.MarshalIndent(rep, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, ".recovery.json.tmp")
	_ = fsys.RemoveAll(tmp)
	if err := writeFileSync(fsys, tmp, append(b, '\n')); err != nil {
		return err
	}
	if err := fsys.Rename(tmp, filepath.Join(dir, "recovery.json")); err != nil {
		return err
	}
	return fsys.SyncDir(dir)
}

// killRunProcesses SIGKILLs every process whose environment carries this
// run's TRACECHECK_RUN_ID: children of a dead publisher that escaped
// Pdeathsig. It returns their PIDs.
func killRunProcesses(run string) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	needle := []byte("\x00" + EnvRunID + "=" + run + "\x00")
	self := os.Getpid()
	var killed []int
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(append(append([]byte{0}, env...), 0), needle) {
			continue
		}
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed = append(killed, pid)
		}
	}
	sort.Ints(killed)
	return killed
}
