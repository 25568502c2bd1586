package checkpoint

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"
)

// MetaDir is the publisher's private directory inside the publish
// directory: run directories (logs, journal, lock) and staging.
const MetaDir = ".tracecheck"

// Environment variables the program (and the verify command) receive.
const (
	EnvStagingDir    = "TRACECHECK_STAGING_DIR"     // where the program writes its checkpoint
	EnvEvalFile      = "TRACECHECK_EVAL_FILE"       // where it writes its evaluation result
	EnvRunID         = "TRACECHECK_RUN_ID"          // the run's ID
	EnvName          = "TRACECHECK_CHECKPOINT_NAME" // the name it will be published under
	EnvCheckpointDir = "TRACECHECK_CHECKPOINT_DIR"  // for the verify command: the staged checkpoint
)

// DefaultGrace is the default time between SIGTERM and SIGKILL.
const DefaultGrace = 5 * time.Second

// Config configures one publication run.
type Config struct {
	// PublishDir is the directory that receives the checkpoint as
	// PublishDir/Name. It is created if missing.
	PublishDir string
	// Name is the checkpoint's name: one path element, not starting with
	// ".", without "/" or NUL.
	Name string
	// Command is the program: e.g. {"python3", "train.py"}.
	Command []string
	// Dir is the program's working directory ("" for the current one).
	Dir string
	// VerifyCommand, if set, runs after the built-in verification with
	// $TRACECHECK_CHECKPOINT_DIR naming the staged checkpoint; a non-zero
	// exit fails verification.
	VerifyCommand []string
	// Journal is the journal file; default PublishDir/.tracecheck/runs/<run>/journal.ndjson.
	// An existing non-empty journal is refused.
	Journal string
	// StagingRoot holds the staging directory; default
	// PublishDir/.tracecheck/staging. It must be on PublishDir's filesystem.
	StagingRoot string
	// Grace is the time between SIGTERM and SIGKILL; default DefaultGrace.
	Grace time.Duration
	// Env is the program's base environment; nil means os.Environ().
	Env []string
	// RunID names the run; default a fresh time-and-random ID.
	RunID string
	// FS, Runner and Clock are the outside world; nil means the real one.
	FS     FS
	Runner Runner
	Clock  Clock
	// Progress, if set, is called during long steps (executing, hashing,
	// verifying), from the run's goroutines, never concurrently.
	Progress func(Progress)
	// Boundary, if set, is called before each transition's work
	// (after=false) and after its receipt (after=true): a hook for tests
	// that interrupt at every boundary. Nil in production.
	Boundary func(action string, after bool)
	// SkipRecovery skips the start-up recovery of earlier runs' leftovers.
	SkipRecovery bool
	// WholeFileSHA256 records every large file's whole-file SHA-256 in the
	// manifest besides its block hashes ([StageOptions.WholeFileSHA256]).
	WholeFileSHA256 bool
	// Live, if set, also shows the program's stdout and stderr as they
	// come (the logs keep them all the same); it never blocks the run.
	Live *LiveOutput
}

// Result is the outcome of a run that started.
type Result struct {
	// RunID is the run's ID, the journal's instance.
	RunID string
	// Outcome is Published, Failed or Interrupted.
	Outcome Phase
	// Actions are the transitions the run took, in order (including any
	// whose receipt could not be written).
	Actions []string
	// Checkpoint is the published directory (Outcome Published only).
	Checkpoint string
	// Manifest is the staged manifest, once staging succeeded.
	Manifest *Manifest
	// Exit is how the program ended, once it ran.
	Exit *Exit
	// Err is why the run failed or was interrupted.
	Err error
	// JournalErr is the first receipt that could not be written, if any.
	JournalErr error
	// Warnings are problems that did not change the outcome (e.g. the
	// publish directory's fsync failed after the rename).
	Warnings []string
	// RunDir holds the logs; Journal is the journal; Staging was the
	// staging directory.
	RunDir, Journal, Staging string
	// StagingRemoved reports that a failed run removed its staging
	// directory.
	StagingRemoved bool
	// StderrTail is the end of the program's stderr (at most 2 KiB, as
	// text) when the program failed: what the ExecutionFails receipt
	// records as stderr_tail, for the caller to show.
	StderrTail string
	// Duration is the run's wall time.
	Duration time.Duration
	// Recovered reports the start-up recovery of earlier runs.
	Recovered []RunReport
}

