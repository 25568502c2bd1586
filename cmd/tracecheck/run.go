package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
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
run directory (the first and last 1 MiB of each stream). Nothing under DIR
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
	var pl *progressLine
	if !*quiet {
		pl = &progressLine{w: stderr, tty: isTerminal(stderr)}
		cfg.Progress = pl.report
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	fwd, err := startJournalForward(*traceNATS, &cfg, stderr)
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck run: %v\n", err)
		return exitUsage
	}
	res, err := checkpoint.Publish(ctx, cfg)
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
	printSummary(stdout, res)
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
