package checkpoint

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
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

// ValidateName checks a checkpoint name: one path element that is not "."
// or "..", does not start with ".", holds no "/", NUL or control character,
// and is at most 200 bytes.
func ValidateName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty", ErrBadName)
	case name == "." || name == "..":
		return fmt.Errorf("%w: %q", ErrBadName, name)
	case strings.Contains(name, "/"):
		return fmt.Errorf("%w: %q contains \"/\"", ErrBadName, name)
	case strings.HasPrefix(name, "."):
		return fmt.Errorf("%w: %q starts with \".\" (reserved for the publisher)", ErrBadName, name)
	case len(name) > 200:
		return fmt.Errorf("%w: %d bytes, at most 200", ErrBadName, len(name))
	}
	for _, r := range name {
		if r < 0x20 || r == 0x7f {
			return fmt.Errorf("%w: %q contains a control character", ErrBadName, name)
		}
	}
	return nil
}

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
	if c.StagingRoot == "" {
		c.StagingRoot = filepath.Join(c.PublishDir, MetaDir, "staging")
	} else if c.StagingRoot, err = filepath.Abs(c.StagingRoot); err != nil {
		return fmt.Errorf("%w: staging root: %w", ErrConfig, err)
	}
	if c.Journal != "" {
		if c.Journal, err = filepath.Abs(c.Journal); err != nil {
			return fmt.Errorf("%w: journal: %w", ErrConfig, err)
		}
		if fi, err := c.FS.Lstat(filepath.Dir(c.Journal)); err != nil || !fi.IsDir() {
			return fmt.Errorf("%w: journal %s: its directory does not exist", ErrConfig, c.Journal)
		}
	}
	return nil
}

// NewRunID returns a fresh run ID: the UTC time and 6 random hex digits.
func NewRunID(now time.Time) string {
	var b [3]byte
	_, _ = rand.Read(b[:])
	return now.UTC().Format("20060102T150405Z") + "-" + hex.EncodeToString(b[:])
}

// runMeta is run.json in a run directory: where recovery finds the run.
type runMeta struct {
	Run        string    `json:"run"`
	Name       string    `json:"name"`
	PublishDir string    `json:"publish_dir"`
	Staging    string    `json:"staging"`
	Journal    string    `json:"journal"`
	Command    []string  `json:"command"`
	PID        int       `json:"publisher_pid"`
	Created    time.Time `json:"created"`
}

// run is one publication in progress. phase, verified and published are
// the publisher's own state; receipts read them.
type run struct {
	cfg       Config
	fsys      FS
	j         *journal
	res       *Result
	phase     Phase
	verified  bool
	published bool
	progMu    sync.Mutex
}