// Digest returns the published or staged checkpoint's digest, or "".
func (r *Result) Digest() string {
	if r.Manifest == nil {
		return ""
	}
	return r.Manifest.Digest
}

// The publisher's directories inside the publish directory.
const (
	runsDir    = MetaDir + "/runs"    // run directories and their locks
	stagingDir = MetaDir + "/staging" // the default staging root
)

// runDirName is the name, in the publish directory, of run's directory.
func runDirName(run string) string { return runsDir + "/" + run }

func (c *Config) validate() error {
	if c.PublishDir == "" {
		return fmt.Errorf("%w: no publish directory", ErrConfig)
	}
	abs, err := filepath.Abs(c.PublishDir)
	if err != nil {
		return fmt.Errorf("%w: publish directory: %w", ErrConfig, err)
	}
	c.PublishDir = abs
	if err := ValidateName(c.Name); err != nil {
		return err
	}
	if len(c.Command) == 0 || c.Command[0] == "" {
		return fmt.Errorf("%w: no program to run", ErrConfig)
	}
	if c.Grace < 0 {
		return fmt.Errorf("%w: negative grace period %v", ErrConfig, c.Grace)
	}
	if c.Grace == 0 {
		c.Grace = DefaultGrace
	}
	if c.FS == nil {
		c.FS = OSFS{}
	}
	if c.Runner == nil {
		c.Runner = ExecRunner{}
	}
	if c.Clock == nil {
		c.Clock = SystemClock{}
	}
	if c.Env == nil {
		c.Env = os.Environ()
	}
	if c.RunID == "" {
		c.RunID = NewRunID(c.Clock.Now())
	} else if err := ValidateName(c.RunID); err != nil {
		return fmt.Errorf("%w: run ID: %w", ErrConfig, err)
	}
	if c.StagingRoot != "" {
		if c.StagingRoot, err = filepath.Abs(c.StagingRoot); err != nil {
			return fmt.Errorf("%w: staging root: %w", ErrConfig, err)
		}
		if c.StagingRoot == filepath.Join(c.PublishDir, filepath.FromSlash(stagingDir)) {
			c.StagingRoot = "" // the default, named
		} else if nested(c.PublishDir, c.StagingRoot) || nested(c.StagingRoot, c.PublishDir) {
			return fmt.Errorf("%w: staging root %s and publish directory %s overlap: a staging directory would appear as a checkpoint (or the reverse); use a directory beside the publish directory, on its filesystem", ErrConfig, c.StagingRoot, c.PublishDir)
		}
	}
	if c.Journal != "" {
		if c.Journal, err = filepath.Abs(c.Journal); err != nil {
			return fmt.Errorf("%w: journal: %w", ErrConfig, err)
		}
		if fi, err := os.Stat(filepath.Dir(c.Journal)); err != nil || !fi.IsDir() {
			return fmt.Errorf("%w: journal %s: its directory does not exist", ErrConfig, c.Journal)
		}
		if c.StagingRoot != "" && nested(c.StagingRoot, c.Journal) {
			return fmt.Errorf("%w: journal %s is inside the staging root", ErrConfig, c.Journal)
		}
	}
	return nil
}

// nested reports whether inner is outer or lies inside it, comparing the
// paths as given and, where they exist, with their symlinks resolved.
func nested(outer, inner string) bool {
	in := func(o, i string) bool {
		rel, err := filepath.Rel(o, i)
		return err == nil && filepath.IsLocal(rel) || rel == "."
	}
	if in(outer, inner) {
		return true
	}
	ro, err1 := filepath.EvalSymlinks(outer)
	ri, err2 := filepath.EvalSymlinks(inner)
	return err1 == nil && err2 == nil && in(ro, ri)
}

// NewRunID returns a fresh run ID: the UTC time and 6 random hex digits.
func NewRunID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// runMeta is run.json in a run directory: what the run was. Recovery
// reads only the checkpoint name from it (checked like any name); every
// path it acts on is derived from the publish directory and the run ID.
type runMeta struct {
	Run         string    `json:"run"`
	Name        string    `json:"name"`
	PublishDir  string    `json:"publish_dir"`
	StagingRoot string    `json:"staging_root,omitempty"`
	Staging     string    `json:"staging"`
	Journal     string    `json:"journal"`
	Command     []string  `json:"command"`
	PID         int       `json:"publisher_pid"`
	Created     time.Time `json:"created"`
}

