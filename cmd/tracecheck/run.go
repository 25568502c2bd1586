package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tracecheck/tracecheck/cli"
	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

// Exit codes of `tracecheck run`, beyond the shared ones.
const (
	exitRunFailed      = 4 // the run ended Failed: nothing was published
	exitRunInterrupted = 5 // the run ended Interrupted: nothing was published
)

const runSynopsis = `--publish-dir DIR --name NAME [flags] -- PROGRAM [ARGS...]

Runs PROGRAM (e.g. python3 train.py) in its own process group and publishes
the checkpoint it writes as DIR/NAME, atomically, only if the program
succeeds and the checkpoint verifies after a reload. Each transition is
fsynced to the journal, a trace that "tracecheck check" validates against
model/program (spec/Program.tla).

The program gets TRACECHECK_STAGING_DIR (write the checkpoint there) and
TRACECHECK_EVAL_FILE (write the evaluation result there). It succeeds when
it exits 0, its evaluation result is a JSON object with "passed": true, and
the staging directory is not empty. An optional "files" object in the
result maps paths to the SHA-256 the evaluation loaded; verification checks
them. --verify-cmd runs after the built-in verification with
TRACECHECK_CHECKPOINT_DIR naming the staged checkpoint. The manifest
records each file's size and SHA-256; a file of 32 MiB or more gets the
SHA-256 of each 16 MiB block instead (hashed on every core), and its
whole-file SHA-256 too with --whole-sha256. A run that fails or
is interrupted publishes nothing and removes its staging directory.
SIGINT/SIGTERM interrupt the run: the program's group gets SIGTERM, then
SIGKILL after --grace. When the program (or the verify command) ends,
every process it left behind is killed, including those that left its
process group, before anything is verified; the verify command runs before
the final byte-for-byte verification. The program's output is kept in the
run directory (the first and last 1 MiB of each stream). When the program
fails, the end of its stderr (a Python traceback) is printed on stderr.
--stream (the default when stdout is a terminal) also shows its output
live on stderr, each line prefixed "stdout| " or "stderr| ": output is
untrusted, so control characters are escaped, lines cut at 4 KiB, and
what a slow terminal cannot take is dropped (and said), never waited for.
--json prints the summary as one JSON object: outcome, run, name,
published (the checkpoint's path), digest, files, bytes, error, exit,
stderr_tail, staging_removed, journal, run_dir, duration_ms, warnings. Nothing under DIR
is reached through a symlink, and what the program did to the publisher's
own files (journal, run.json, lock) fails the run. The rename is the
completion boundary: a journal
receipt that cannot be written after it leaves the run published (exit 0,
with a warning); "tracecheck recover" then reports it from the directory.
docs/publisher.md has the details.

Exit codes: 0 published; 2 usage; 3 refused before starting (bad name,
existing checkpoint, missing program, foreign journal, staging on another
filesystem or overlapping DIR, unusable directory: full, read-only, I/O
error); 4 failed; 5 interrupted.`

func init() {
	register(cli.Command{Name: "run", Summary: "run a Python program and publish its verified checkpoint atomically", Run: runRun})
}