// Publish runs cfg.Command and publishes its checkpoint as
// cfg.PublishDir/cfg.Name if the program succeeds (see the package
// documentation for the rule) and the staged checkpoint verifies.
//
// An error means the run was refused before it started — invalid
// configuration, a bad name, an existing checkpoint, a missing program, a
// foreign journal, a staging root on another filesystem, an unwritable
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
	start := time.Now()
	fsys := cfg.FS
	if err := lookProgram(cfg.Command, cfg.Dir); err != nil {
		return nil, err
	}
	if err := fsys.MkdirAll(cfg.PublishDir, 0o755); err != nil {
		return nil, fmt.Errorf("%w: publish directory: %w", ErrConfig, err)
	}
	res := &Result{RunID: cfg.RunID}
	if !cfg.SkipRecovery {
		reps, err := Recover(ctx, RecoverOptions{PublishDir: cfg.PublishDir, FS: fsys, Clock: cfg.Clock, Pending: true})
		if err != nil {
			return nil, fmt.Errorf("start-up recovery: %w", err)
		}
		res.Recovered = reps
	}
	target := filepath.Join(cfg.PublishDir, cfg.Name)
	if _, err := fsys.Lstat(target); err == nil {
		return nil, fmt.Errorf("%w: %s exists and is never overwritten", ErrAlreadyPublished, target)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s: %w", ErrConfig, target, err)
	}
	runs := filepath.Join(cfg.PublishDir, MetaDir, "runs")
	for _, d := range []string{runs, cfg.StagingRoot} {
		if err := fsys.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrConfig, err)
		}
	}
	pd, err := fsys.Device(cfg.PublishDir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	sd, err := fsys.Device(cfg.StagingRoot)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	if pd != sd {
		return nil, fmt.Errorf("%w: staging root %s (device %d), publish directory %s (device %d); a rename between them cannot be atomic",
			ErrCrossDevice, cfg.StagingRoot, sd, cfg.PublishDir, pd)
	}

	// The run directory appears under its final name only once locked, so
	// recovery never mistakes a starting run for a dead one.
	runDir := filepath.Join(runs, cfg.RunID)
	tmpDir := filepath.Join(runs, ".new-"+cfg.RunID)
	if err := fsys.MkdirAll(tmpDir, 0o755); err != nil {
		return nil, fmt.Errorf("%w: run directory: %w", ErrConfig, err)
	}
	lock, err := lockRun(filepath.Join(tmpDir, "lock"))
	if err != nil {
		_ = fsys.RemoveAll(tmpDir)
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	defer lock.unlock()
	journalPath := cfg.Journal
	if journalPath == "" {
		journalPath = filepath.Join(runDir, "journal.ndjson")
	} else if owner, err := journalOwner(fsys, journalPath); err != nil {
		_ = fsys.RemoveAll(tmpDir)
		return nil, fmt.Errorf("%w: journal %s: %w", ErrConfig, journalPath, err)
	} else if owner != "" {
		_ = fsys.RemoveAll(tmpDir)
		return nil, fmt.Errorf("%w: %s already holds run %q; a journal records one run", ErrForeignJournal, journalPath, owner)
	}
	staging := filepath.Join(cfg.StagingRoot, cfg.RunID)
	meta := runMeta{Run: cfg.RunID, Name: cfg.Name, PublishDir: cfg.PublishDir, Staging: staging,
		Journal: journalPath, Command: cfg.Command, PID: os.Getpid(), Created: cfg.Clock.Now().UTC()}
	mb, _ := json.MarshalIndent(meta, "", "  ")
	if err := writeFileSync(fsys, filepath.Join(tmpDir, "run.json"), append(mb, '\n')); err != nil {
		_ = fsys.RemoveAll(tmpDir)
		return nil, fmt.Errorf("%w: run.json: %w", ErrConfig, err)
	}
	if err := fsys.RenameNoReplace(tmpDir, runDir); err != nil {
		_ = fsys.RemoveAll(tmpDir)
		return nil, fmt.Errorf("%w: run directory: %w", ErrConfig, err)
	}
	if err := fsys.SyncDir(runs); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrConfig, err)
	}
	res.RunDir, res.Journal, res.Staging = runDir, journalPath, staging

	j, err := openJournal(fsys, journalPath, cfg.RunID, cfg.Clock)
	if err != nil {
		return nil, err
	}
	defer j.close()
	if err := fsys.MkdirAll(staging, 0o755); err != nil {
		return nil, fmt.Errorf("%w: staging directory: %w", ErrConfig, err)
	}
	r := &run{cfg: cfg, fsys: fsys, j: j, res: res}
	err = j.emit(ActionInit, r.phase, false, false, map[string]any{
		"run": cfg.RunID, "name": cfg.Name, "publish_dir": cfg.PublishDir, "staging_dir": staging,
		"run_dir": runDir, "command": cfg.Command,
	})
	if err != nil {
		_ = fsys.RemoveAll(staging)
		return nil, err
	}
	r.execute(ctx)
	res.Duration = time.Since(start)
	return res, nil
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
func (r *run) advance(detail map[string]any) error {
	action, to, ok := decide(r.phase, evDone)
	if !ok {
		return fmt.Errorf("checkpoint: no transition from %s on success", r.phase) // unreachable: execute's order
	}
	return r.step(action, to, detail)
}