// owned is a file the publisher wrote under a directory the program can
// write, and what it wrote: checked after each untrusted process, and put
// back if changed.
type owned struct {
	root Root
	name string
	f    File
	b    []byte
}

// where names a directory by its root and its name there.
type where struct {
	root Root
	name string
}

func (w where) abs() string { return filepath.Join(w.root.Path(), filepath.FromSlash(w.name)) }

// run is one publication in progress. phase, verified and published are
// the publisher's own state; receipts read them.
type run struct {
	cfg       Config
	pub       Root   // the publish directory
	staging   where  // this run's staging directory
	runDir    string // its run directory, in pub
	j         *journal
	lock      *runLock
	meta      owned // run.json
	logs      map[string]*cappedLog
	res       *Result
	phase     Phase
	verified  bool
	published bool
	progMu    sync.Mutex
	closers   []func() error // what close releases
	undos     []func() error // what rollback undoes
}

// Publish runs cfg.Command and publishes its checkpoint as
// cfg.PublishDir/cfg.Name if the program succeeds (see the package
// documentation for the rule) and the staged checkpoint verifies.
//
// An error means the run was refused before it started — invalid
// configuration, a bad name, an existing checkpoint, a missing program, a
// foreign journal, a staging root on another filesystem, an unusable
// publish directory — and nothing was executed or published. Otherwise the
// Result tells the outcome: Published, Failed or Interrupted (when ctx
// ends), with the cause in Result.Err.
func Publish(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("%w before the run started: %w", ErrInterrupted, err)
	}
	if err := lookProgram(cfg.Command, cfg.Dir); err != nil {
		return nil, err
	}
	start := cfg.Clock.Now()
	r := &run{cfg: cfg, res: &Result{RunID: cfg.RunID}, logs: map[string]*cappedLog{}}
	defer r.close()
	if err := r.prepare(ctx); err != nil {
		r.rollback()
		return nil, err
	}
	r.execute(ctx)
	r.res.Duration = cfg.Clock.Now().Sub(start)
	return r.res, nil
}

// release registers what close releases, in reverse order.
func (r *run) release(f func() error) { r.closers = append(r.closers, f) }

// undo registers what rollback undoes if the run is refused before it
// starts, in reverse order.
func (r *run) undo(f func() error) { r.undos = append(r.undos, f) }

// rollback undoes what prepare did before it failed.
func (r *run) rollback() {
	for i := len(r.undos) - 1; i >= 0; i-- {
		_ = r.undos[i]()
	}
	r.undos = nil
}

// close releases the run's descriptors (roots, lock, logs, journal).
func (r *run) close() {
	for i := len(r.closers) - 1; i >= 0; i-- {
		_ = r.closers[i]()
	}
	r.closers = nil
}

