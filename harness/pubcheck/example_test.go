package pubcheck_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"

	"github.com/tracecheck/tracecheck/harness/pubcheck"
	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

// A receipt that cannot be written stops the run before publication; its
// journal stays a prefix of the run, which the checker reports incomplete,
// and the publish directory agrees: nothing published.
func ExampleCheckJournal() {
	dir, _ := os.MkdirTemp("", "example-")
	defer os.RemoveAll(dir)
	pub := filepath.Join(dir, "pub")
	res, err := checkpoint.Publish(context.Background(), checkpoint.Config{
		PublishDir: pub, Name: "model", Command: []string{"true", "train"},
		Runner: pubcheck.FuncRunner{Programs: map[string]pubcheck.Program{
			"train": pubcheck.WriteCheckpoint(map[string]string{"model.bin": "weights"}, true),
		}},
		// The fourth write to the journal (after its header, Init and
		// ExecutePython: the ProgramSucceeds receipt) hits a full disk.
		FS: pubcheck.NewFS(pubcheck.Rule{Op: pubcheck.OpWrite, Path: "journal.ndjson", Nth: 4, Err: syscall.ENOSPC}),
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(res.Outcome, res.Actions)
	rep, err := pubcheck.CheckJournal(context.Background(), res.Journal)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("journal:", rep.Verdict())
	fmt.Println("agrees:", pubcheck.Agrees(context.Background(), res, pub, "model") == nil)
	// Output:
	// Failed [ExecutePython ProgramSucceeds SaveOrVerificationFails]
	// journal: incomplete
	// agrees: true
}
