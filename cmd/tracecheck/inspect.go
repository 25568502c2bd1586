package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/tracecheck/tracecheck/cli"
	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

const inspectSynopsis = `[--json] CHECKPOINT

Verifies a checkpoint published by "tracecheck run" (CHECKPOINT is
PUBLISH_DIR/NAME): it re-reads every byte and checks it against the
checkpoint's manifest (sizes, SHA-256 of files or of their 16 MiB blocks,
the digest, the evaluation's claimed hashes, no file added, no symlink, no
special file), and checks the manifest against the journal of the run that
published it, when PUBLISH_DIR/.tracecheck/runs/RUN/journal.ndjson still
exists: that run must have verified exactly this checkpoint (its
ReloadAndVerify and AtomicPublication receipts record the same digest). A
checkpoint edited after publication together with its manifest verifies
against itself, not against the journal. Nothing is reached through a
symlink, and nothing is written.

Exit codes: 0 verified (the journal agrees, or is gone: then it says so);
1 the checkpoint fails verification or disagrees with its journal; 2 usage;
3 CHECKPOINT is not a published checkpoint (missing, not a directory, no
readable manifest).`

func init() {
	register(cli.Command{Name: "inspect", Summary: "verify a published checkpoint against its manifest and its run's journal", Run: runInspect})
}

func runInspect(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("inspect", inspectSynopsis, stderr)
	asJSON := fs.Bool("json", false, cli.UsageJSON)
	pos, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	if len(pos) != 1 {
		fmt.Fprintln(stderr, "tracecheck inspect: want one checkpoint directory (PUBLISH_DIR/NAME)")
		return exitUsage
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	in, err := checkpoint.Inspect(ctx, nil, pos[0])
	if *asJSON && in != nil {
		out := struct {
			*checkpoint.Inspection
			Verified bool   `json:"verified"`
			Error    string `json:"error,omitempty"`
		}{Inspection: in, Verified: err == nil}
		if err != nil {
			out.Error = err.Error()
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(out)
	} else if in != nil {
		verdict := "verified"
		if err != nil {
			verdict = "FAILS VERIFICATION"
		}
		fmt.Fprintf(stdout, "%s: %s\n", in.Path, verdict)
		fmt.Fprintf(stdout, "  run:     %s\n  digest:  %s\n  files:   %d (%s)\n", in.Run, in.Digest, in.Files, humanBytes(in.Bytes))
		switch in.JournalVerdict {
		case checkpoint.JournalAbsent:
			fmt.Fprintln(stdout, "  journal: absent (checked against the manifest only)")
		default:
			fmt.Fprintf(stdout, "  journal: %s (%s)\n", in.JournalVerdict, in.Journal)
		}
		for _, n := range in.Notes {
			fmt.Fprintf(stdout, "  note: %s\n", n)
		}
		if err != nil {
			fmt.Fprintf(stdout, "  error: %v\n", err)
		}
	}
	switch {
	case err == nil:
		return exitOK
	case errors.Is(err, checkpoint.ErrNotCheckpoint):
		fmt.Fprintf(stderr, "tracecheck inspect: %v\n", err)
		return exitInput
	case errors.Is(err, checkpoint.ErrVerification) || errors.Is(err, checkpoint.ErrUnsafeFile):
		return exitViolation
	case ctx.Err() != nil:
		fmt.Fprintf(stderr, "tracecheck inspect: %v\n", err)
		return exitInput
	default:
		fmt.Fprintf(stderr, "tracecheck inspect: %v\n", err)
		return exitViolation
	}
}