func runRun(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("run", runSynopsis, stderr)
	publishDir := fs.String("publish-dir", "", "directory that receives the checkpoint as DIR/NAME (required)")
	name := fs.String("name", "", "checkpoint name: one path element, no \"/\", not starting with \".\" (required)")
	journal := fs.String("journal", "", "journal file (default DIR/.tracecheck/runs/RUN/journal.ndjson); must be new or empty")
	grace := fs.Duration("grace", checkpoint.DefaultGrace, "time between SIGTERM and SIGKILL when interrupted")
	verifyCmd := fs.String("verify-cmd", "", "command that loads the staged checkpoint like its consumer (split on spaces)")
	stagingRoot := fs.String("staging-root", "", "where staging directories live (default DIR/.tracecheck/staging; must be DIR's filesystem)")
	quiet := fs.Bool("quiet", false, "no progress lines")
	wholeSHA := fs.Bool("whole-sha256", false, "also record each large file's whole-file sha256 (as sha256sum prints it) besides its 16 MiB block hashes; costs a second hash pass at staging")
	stream := fs.Bool("stream", false, "show the program's stdout and stderr live on stderr, escaped (default: when stdout is a terminal; --stream=false turns it off)")
	asJSON := fs.Bool("json", false, cli.UsageJSON)
	traceNATS := fs.String("trace-nats", "", cli.UsageTraceNATS)
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	prog := fs.Args()
	switch {
	case *publishDir == "":
		fmt.Fprintln(stderr, "tracecheck run: --publish-dir is required")
		return exitUsage
	case *name == "":
		fmt.Fprintln(stderr, "tracecheck run: --name is required")
		return exitUsage
	case len(prog) == 0:
		fmt.Fprintln(stderr, "tracecheck run: no program given; use: tracecheck run --publish-dir DIR --name NAME -- python3 train.py")
		return exitUsage
	case *grace <= 0:
		fmt.Fprintln(stderr, "tracecheck run: --grace must be positive")
		return exitUsage
	}
	if err := checkpoint.ValidateName(*name); err != nil {
		fmt.Fprintf(stderr, "tracecheck run: %v\n", err)
		return exitUsage
	}
	cfg := checkpoint.Config{
		PublishDir: *publishDir, Name: *name, Command: prog, Journal: *journal,
		Grace: *grace, StagingRoot: *stagingRoot, VerifyCommand: strings.Fields(*verifyCmd),
		WholeFileSHA256: *wholeSHA,
		// This process runs nothing but the program and the verify
		// command: it adopts their orphans and kills every one of them.
		Runner: checkpoint.ExecRunner{Subreaper: true},
	}
	streamSet := false
	fs.Visit(func(f *flag.Flag) { streamSet = streamSet || f.Name == "stream" })
	if !streamSet {
		*stream = isTerminal(stdout)
	}
	var live *checkpoint.LiveOutput
	if *stream {
		live = checkpoint.NewLiveOutput(stderr)
		cfg.Live = live
	}
	var pl *progressLine
	if !*quiet {
		// Streamed lines and a progress line rewritten in place would mix.
		pl = &progressLine{w: stderr, tty: isTerminal(stderr) && !*stream}
		cfg.Progress = pl.report
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fwd, err := startJournalForward(*traceNATS, &cfg, stderr)
	if err != nil {
		live.Close(liveWait)
		fmt.Fprintf(stderr, "tracecheck run: %v\n", err)
		return exitUsage
	}
	res, err := checkpoint.Publish(ctx, cfg)
	live.Close(liveWait)
	pl.finish()
	fwd.finish()
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck run: %v\n", err)
		if errors.Is(err, checkpoint.ErrInterrupted) {
			return exitRunInterrupted
		}
		return exitInput
	}
	for _, rep := range res.Recovered {
		if len(rep.Removed) > 0 || len(rep.Killed) > 0 {
			fmt.Fprintf(stderr, "tracecheck run: recovered earlier run %s (%s): %s\n", rep.Run, rep.Name, rep.Outcome)
		}
		if rep.Error != "" {
			fmt.Fprintf(stderr, "tracecheck run: warning: earlier run %s could not be examined: %s (see tracecheck recover)\n", rep.Run, rep.Error)
		}
	}
	if *asJSON {
		writeRunJSON(stdout, cfg.Name, res)
	} else {
		printSummary(stdout, res)
	}
	showStderrTail(stderr, res, live)
	for _, w := range res.Warnings {
		fmt.Fprintf(stderr, "tracecheck run: warning: %s\n", w)
	}
	if res.JournalErr != nil {
		fmt.Fprintf(stderr, "tracecheck run: warning: %v; the journal is incomplete (run `tracecheck recover --publish-dir %s`)\n", res.JournalErr, cfg.PublishDir)
	}
	switch res.Outcome {
	case checkpoint.PhasePublished:
		return exitOK
	case checkpoint.PhaseInterrupted:
		return exitRunInterrupted
	default:
		return exitRunFailed
	}
}

func printSummary(w io.Writer, res *checkpoint.Result) {
	fmt.Fprintf(w, "outcome:    %s\n", res.Outcome)
	if res.Checkpoint != "" {
		fmt.Fprintf(w, "checkpoint: %s\n", res.Checkpoint)
	}
	if m := res.Manifest; m != nil {
		fmt.Fprintf(w, "digest:     %s\n", m.Digest)
		fmt.Fprintf(w, "files:      %d (%s)\n", len(m.Files), humanBytes(m.Bytes()))
	}
	if res.Err != nil {
		fmt.Fprintf(w, "error:      %v\n", res.Err)
	}
	if res.Exit != nil {
		if res.Exit.Signal != "" {
			fmt.Fprintf(w, "program:    pid %d, ended by signal (%s)\n", res.Exit.PID, res.Exit.Signal)
		} else {
			fmt.Fprintf(w, "program:    pid %d, exit status %d\n", res.Exit.PID, res.Exit.Code)
		}
	}
	if res.Outcome != checkpoint.PhasePublished {
		state := "removed"
		if !res.StagingRemoved {
			state = "NOT removed (run tracecheck recover)"
		}
		fmt.Fprintf(w, "staging:    %s\n", state)
	}
	fmt.Fprintf(w, "run:        %s\n", res.RunID)
	fmt.Fprintf(w, "journal:    %s\n", res.Journal)
	fmt.Fprintf(w, "logs:       %s\n", res.RunDir)
	fmt.Fprintf(w, "duration:   %s\n", res.Duration.Round(time.Millisecond))
}

