package pubcheck_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/tracecheck/tracecheck/harness/pubcheck"
	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

// crashPointsEnv selects the crash points of TestCrashPoints: unset or
// "publish", every point from the ProgramSucceeds receipt on (staging,
// verification, publication); "all", every point of the run.
const crashPointsEnv = "PUBCHECK_CRASH_POINTS"

// TestCrashPoints SIGKILLs a publisher process running examples/train.py
// before each of its operations that change storage, in turn, each once
// (pubcheck.CrashFS), and checks recovery after each as TestCrashRecovery
// does: no partial or unverified checkpoint, a valid journal, no staging
// leftover, recovery agreeing with the directory, no second publication.
// The random campaign may miss a short window; this one misses none.
func TestCrashPoints(t *testing.T) {
	python(t)
	mode := os.Getenv(crashPointsEnv)
	if mode != "" && mode != "publish" && mode != "all" {
		t.Fatalf("%s=%q: want publish or all", crashPointsEnv, mode)
	}
	root := t.TempDir()
	command := cmd(t, "train.py")

	// The points: an uncrashed run, in-process, counting.
	count := &pubcheck.CrashFS{}
	first := 0
	res, err := checkpoint.Publish(context.Background(), checkpoint.Config{PublishDir: filepath.Join(root, "count"), Name: "model",
		Command: command, SkipRecovery: true, FS: count, Boundary: func(action string, after bool) {
			if action == checkpoint.ActionProgramSucceeds && after {
				first = len(count.Points())
			}
		}})
	if err != nil || res.Outcome != checkpoint.PhasePublished {
		t.Fatalf("the uncounted run: %v %+v", err, res)
	}
	points := count.Points()
	if first == 0 {
		t.Fatal("no ProgramSucceeds receipt")
	}
	if mode == "all" {
		first = 0
	}
	t.Logf("%d crash points in a run; crashing at points %d..%d (%s=all for every one, publish for the publish step's)",
		len(points), first+1, len(points), crashPointsEnv)

	tally := map[string]int{}
	outcomes := map[string]int{}
	verdicts := map[string]int{}
	for k := first + 1; k <= len(points); k++ {
		pub := filepath.Join(root, fmt.Sprintf("p%d", k))
		job := crashJob{PublishDir: pub, Name: "model", Command: command, CrashAt: k}
		out := runChildAt(t, job, "", -1)
		var ee *exec.ExitError
		if errors.As(out.err, &ee) {
			if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL {
				out.killed, out.err = true, nil
			}
		}
		if !out.killed {
			t.Fatalf("crash point %d (%s) was never reached: %v\n%s", k, points[k-1], out.err, out.stderr)
		}
		at := out.stderr
		if i := strings.Index(at, "crash point "); i >= 0 {
			at = strings.TrimSpace(at[i:])
		}
		phase := crashOne(t, k, job, out, outcomes, verdicts)
		op, _, _ := strings.Cut(points[k-1], " ")
		tally[phase+" / before "+op]++
		if t.Failed() {
			t.Fatalf("%s: recovery failed its checks (journal in %s)", at, phase)
		}
		_ = os.RemoveAll(pub)
	}
	t.Logf("crash points by journal phase / operation:\n%s  recovered outcomes:\n%s  journal verdicts:\n%s",
		formatTally(tally), formatTally(outcomes), formatTally(verdicts))
}

// receipts returns how many complete receipts the journal at path holds
// (-1 if it cannot be read).
func receipts(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return -1
	}
	defer f.Close()
	s, err := checkpoint.ReadJournal(f)
	if err != nil {
		return -1
	}
	return len(s.Events)
}