// prepare does everything before the program runs, up to the Init
// receipt: the directories, the run's lock, its run directory (run.json
// and the logs, made under a temporary name and renamed complete), the
// journal and the staging directory. An error refuses the run; rollback
// then removes what prepare made.
func (r *run) prepare(ctx context.Context) error {
	cfg, fsys := r.cfg, r.cfg.FS
	if err := fsys.MkdirAll(cfg.PublishDir, 0o755); err != nil {
		return fmt.Errorf("%w: %w", ErrStorage, err)
	}
	pub, err := fsys.OpenRoot(cfg.PublishDir)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrStorage, err)
	}
	r.pub = pub
	r.release(pub.Close)
	st := where{root: pub, name: stagingDir}
	if cfg.StagingRoot != "" {
		if err := fsys.MkdirAll(cfg.StagingRoot, 0o755); err != nil {
			return fmt.Errorf("%w: staging root: %w", ErrStorage, err)
		}
		sr, err := fsys.OpenRoot(cfg.StagingRoot)
		if err != nil {
			return fmt.Errorf("%w: staging root: %w", ErrStorage, err)
		}
		r.release(sr.Close)
		st = where{root: sr, name: "."}
	}
	if !cfg.SkipRecovery {
		reps, err := recoverIn(ctx, pub, RecoverOptions{PublishDir: cfg.PublishDir, FS: fsys, Clock: cfg.Clock, Pending: true}, st)
		if err != nil {
			return fmt.Errorf("start-up recovery: %w", err)
		}
		r.res.Recovered = reps
	}
	if _, err := pub.Lstat(cfg.Name); err == nil {
		return fmt.Errorf("%w: %s exists and is never overwritten", ErrAlreadyPublished, filepath.Join(cfg.PublishDir, cfg.Name))
	} else if !isNotExist(err) {
		return fmt.Errorf("%w: %w", ErrStorage, err)
	}
	_, err = pub.Lstat(runsDir)
	firstRun := isNotExist(err)
	for _, d := range []where{{pub, runsDir}, st} {
		if err := d.root.MkdirAll(d.name, 0o755); err != nil {
			return fmt.Errorf("%w: %w", ErrStorage, err)
		}
	}
	// On the publish directory's first run, the publisher's own
	// directories are new: their names are made durable before any run is
	// recorded in them, or a power cut could keep a published checkpoint
	// and lose its run's journal. Best effort: a failure is a warning.
	if firstRun {
		for _, d := range []string{MetaDir, "."} {
			if err := pub.SyncDir(d); err != nil {
				r.res.Warnings = append(r.res.Warnings, "the publisher's directories may not be durable: "+err.Error())
			}
		}
	}
	if pd, sd := pub.Device(), st.root.Device(); pd != sd {
		return fmt.Errorf("%w: staging root %s (device %d), publish directory %s (device %d); a rename between them cannot be atomic",
			ErrCrossDevice, st.abs(), sd, cfg.PublishDir, pd)
	}

	// The lock exists, held, before the run directory appears, so recovery
	// never mistakes a starting run for a dead one; and the run directory
	// appears under its final name only once complete.
	lock, err := lockRun(pub, lockName(cfg.RunID), true)
	if err != nil {
		if isExist(err) {
			return fmt.Errorf("%w: run ID %s is taken", ErrConfig, cfg.RunID)
		}
		return fmt.Errorf("%w: lock: %w", ErrStorage, err)
	}
	r.lock = lock
	r.release(func() error { lock.unlock(); return nil })
	r.runDir = runDirName(cfg.RunID)
	tmpDir := runsDir + "/.new-" + cfg.RunID
	if err := pub.RemoveAll(tmpDir); err != nil {
		return fmt.Errorf("%w: %w", ErrStorage, err)
	}
	r.undo(func() error { return pub.RemoveAll(tmpDir) })
	if err := pub.MkdirAll(tmpDir, 0o755); err != nil {
		return fmt.Errorf("%w: run directory: %w", ErrStorage, err)
	}
	jw := where{root: pub, name: r.runDir + "/journal.ndjson"}
	if cfg.Journal != "" {
		jr, err := fsys.OpenRoot(filepath.Dir(cfg.Journal))
		if err != nil {
			return fmt.Errorf("%w: journal: %w", ErrStorage, err)
		}
		r.release(jr.Close)
		jw = where{root: jr, name: filepath.Base(cfg.Journal)}
		if owner, err := journalOwner(jr, jw.name); err != nil {
			return fmt.Errorf("%w: journal %s: %w", ErrConfig, cfg.Journal, err)
		} else if owner != "" {
			return fmt.Errorf("%w: %s already holds run %q; a journal records one run", ErrForeignJournal, cfg.Journal, owner)
		}
	}
	r.staging = where{root: st.root, name: path.Join(st.name, cfg.RunID)}
	meta := runMeta{Run: cfg.RunID, Name: cfg.Name, PublishDir: cfg.PublishDir, Staging: r.staging.abs(),
		Journal: jw.abs(), Command: cfg.Command, PID: os.Getpid(), Created: cfg.Clock.Now().UTC()}
	if cfg.StagingRoot != "" {
		meta.StagingRoot = cfg.StagingRoot
	}
	mb, _ := json.MarshalIndent(meta, "", "  ")
	mb = append(mb, '\n')
	mf, err := writeNew(pub, tmpDir+"/run.json", mb)
	if err == nil {
		r.release(func() error { return r.meta.f.Close() })
		err = mf.Sync()
	}
	r.meta = owned{root: pub, name: r.runDir + "/run.json", f: mf, b: mb}
	if err != nil {
		return fmt.Errorf("%w: run.json: %w", ErrStorage, err)
	}
	// The logs are created now, by the publisher, before anything it runs
	// could plant a symlink in their place; their descriptors are kept.
	logNames := []string{"stdout.log", "stderr.log"}
	if len(cfg.VerifyCommand) > 0 {
		logNames = append(logNames, "verify.stdout.log", "verify.stderr.log")
	}
	for _, n := range logNames {
		f, err := pub.OpenFile(tmpDir+"/"+n, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrStorage, n, err)
		}
		r.release(f.Close)
		r.logs[n] = newCappedLog(f, LogHead, LogTail)
	}
	// Complete means durable too: run.json's and the logs' names are
	// fsynced before the directory appears under its final name.
	if err := pub.SyncDir(tmpDir); err != nil {
		return fmt.Errorf("%w: run directory: %w", ErrStorage, err)
	}
	if err := pub.RenameNoReplace(tmpDir, pub, r.runDir); err != nil {
		return fmt.Errorf("%w: run directory: %w", ErrStorage, err)
	}
	r.undos = nil // the run directory is the run's record from now on
	if err := pub.SyncDir(runsDir); err != nil {
		return fmt.Errorf("%w: %w", ErrStorage, err)
	}
	r.res.RunDir, r.res.Journal, r.res.Staging = where{pub, r.runDir}.abs(), jw.abs(), r.staging.abs()

	j, err := openJournal(jw.root, jw.name, cfg.RunID, cfg.Clock)
	if err != nil {
		return err
	}
	r.j = j
	r.release(j.close)
	if err := r.staging.root.MkdirAll(r.staging.name, 0o755); err != nil {
		return fmt.Errorf("%w: staging directory: %w", ErrStorage, err)
	}
	r.undo(func() error { return r.staging.root.RemoveAll(r.staging.name) })
	if err := j.header(); err != nil {
		return err
	}
	return j.emit(ActionInit, r.phase, false, false, InitDetail{Run: cfg.RunID, Name: cfg.Name,
		PublishDir: cfg.PublishDir, StagingDir: r.res.Staging, RunDir: r.res.RunDir, Command: cfg.Command})
}

