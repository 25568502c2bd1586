package gate

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/tracecheck/tracecheck/harness/pubcheck"
	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

// durabilityCase is one publication recorded by harness/pubcheck's
// durability oracle (DurableFS): before every storage operation of the
// run, what a power cut could leave (killed, metadata-only and
// synced-only images) must keep every promise of the publisher
// (pubcheck.CheckDurability).
type durabilityCase struct {
	name     string
	firstRun bool // the publish directory is empty: the run creates .tracecheck
}

var durabilityCases = []durabilityCase{{"published", false}, {"first run published", true}}

// runDurability publishes a checkpoint on the durability oracle's
// filesystem (a Go program, not Python: the oracle models the publisher's
// own storage operations) and checks every cut.
func (pe *pubEnv) runDurability(ctx context.Context, c durabilityCase, res *pubResult) {
	base, err := pe.r.path("publisher", "durability", pubSlug(c.name))
	if err == nil {
		err = os.MkdirAll(base, 0o755)
	}
	if err != nil {
		res.fail("%v", err)
		return
	}
	pub := filepath.Join(base, "pub")
	// What the model assumes exists durably when the run starts: the
	// publish directory, and (after a first run) the publisher's own.
	dirs := []string{filepath.Join(pub, checkpoint.MetaDir, "runs"), filepath.Join(pub, checkpoint.MetaDir, "staging")}
	if c.firstRun {
		dirs = []string{pub}
	}
	for _, d := range dirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			res.fail("%v", err)
			return
		}
	}
	dfs, err := pubcheck.NewDurableFS(base)
	if err != nil {
		res.fail("%v", err)
		return
	}
	runner := pubcheck.FuncRunner{Programs: map[string]pubcheck.Program{
		"good": pubcheck.WriteCheckpoint(map[string]string{"model.bin": "weights", "sub/vocab.txt": "a b c"}, true)}}
	run, err := checkpoint.Publish(ctx, checkpoint.Config{PublishDir: pub, Name: "model",
		Command: []string{"true", "good"}, Runner: runner, SkipRecovery: true, FS: dfs})
	switch {
	case err != nil:
		res.fail("publish: %v", err)
		return
	case run.Outcome != checkpoint.PhasePublished:
		res.fail("outcome %s, want %s: %v", run.Outcome, checkpoint.PhasePublished, run.Err)
		return
	case len(run.Warnings) > 0: // they would excuse a checkpoint lost to a power cut
		res.fail("warnings: %q", run.Warnings)
	}
	res.outcome = run.Outcome.String()
	cuts, err := dfs.End()
	if err != nil {
		res.fail("%v", err)
		return
	}
	scratch := filepath.Join(base, "images")
	if err := os.Mkdir(scratch, 0o755); err != nil {
		res.fail("%v", err)
		return
	}
	errs := pubcheck.CheckDurability(ctx, dfs, cuts, pubcheck.DurabilityRun{Result: run, PublishDir: pub, Name: "model", Scratch: scratch})
	for i, e := range errs {
		if i == 3 {
			res.fail("and %d more broken promises", len(errs)-i)
			break
		}
		res.fail("%v", e)
	}
	if len(errs) == 0 && !errors.Is(ctx.Err(), context.Canceled) {
		res.note = fmt.Sprintf("%d operations, %d cuts × 3 views", dfs.Ops(), len(cuts))
	}
}