// step moves to phase `to` by action and writes its receipt, reading the
// publisher's state.
func (r *run) step(action string, to Phase, detail map[string]any) error {
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
// the current phase, after removing the staging directory.
func (r *run) end(e event, cause error, detail map[string]any) {
	action, to, ok := decide(r.phase, e)
	if !ok {
		return // unreachable: execute ends runs only from Running, Staging, Verified
	}
	r.before(e)
	if detail == nil {
		detail = map[string]any{}
	}
	detail["error"] = cause.Error()
	if err := r.fsys.RemoveAll(r.res.Staging); err != nil {
		detail["staging_removed"] = false
		detail["staging_error"] = err.Error()
		r.res.Warnings = append(r.res.Warnings, "staging not removed: "+err.Error())
	} else {
		detail["staging_removed"] = true
		r.res.StagingRemoved = true
	}
	r.res.Outcome = to
	r.res.Err = cause
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

// execute is the run after Init: every path ends in one terminal phase.
func (r *run) execute(ctx context.Context) {
	cfg := r.cfg
	evalFile := filepath.Join(r.res.RunDir, "eval.json")
	env := append(append([]string(nil), cfg.Env...),
		EnvStagingDir+"="+r.res.Staging, EnvEvalFile+"="+evalFile,
		EnvRunID+"="+cfg.RunID, EnvName+"="+cfg.Name)
	proc := Process{Argv: cfg.Command, Env: env, Dir: cfg.Dir, Grace: cfg.Grace,
		Stdout: filepath.Join(r.res.RunDir, "stdout.log"), Stderr: filepath.Join(r.res.RunDir, "stderr.log")}

	r.before(evDone)
	stop := r.ticker("executing")
	exit, err := cfg.Runner.Run(ctx, proc, func(pid int) error {
		return r.advance(map[string]any{"pid": pid, "command": cfg.Command})
	})
	stop()
	if err == nil || r.phase == PhaseRunning {
		r.res.Exit = &exit
	}
	switch {
	case err != nil && r.phase == PhaseReady:
		// The attempt to execute is recorded, then its failure.
		if r.advance(map[string]any{"command": cfg.Command, "error": err.Error()}) != nil {
			r.end(evFailed, r.res.JournalErr, nil)
			return
		}
		r.end(evFailed, err, nil)
		return
	case err != nil:
		r.end(evFailed, err, exitDetail(exit))
		return
	case exit.Interrupted:
		r.end(evInterrupted, fmt.Errorf("%w while the program ran", ErrInterrupted), exitDetail(exit))
		return
	case exit.Code != 0:
		d := exitDetail(exit)
		d["stderr_tail"] = tail(proc.Stderr, 2048)
		cause := fmt.Errorf("%w: exit status %d", ErrProgramFailed, exit.Code)
		if exit.Signal != "" {
			cause = fmt.Errorf("%w: killed by %s", ErrProgramFailed, exit.Signal)
		}
		r.end(evFailed, cause, d)
		return
	}

	r.before(evDone)
	evalRaw, err := r.successRule(evalFile)
	if err != nil {
		d := exitDetail(exit)
		d["stderr_tail"] = tail(proc.Stderr, 2048)
		r.end(evFailed, err, d)
		return
	}
	if ctx.Err() != nil {
		r.end(evInterrupted, fmt.Errorf("%w after the program ended", ErrInterrupted), nil)
		return
	}
	if err := r.advance(map[string]any{"exit_code": 0, "eval": json.RawMessage(evalRaw)}); err != nil {
		r.end(evFailed, err, nil)
		return
	}

	// Staging: manifest, fsync.
	// The files' fsyncs run while staging hashes them and verification
	// re-reads them; all are complete before the Verified receipt.
	sy := newSyncer()
	m, err := stage(ctx, r.fsys, r.res.Staging, StageOptions{Run: cfg.RunID, Name: cfg.Name, Eval: evalRaw,
		Clock: cfg.Clock, Progress: r.progress, WholeFileSHA256: cfg.WholeFileSHA256}, sy)
	if err == nil {
		r.res.Manifest = m
		r.before(evDone)
		m, err = Verify(ctx, r.fsys, r.res.Staging, r.progress)
	}
	if serr := sy.wait(); serr != nil && err == nil {
		err = fmt.Errorf("%w: %w", ErrSave, serr)
	}
	if err == nil {
		m, err = r.verifyCommand(ctx, m)
	}
	if err != nil {
		if ctx.Err() != nil {
			r.end(evInterrupted, fmt.Errorf("%w while staging: %w", ErrInterrupted, err), nil)
		} else {
			r.end(evFailed, err, nil)
		}
		return
	}
	r.verified = true
	if err := r.advance(map[string]any{"digest": m.Digest, "files": len(m.Files), "bytes": m.Bytes()}); err != nil {
		r.end(evFailed, err, nil)
		return
	}

	r.before(evDone)
	if ctx.Err() != nil {
		r.end(evInterrupted, fmt.Errorf("%w before publication", ErrInterrupted), nil)
		return
	}
	target := filepath.Join(cfg.PublishDir, cfg.Name)
	if err := r.fsys.RenameNoReplace(r.res.Staging, target); err != nil {
		cause := fmt.Errorf("%w: %w", ErrPublication, err)
		if isExist(err) {
			cause = fmt.Errorf("%w: %w: %s appeared during the run", ErrPublication, ErrAlreadyPublished, target)
		}
		r.end(evFailed, cause, nil)
		return
	}
	// The rename is the completion boundary: from here on, published.
	r.published = true
	r.res.Outcome = PhasePublished
	r.res.Checkpoint = target
	detail := map[string]any{"path": target, "digest": m.Digest, "durable": true}
	if err := r.fsys.SyncDir(cfg.PublishDir); err != nil {
		detail["durable"] = false
		detail["error"] = err.Error()
		r.res.Warnings = append(r.res.Warnings, "published, but the publish directory's fsync failed: "+err.Error())
	}
	_ = r.fsys.SyncDir(cfg.StagingRoot)
	_ = r.advance(detail)
}

// successRule applies the documented rule after exit status 0 and returns
// the evaluation result.
func (r *run) successRule(evalFile string) (json.RawMessage, error) {
	f, err := r.fsys.OpenFile(evalFile, os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: no evaluation result at $%s: %w", ErrEvaluation, EnvEvalFile, err)
	}
	b, err := io.ReadAll(io.LimitReader(f, 1<<20))
	f.Close()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrEvaluation, err)
	}
	if _, err := parseEval(b); err != nil {
		return nil, err
	}
	var compact json.RawMessage
	if err := json.Unmarshal(b, &compact); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrEvaluation, err)
	}
	ents, err := r.fsys.ReadDir(r.res.Staging)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrEmptyCheckpoint, err)
	}
	if len(ents) == 0 {
		return nil, fmt.Errorf("%w: $%s is empty", ErrEmptyCheckpoint, EnvStagingDir)
	}
	return compactJSON(b), nil
}