// before calls the Boundary hook before the work of the transition that
// event e would cause.
func (r *run) before(e event) {
	if r.cfg.Boundary != nil {
		if action, _, ok := decide(r.phase, e); ok {
			r.cfg.Boundary(action, false)
		}
	}
}

// advance records the transition that the success of the current phase's
// work causes (decide(phase, evDone)), reading the publisher's state.
func (r *run) advance(detail any) error {
	action, to, ok := decide(r.phase, evDone)
	if !ok {
		return fmt.Errorf("checkpoint: no transition from %s on success", r.phase) // unreachable: execute's order
	}
	return r.step(action, to, detail)
}

// step moves to phase `to` by action and writes its receipt, reading the
// publisher's state.
func (r *run) step(action string, to Phase, detail any) error {
	r.phase = to
	r.res.Actions = append(r.res.Actions, action)
	err := r.j.emit(action, r.phase, r.verified, r.published, detail)
	if err != nil && r.res.JournalErr == nil {
		r.res.JournalErr = err
	}
	if r.cfg.Boundary != nil {
		r.cfg.Boundary(action, true)
	}
	return err
}

// end ends the run by the failure or interrupt transition that e causes in
// the current phase, after removing the staging directory. detail says how
// the program ended, when it has just run.
func (r *run) end(e event, cause error, detail EndDetail) {
	action, to, ok := decide(r.phase, e)
	if !ok {
		return // unreachable: execute ends runs only from Running, Staging, Verified
	}
	r.before(e)
	detail.Error = cause.Error()
	if err := r.staging.root.RemoveAll(r.staging.name); err != nil {
		detail.StagingError = err.Error()
		r.res.Warnings = append(r.res.Warnings, "staging not removed: "+err.Error())
	} else {
		detail.StagingRemoved = true
		r.res.StagingRemoved = true
	}
	r.res.Outcome = to
	r.res.Err = cause
	r.res.StderrTail = detail.StderrTail
	_ = r.step(action, to, detail)
}

