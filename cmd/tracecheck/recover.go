package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/tracecheck/tracecheck/cli"
	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

const recoverSynopsis = `--publish-dir DIR [--journal FILE] [--staging-root S] [--json]

Inspects the publisher's runs under DIR/.tracecheck and reports each dead
run's real outcome, established from the checkpoint directory and never
guessed from its journal: "published-and-verified" (DIR/NAME holds this
run's checkpoint, it verifies against its manifest, and the run's journal
recorded the verification of exactly that checkpoint),
"published-but-fails-verification" (it does not) or "not-published".
A nonterminal journal (a killed publisher) is treated as uncertain. It kills
leftover processes of dead runs, removes their staging directories (under
DIR/.tracecheck/staging, and under --staging-root for runs that used one),
and records what it did in the run directory's recovery.json. A journal
its dead publisher left nonterminal is completed: recovery appends the
receipt of the outcome it established, in Program.tla's vocabulary
(Interrupt, InterruptBeforePublication, or AtomicPublication for a
checkpoint it verified as published), with a "detail" saying it was
recovered and why, so that tracecheck check judges the journal valid, not
incomplete; recovering again appends nothing. Every path it
acts on comes from DIR and the run's ID, never from a file it reads. Runs
whose publisher is alive are reported "active" and left alone. With
--journal it recovers only that journal's run, which must be a run of DIR.

Exit codes: 0 every run examined, none failing; 1 a published checkpoint
fails verification; 2 usage; 3 input error (unreadable directory, foreign
journal) or a run that could not be examined (its run.json or journal
unreadable, not a regular file, too large); the reason is printed.`

func init() {
	register(cli.Command{Name: "recover", Summary: "report the real outcome of interrupted publisher runs and clean up", Run: runRecover})
}

func runRecover(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("recover", recoverSynopsis, stderr)
	publishDir := fs.String("publish-dir", "", "the publish directory (required)")
	journal := fs.String("journal", "", "recover only the run of this journal")
	stagingRoot := fs.String("staging-root", "", "a staging root the runs used (run --staging-root): remove their leftovers there too")
	asJSON := fs.Bool("json", false, cli.UsageJSON)
	if code := parseFlags(fs, args); code >= 0 {
		return code
	}
	if *publishDir == "" {
		fmt.Fprintln(stderr, "tracecheck recover: --publish-dir is required")
		return exitUsage
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tracecheck recover: unexpected arguments %q\n", fs.Args())
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	reps, err := checkpoint.Recover(ctx, checkpoint.RecoverOptions{PublishDir: *publishDir, Journal: *journal, StagingRoot: *stagingRoot})
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck recover: %v\n", err)
		return exitInput
	}
	code := exitOK
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if reps == nil {
			reps = []checkpoint.RunReport{}
		}
		_ = enc.Encode(reps)
	}
	for _, r := range reps {
		switch {
		case r.Outcome == checkpoint.OutcomeUnverified:
			code = exitViolation
		case r.Error != "" && code == exitOK:
			code = exitInput
		}
		if *asJSON {
			continue
		}
		line := fmt.Sprintf("%s %s: %s", r.Run, r.Name, r.Outcome)
		if r.Checkpoint != "" {
			line += " " + r.Checkpoint + " " + r.Digest
		}
		if r.JournalPhase != "" {
			term := "terminal"
			if !r.JournalTerminal {
				term = "nonterminal, uncertain"
			}
			line += fmt.Sprintf(" (journal: %s, %s)", r.JournalPhase, term)
		}
		fmt.Fprintln(stdout, line)
		if len(r.Appended) > 0 {
			fmt.Fprintf(stdout, "  journal completed: %s appended (recovered), it now ends terminal and tracecheck check judges it\n", strings.Join(r.Appended, ", "))
		}
		for _, p := range r.Killed {
			fmt.Fprintf(stdout, "  killed leftover process %d\n", p)
		}
		for _, p := range r.Removed {
			fmt.Fprintf(stdout, "  removed staging leftover %s\n", p)
		}
		for _, n := range r.Notes {
			fmt.Fprintf(stdout, "  note: %s\n", n)
		}
		if r.Error != "" {
			fmt.Fprintf(stdout, "  error: %s\n", strings.TrimSpace(r.Error))
			if r.Outcome != checkpoint.OutcomeUnverified {
				fmt.Fprintf(stderr, "tracecheck recover: run %s could not be examined: %s\n", r.Run, strings.TrimSpace(r.Error))
			}
		}
	}
	if !*asJSON && len(reps) == 0 {
		fmt.Fprintln(stdout, "no runs to recover")
	}
	return code
}