func compactJSON(b []byte) json.RawMessage {
	var v any
	if json.Unmarshal(b, &v) != nil {
		return nil
	}
	out, _ := json.Marshal(v)
	return out
}

// verifyCommand runs the user's verify command, if any, on the verified
// checkpoint m.
func (r *run) verifyCommand(ctx context.Context, m *Manifest) (*Manifest, error) {
	if len(r.cfg.VerifyCommand) == 0 {
		return m, nil
	}
	env := append(append([]string(nil), r.cfg.Env...), EnvCheckpointDir+"="+r.res.Staging, EnvRunID+"="+r.cfg.RunID, EnvName+"="+r.cfg.Name)
	proc := Process{Argv: r.cfg.VerifyCommand, Env: env, Dir: r.cfg.Dir, Grace: r.cfg.Grace,
		Stdout: filepath.Join(r.res.RunDir, "verify.stdout.log"), Stderr: filepath.Join(r.res.RunDir, "verify.stderr.log")}
	stop := r.ticker("verifying")
	exit, err := r.cfg.Runner.Run(ctx, proc, nil)
	stop()
	switch {
	case err != nil:
		return nil, fmt.Errorf("%w: %w", ErrVerifyCommand, err)
	case exit.Interrupted:
		return nil, fmt.Errorf("%w: verify command interrupted", ErrInterrupted)
	case exit.Code != 0:
		return nil, fmt.Errorf("%w: %s exited %d: %s", ErrVerifyCommand, strings.Join(r.cfg.VerifyCommand, " "), exit.Code, tail(proc.Stderr, 512))
	}
	// The command must not have changed the checkpoint's file set or sizes.
	w, err := walk(r.fsys, r.res.Staging, true)
	if err != nil {
		return nil, fmt.Errorf("%w: after the verify command: %w", ErrVerification, err)
	}
	if len(w.files) != len(m.Files) {
		return nil, fmt.Errorf("%w: the verify command changed the checkpoint's files", ErrVerification)
	}
	for i, f := range w.files {
		if f.Path != m.Files[i].Path || f.Size != m.Files[i].Size {
			return nil, fmt.Errorf("%w: the verify command changed %s", ErrVerification, f.Path)
		}
	}
	return m, nil
}

// ticker reports progress of a step of unknown length every second.
func (r *run) ticker(step string) (stop func()) {
	if r.cfg.Progress == nil {
		return func() {}
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	start := time.Now()
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

func exitDetail(e Exit) map[string]any {
	d := map[string]any{"pid": e.PID, "exit_code": e.Code}
	if e.Signal != "" {
		d["signal"] = e.Signal
	}
	if e.Killed {
		d["sigkill_after_grace"] = true
	}
	return d
}

// tail returns the last n bytes of a log file, for error messages.
func tail(name string, n int64) string {
	f, err := os.Open(name)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return ""
	}
	off := fi.Size() - n
	if off < 0 {
		off = 0
	}
	b := make([]byte, fi.Size()-off)
	_, _ = f.ReadAt(b, off)
	return strings.TrimSpace(string(b))
}