func (r *run) progress(p Progress) {
	if r.cfg.Progress == nil {
		return
	}
	r.progMu.Lock()
	defer r.progMu.Unlock()
	r.cfg.Progress(p)
}

// checkOwned checks, once the program or the verify command and all their
// descendants are gone, that the publisher's own files under the publish
// directory are as it left them: the journal, run.json and the run's lock.
// What was changed is put back (so the journal stays the run's true
// record) and reported as an error wrapping [ErrTampered].
func (r *run) checkOwned() error {
	var errs []error
	if err := r.j.check(); errors.Is(err, ErrTampered) {
		errs = append(errs, err)
		if rerr := r.j.restore(); rerr != nil {
			errs = append(errs, rerr)
		}
	} else if err != nil {
		errs = append(errs, err)
	}
	if err := checkOwned(r.meta.root, r.meta.name, r.meta.f, r.meta.b); errors.Is(err, ErrTampered) {
		errs = append(errs, err)
		if f, rerr := replaceOwned(r.meta.root, r.meta.name, r.meta.b); rerr != nil {
			errs = append(errs, rerr)
		} else {
			r.meta.f.Close()
			r.meta.f = f
		}
	} else if err != nil {
		errs = append(errs, err)
	}
	if err := r.lock.check(r.pub, lockName(r.cfg.RunID)); err != nil {
		errs = append(errs, err)
		if errors.Is(err, ErrTampered) && r.pub.RemoveAll(lockName(r.cfg.RunID)) == nil {
			if l, err := lockRun(r.pub, lockName(r.cfg.RunID), true); err == nil {
				r.lock.unlock()
				*r.lock = *l
			}
		}
	}
	if len(errs) == 0 {
		return nil
	}
	return errors.Join(errs...)
}

// runProcess runs one untrusted process (the program, or the verify
// command) with its output in the logs named prefix+"stdout.log" and
// prefix+"stderr.log", and then checks the publisher's own files.
func (r *run) runProcess(ctx context.Context, argv []string, env []string, prefix, step string, started func(int) error) (Exit, error, error) {
	stdout, stderr := r.logs[prefix+"stdout.log"], r.logs[prefix+"stderr.log"]
	proc := Process{Argv: argv, Env: env, Dir: r.cfg.Dir, Grace: r.cfg.Grace, Stdout: stdout, Stderr: stderr, Run: r.cfg.RunID}
	if r.cfg.Live != nil && prefix == "" {
		proc.Stdout = io.MultiWriter(stdout, r.cfg.Live.Writer("stdout"))
		proc.Stderr = io.MultiWriter(stderr, r.cfg.Live.Writer("stderr"))
	}
	stop := r.ticker(step)
	exit, err := r.cfg.Runner.Run(ctx, proc, started)
	stop()
	for _, l := range []*cappedLog{stdout, stderr} {
		if l == nil {
			continue
		}
		if cerr := l.Close(); cerr != nil {
			r.res.Warnings = append(r.res.Warnings, "log not written: "+cerr.Error())
		}
		if d := l.Dropped(); d > 0 {
			r.res.Warnings = append(r.res.Warnings, fmt.Sprintf("%s: %d bytes of output dropped (the log keeps the first and last %s)", step, d, sizeText(LogTail)))
		}
	}
	var tampered error
	if err == nil || !errors.Is(err, ErrStart) {
		tampered = r.checkOwned()
	}
	return exit, err, tampered
}