// liveWait is how long a run waits, at its end, for a slow terminal to
// take the program's last streamed lines.
const liveWait = 2 * time.Second

// showStderrTail prints, when the program failed, the end of its stderr
// (a Python traceback), escaped: unless it was streamed whole already.
func showStderrTail(w io.Writer, res *checkpoint.Result, live *checkpoint.LiveOutput) {
	if res.StderrTail == "" || (live != nil && live.Dropped() == 0) {
		return
	}
	fmt.Fprintf(w, "tracecheck run: the program failed; the end of its stderr (all of it in %s):\n%s",
		filepath.Join(res.RunDir, "stderr.log"), checkpoint.EscapeLines(res.StderrTail, "  | "))
}

// runJSON is the run summary of run --json.
type runJSON struct {
	Outcome        string   `json:"outcome"`
	Run            string   `json:"run"`
	Name           string   `json:"name"`
	Published      string   `json:"published,omitempty"`
	Digest         string   `json:"digest,omitempty"`
	Files          int      `json:"files,omitempty"`
	Bytes          int64    `json:"bytes,omitempty"`
	Error          string   `json:"error,omitempty"`
	Exit           *runExit `json:"exit,omitempty"`
	StderrTail     string   `json:"stderr_tail,omitempty"`
	StagingRemoved *bool    `json:"staging_removed,omitempty"`
	Journal        string   `json:"journal"`
	RunDir         string   `json:"run_dir"`
	DurationMS     int64    `json:"duration_ms"`
	Warnings       []string `json:"warnings,omitempty"`
	JournalError   string   `json:"journal_error,omitempty"`
}

type runExit struct {
	PID    int    `json:"pid"`
	Code   int    `json:"code"`
	Signal string `json:"signal,omitempty"`
}

// writeRunJSON prints the run summary as one JSON object.
func writeRunJSON(w io.Writer, name string, res *checkpoint.Result) {
	j := runJSON{Outcome: res.Outcome.String(), Run: res.RunID, Name: name, Published: res.Checkpoint,
		StderrTail: res.StderrTail, Journal: res.Journal, RunDir: res.RunDir,
		DurationMS: res.Duration.Milliseconds(), Warnings: res.Warnings}
	if m := res.Manifest; m != nil {
		j.Digest, j.Files, j.Bytes = m.Digest, len(m.Files), m.Bytes()
	}
	if res.Err != nil {
		j.Error = res.Err.Error()
	}
	if res.JournalErr != nil {
		j.JournalError = res.JournalErr.Error()
	}
	if e := res.Exit; e != nil {
		j.Exit = &runExit{PID: e.PID, Code: e.Code, Signal: e.Signal}
	}
	if res.Outcome != checkpoint.PhasePublished {
		j.StagingRemoved = &res.StagingRemoved
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	_ = enc.Encode(j)
}

func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// progressLine prints at most one progress line a second (rewritten in
// place on a terminal).
type progressLine struct {
	mu       sync.Mutex
	w        io.Writer
	tty      bool
	last     time.Time
	lastStep string
	lastLine string
	printed  bool
}

func (p *progressLine) report(pr checkpoint.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	now := time.Now()
	final := pr.Total > 0 && pr.Done == pr.Total
	if pr.Step == p.lastStep && now.Sub(p.last) < time.Second && !final {
		return
	}
	line := fmt.Sprintf("tracecheck: %s %s", pr.Step, pr.Elapsed.Round(100*time.Millisecond))
	if pr.Total > 0 {
		line = fmt.Sprintf("tracecheck: %s %s / %s (%d%%) %s", pr.Step, humanBytes(pr.Done), humanBytes(pr.Total),
			pr.Done*100/pr.Total, pr.Elapsed.Round(100*time.Millisecond))
	}
	if line == p.lastLine {
		return
	}
	p.last, p.lastStep, p.lastLine = now, pr.Step, line
	if p.tty {
		fmt.Fprintf(p.w, "\r\033[K%s", line)
	} else {
		fmt.Fprintln(p.w, line)
	}
	p.printed = true
}

func (p *progressLine) finish() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.printed {
		fmt.Fprint(p.w, "\r\033[K")
	}
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