// execute is the run after Init: every path ends in one terminal phase.
func (r *run) execute(ctx context.Context) {
	cfg := r.cfg
	evalName := r.runDir + "/eval.json"
	env := append(append([]string(nil), cfg.Env...),
		EnvStagingDir+"="+r.res.Staging, EnvEvalFile+"="+where{r.pub, evalName}.abs(),
		EnvRunID+"="+cfg.RunID, EnvName+"="+cfg.Name)

	r.before(evDone)
	exit, err, tampered := r.runProcess(ctx, cfg.Command, env, "", "executing", func(pid int) error {
		return r.advance(ExecuteDetail{PID: pid, Command: cfg.Command})
	})
	if err == nil || r.phase == PhaseRunning {
		r.res.Exit = &exit
	}
	ended := EndDetail{ProcessEnd: processEnd(exit)}
	failed := ended
	failed.StderrTail = r.logs["stderr.log"].Tail(2048)
	switch {
	case err != nil && r.phase == PhaseReady:
		// The attempt to execute is recorded, then its failure.
		if r.advance(ExecuteDetail{Command: cfg.Command, Error: err.Error()}) != nil {
			r.end(evFailed, r.res.JournalErr, EndDetail{})
			return
		}
		r.end(evFailed, err, EndDetail{})
		return
	case exit.Interrupted:
		r.end(evInterrupted, fmt.Errorf("%w while the program ran", ErrInterrupted), ended)
		return
	case tampered != nil:
		r.end(evFailed, tampered, ended)
		return
	case err != nil:
		r.end(evFailed, err, ended)
		return
	case exit.Code != 0:
		cause := fmt.Errorf("%w: exit status %d", ErrProgramFailed, exit.Code)
		if exit.Signal != "" {
			cause = fmt.Errorf("%w: killed by %s", ErrProgramFailed, exit.Signal)
		}
		r.end(evFailed, cause, failed)
		return
	}

	r.before(evDone)
	ev, err := r.successRule(evalName)
	if err != nil {
		r.end(evFailed, err, failed)
		return
	}
	if ctx.Err() != nil {
		r.end(evInterrupted, fmt.Errorf("%w after the program ended", ErrInterrupted), EndDetail{})
		return
	}
	d := SucceedDetail{ExitCode: 0, OrphansKilled: len(exit.Orphans)}
	if len(ev.Raw) <= maxReceiptEval {
		d.Eval = ev.Raw
	} else {
		sum := sha256.Sum256(ev.Raw)
		d.EvalSHA256, d.EvalBytes = hex.EncodeToString(sum[:]), len(ev.Raw)
	}
	if err := r.advance(d); err != nil {
		r.end(evFailed, err, EndDetail{})
		return
	}

	// Staging: manifest, fsyncs. The files' fsyncs run while staging hashes
	// them and verification re-reads them; all are complete before the
	// Verified receipt. The verify command, which could write, runs before
	// the verification: what is verified last is what is published.
	sy := newSyncer()
	m, mb, err := stage(ctx, r.staging.root, r.staging.name, StageOptions{Run: cfg.RunID, Name: cfg.Name, Eval: ev.Raw,
		Clock: cfg.Clock, Progress: r.progress, WholeFileSHA256: cfg.WholeFileSHA256}, sy)
	if err == nil {
		r.res.Manifest = m
		r.before(evDone)
		err = r.verifyCommand(ctx)
	}
	if err == nil {
		m, err = verify(ctx, r.staging.root, r.staging.name, verifyOptions{Progress: r.progress, Want: mb, Clock: cfg.Clock})
	}
	if serr := sy.wait(); serr != nil && err == nil {
		err = fmt.Errorf("%w: %w", ErrSave, serr)
	}
	if err != nil {
		if ctx.Err() != nil || errors.Is(err, ErrInterrupted) {
			r.end(evInterrupted, fmt.Errorf("%w while staging: %w", ErrInterrupted, err), EndDetail{})
		} else {
			r.end(evFailed, err, EndDetail{})
		}
		return
	}
	r.verified = true
	if err := r.advance(VerifiedDetail{Digest: m.Digest, Files: len(m.Files), Bytes: m.Bytes()}); err != nil {
		r.end(evFailed, err, EndDetail{})
		return
	}

	r.before(evDone)
	if ctx.Err() != nil {
		r.end(evInterrupted, fmt.Errorf("%w before publication", ErrInterrupted), EndDetail{})
		return
	}
	target := filepath.Join(cfg.PublishDir, cfg.Name)
	if err := r.staging.root.RenameNoReplace(r.staging.name, r.pub, cfg.Name); err != nil {
		cause := fmt.Errorf("%w: %w", ErrPublication, err)
		if isExist(err) {
			cause = fmt.Errorf("%w: %w: %s appeared during the run", ErrPublication, ErrAlreadyPublished, target)
		}
		r.end(evFailed, cause, EndDetail{})
		return
	}
	// The rename is the completion boundary: from here on, published.
	r.published = true
	r.res.Outcome = PhasePublished
	r.res.Checkpoint = target
	detail := PublishedDetail{Path: target, Digest: m.Digest, Durable: true}
	if err := r.pub.SyncDir("."); err != nil {
		detail.Durable, detail.Error = false, err.Error()
		r.res.Warnings = append(r.res.Warnings, "published, but the publish directory's fsync failed: "+err.Error())
	}
	_ = r.staging.root.SyncDir(path.Dir(r.staging.name))
	_ = r.advance(detail)
}

// maxReceiptEval is the largest evaluation result a receipt carries whole;
// a larger one is recorded by its SHA-256 (the manifest has it whole).
const maxReceiptEval = 64 << 10

// successRule applies the documented rule after exit status 0 and returns
// the evaluation result. The evaluation file is read through no symlink,
// without blocking (a FIFO is refused), at most [MaxEvalBytes] of it, and
// parsed strictly ([ParseEval]); the staging directory must be a directory
// (not a symlink) holding something.
func (r *run) successRule(evalName string) (*EvalResult, error) {
	f, err := r.pub.OpenFile(evalName, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: no evaluation result at $%s: %w", ErrEvaluation, EnvEvalFile, err)
	}
	b, err := readBounded(f, MaxEvalBytes, "the evaluation result")
	f.Close()
	if err != nil {
		if errors.Is(err, ErrTooLarge) {
			return nil, fmt.Errorf("%w: %w (the limit is 1 MiB)", ErrEvaluation, err)
		}
		return nil, fmt.Errorf("%w: %w", ErrEvaluation, err)
	}
	ev, err := ParseEval(b)
	if err != nil {
		return nil, err
	}
	fi, err := r.staging.root.Lstat(r.staging.name)
	switch {
	case isNotExist(err):
		return nil, fmt.Errorf("%w: $%s was removed", ErrEmptyCheckpoint, EnvStagingDir)
	case err != nil:
		return nil, fmt.Errorf("%w: $%s: %w", ErrUnsafeFile, EnvStagingDir, err)
	case !fi.IsDir():
		return nil, fmt.Errorf("%w: $%s was replaced by a %s (only a directory is staged; symlinks are never followed)", ErrUnsafeFile, EnvStagingDir, fileKind(fi.Mode()))
	}
	ents, err := r.staging.root.ReadDir(r.staging.name, 1<<20)
	if err != nil && !errors.Is(err, ErrTooLarge) {
		return nil, fmt.Errorf("%w: %w", ErrEmptyCheckpoint, err)
	}
	if err == nil && len(ents) == 0 {
		return nil, fmt.Errorf("%w: $%s is empty", ErrEmptyCheckpoint, EnvStagingDir)
	}
	return ev, nil
}

// verifyCommand runs the user's verify command, if any, on the staged
// checkpoint. It runs before the final verification, which then checks
// that the command changed nothing.
func (r *run) verifyCommand(ctx context.Context) error {
	if len(r.cfg.VerifyCommand) == 0 {
		return nil
	}
	env := append(append([]string(nil), r.cfg.Env...), EnvCheckpointDir+"="+r.res.Staging, EnvRunID+"="+r.cfg.RunID, EnvName+"="+r.cfg.Name)
	exit, err, tampered := r.runProcess(ctx, r.cfg.VerifyCommand, env, "verify.", "verifying", nil)
	switch {
	case exit.Interrupted:
		return fmt.Errorf("%w: verify command interrupted", ErrInterrupted)
	case tampered != nil:
		return fmt.Errorf("%w: by the verify command: %w", ErrVerification, tampered)
	case err != nil:
		return fmt.Errorf("%w: %w", ErrVerifyCommand, err)
	case exit.Code != 0:
		return fmt.Errorf("%w: %s exited %d: %s", ErrVerifyCommand, strings.Join(r.cfg.VerifyCommand, " "), exit.Code, r.logs["verify.stderr.log"].Tail(512))
	}
	return nil
}

// ticker reports progress of a step of unknown length every second.
func (r *run) ticker(step string) (stop func()) {
	if r.cfg.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	start := r.cfg.Clock.Now()
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Second)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				r.progress(Progress{Step: step, Elapsed: now.Sub(start)})
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}
