package pubcheck_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/harness/pubcheck"
	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

// The crash test re-executes this test binary as a publisher process
// (crashChildEnv set) and SIGKILLs it at a random moment.
const (
	crashChildEnv = "PUBCHECK_CRASH_CHILD" // JSON crashJob
	crashNEnv     = "PUBCHECK_CRASH_N"     // number of crashes (default 10)
	crashSeedEnv  = "PUBCHECK_CRASH_SEED"  // seed (default: time)
)

type crashJob struct {
	PublishDir string   `json:"publish_dir"`
	Name       string   `json:"name"`
	Command    []string `json:"command"`
	// CrashAt, if set, kills the publisher process before its CrashAt-th
	// operation that changes storage (pubcheck.CrashFS), not at a time.
	CrashAt int `json:"crash_at,omitempty"`
}

// crashChild is the publisher process of the crash test.
func crashChild() int {
	var job crashJob
	if err := json.Unmarshal([]byte(os.Getenv(crashChildEnv)), &job); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	env := make([]string, 0)
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, crashChildEnv+"=") {
			env = append(env, kv)
		}
	}
	cfg := checkpoint.Config{
		PublishDir: job.PublishDir, Name: job.Name, Command: job.Command, Env: env, SkipRecovery: true,
		Runner: checkpoint.ExecRunner{Subreaper: true}} // a publisher process of its own, as tracecheck run is
	if job.CrashAt > 0 {
		cfg.FS = &pubcheck.CrashFS{At: job.CrashAt, Crash: func(n int, op pubcheck.Op, path string) {
			fmt.Fprintf(os.Stderr, "crash point %d: %s %s\n", n, op, path)
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		}}
	}
	res, err := checkpoint.Publish(context.Background(), cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	fmt.Println(res.Outcome)
	return 0
}

// TestCrashRecovery SIGKILLs a publisher process at random points of real
// runs of examples/train.py, then recovers. It must never find a partial or
// unverified published checkpoint, a journal that violates model/program,
// a staging leftover or a live process of the run after recovery, or a
// recovery that disagrees with the directory; and a retry after recovery
// never publishes twice. PUBCHECK_CRASH_N sets the count (default 10;
// `make crash` runs 500), PUBCHECK_CRASH_SEED the seed.
func TestCrashRecovery(t *testing.T) {
	python(t)
	n := 10
	if s := os.Getenv(crashNEnv); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 1 {
			t.Fatalf("%s=%q: want a positive count", crashNEnv, s)
		}
		n = v
	}
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv(crashSeedEnv); s != "" {
		v, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			t.Fatalf("%s=%q: %v", crashSeedEnv, s, err)
		}
		seed = v
	}
	t.Logf("crash test: %d runs, seed %d (reproduce: %s=%d %s=%d go test -run TestCrashRecovery ./harness/pubcheck)", n, seed, crashSeedEnv, seed, crashNEnv, n)
	rng := rand.New(rand.NewPCG(seed, 0))
	root := t.TempDir()

	// Calibrate: how long does an uncrashed publisher process take?
	full := time.Duration(0)
	for i := 0; i < 1; i++ {
		start := time.Now()
		out := runChild(t, crashJob{PublishDir: filepath.Join(root, fmt.Sprintf("calib%d", i)), Name: "m", Command: cmd(t, "train.py", "--extra-mb", "4")}, -1)
		if out.killed || out.err != nil {
			t.Fatalf("calibration run: %+v", out)
		}
		full = max(full, time.Since(start))
	}
	t.Logf("an uncrashed run takes %v; crashes fall in [0, %v]", full, full*11/10)

	tally := map[string]int{}
	outcomes := map[string]int{}
	verdicts := map[string]int{}
	for i := 0; i < n; i++ {
		pub := filepath.Join(root, fmt.Sprintf("p%d", i))
		args := []string{}
		// 40 MiB: a large file, staged and verified by block ranges.
		if mb := []int{0, 1, 4, 40}[rng.IntN(4)]; mb > 0 {
			args = append(args, "--extra-mb", strconv.Itoa(mb))
		}
		job := crashJob{PublishDir: pub, Name: "model", Command: cmd(t, "train.py", args...)}
		// A third of the kills at a uniformly random time; the others a
		// random moment after staging or verification began, which are
		// short windows of a run.
		trigger, delay := "", time.Duration(rng.Int64N(int64(full*11/10)))
		switch rng.IntN(3) {
		case 1:
			trigger, delay = `"ProgramSucceeds"`, time.Duration(rng.Int64N(int64(80*time.Millisecond)))
		case 2:
			trigger, delay = `"ReloadAndVerify"`, time.Duration(rng.Int64N(int64(3*time.Millisecond)))
		}
		out := runChildAt(t, job, trigger, delay)
		phase := crashOne(t, i, job, out, outcomes, verdicts)
		if !out.killed {
			phase = "completed (" + phase + ")"
		}
		tally[phase]++
		if t.Failed() {
			t.Fatalf("crash %d failed (delay %v, seed %d)", i, delay, seed)
		}
		_ = os.RemoveAll(pub)
	}
	report := fmt.Sprintf("crash tally over %d runs (seed %d):\n  killed with the journal in:\n%s  recovered outcomes:\n%s  journal verdicts:\n%s",
		n, seed, formatTally(tally), formatTally(outcomes), formatTally(verdicts))
	t.Log(report)
	if os.Getenv(crashNEnv) != "" {
		fmt.Print(report)
	}
}

type childOut struct {
	killed bool
	err    error
	stderr string
}

// runChild runs a publisher process and SIGKILLs it after delay (never,
// if delay < 0).
func runChild(t *testing.T, job crashJob, delay time.Duration) childOut {
	t.Helper()
	return runChildAt(t, job, "", delay)
}

// runChildAt runs a publisher process and SIGKILLs it delay after its
// journal first contains trigger (after its start if trigger is "").
func runChildAt(t *testing.T, job crashJob, trigger string, delay time.Duration) childOut {
	t.Helper()
	b, _ := json.Marshal(job)
	c := exec.Command(os.Args[0], "-test.run=^$")
	c.Env = append(os.Environ(), crashChildEnv+"="+string(b))
	var stderr strings.Builder
	c.Stderr = &stderr
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- c.Wait() }()
	if delay < 0 {
		err := <-done
		return childOut{err: err, stderr: stderr.String()}
	}
	if trigger != "" {
		pattern := filepath.Join(job.PublishDir, checkpoint.MetaDir, "runs", "*", "journal.ndjson")
		for seen := false; !seen; {
			select {
			case err := <-done:
				return childOut{err: err, stderr: stderr.String()}
			case <-time.After(time.Millisecond):
			}
			if js, _ := filepath.Glob(pattern); len(js) == 1 {
				b, _ := os.ReadFile(js[0])
				seen = strings.Contains(string(b), trigger)
			}
		}
	}
	timer := time.NewTimer(delay)
	defer timer.Stop()
	select {
	case err := <-done:
		return childOut{err: err, stderr: stderr.String()}
	case <-timer.C:
		_ = c.Process.Signal(syscall.SIGKILL)
		<-done
		return childOut{killed: true, stderr: stderr.String()}
	}
}

// crashOne recovers after one crash and checks everything that must hold.
// It returns the phase of the journal's last receipt ("no run" if the
// publisher died before its run existed).
func crashOne(t *testing.T, i int, job crashJob, out childOut, outcomes, verdicts map[string]int) string {
	t.Helper()
	ctx := context.Background()
	if !out.killed && out.err != nil {
		t.Fatalf("crash %d: the publisher failed on its own: %v\n%s", i, out.err, out.stderr)
	}
	target := filepath.Join(job.PublishDir, job.Name)
	// Before recovery: whatever is published is complete and verifies.
	if _, err := os.Lstat(target); err == nil {
		if _, err := checkpoint.Verify(ctx, checkpoint.OSFS{}, target, nil); err != nil {
			t.Errorf("crash %d: a partial or unverified checkpoint is published: %v", i, err)
		}
	}
	// A kill can land while the program's process is between fork and exec,
	// still sharing the run's lock: recovery then reports the run active and
	// leaves it alone, until the exec (or death) drops the lock.
	var reps []checkpoint.RunReport
	for try := 0; ; try++ {
		var err error
		reps, err = checkpoint.Recover(ctx, checkpoint.RecoverOptions{PublishDir: job.PublishDir})
		if err != nil && !errors.Is(err, checkpoint.ErrConfig) {
			t.Fatalf("crash %d: recover: %v", i, err)
		}
		if len(reps) != 1 || reps[0].Outcome != checkpoint.OutcomeActive || try == 100 {
			break
		}
		if try == 0 {
			outcomes["(reported active at first)"]++
		}
		time.Sleep(20 * time.Millisecond)
	}
	phase := "no run"
	switch len(reps) {
	case 0:
		if _, err := os.Lstat(target); err == nil {
			t.Errorf("crash %d: a checkpoint without a run", i)
		}
	case 1:
		rep := reps[0]
		outcomes[rep.Outcome.String()]++
		phase = rep.JournalPhase
		if phase == "" {
			phase = "no receipt"
		}
		m, merr := checkpoint.ReadManifest(checkpoint.OSFS{}, target)
		published := merr == nil && m.Run == rep.Run
		switch {
		case rep.Outcome == checkpoint.OutcomePublished && !published,
			rep.Outcome == checkpoint.OutcomeNotPublished && published,
			rep.Outcome != checkpoint.OutcomePublished && rep.Outcome != checkpoint.OutcomeNotPublished:
			t.Errorf("crash %d: recovery says %s, directory says published=%v: %+v", i, rep.Outcome, published, rep)
		}
		if !rep.JournalTerminal && published {
			outcomes["  of which the journal was nonterminal"]++
		}
		if rep.JournalTerminal && (rep.JournalPhase == "Published") != published {
			t.Errorf("crash %d: terminal journal says %s, directory says published=%v", i, rep.JournalPhase, published)
		}
		journal := filepath.Join(job.PublishDir, checkpoint.MetaDir, "runs", rep.Run, "journal.ndjson")
		if fi, err := os.Stat(journal); err == nil && (fi.Size() == 0 || receipts(journal) == 0) {
			// Killed between creating the journal and its Init receipt
			// (before or after its header): no receipt, so nothing ran (the
			// checker calls an empty trace an input error, not a verdict).
			verdicts["empty journal"]++
			if rep.JournalPhase != "" || published {
				t.Errorf("crash %d: empty journal but %+v, published=%v", i, rep, published)
			}
		} else if err == nil {
			r, err := pubcheck.CheckJournal(ctx, journal)
			if err != nil {
				t.Fatalf("crash %d: %v", i, err)
			}
			verdicts[r.Verdict().String()]++
			if r.Verdict() == check.Violation {
				t.Errorf("crash %d: the journal violates model/program: %+v", i, r.Instances)
			}
			// Recovery completed a nonterminal journal: after it, every
			// journal with an Init receipt is valid.
			if r.Verdict() != check.Valid {
				t.Errorf("crash %d: after recovery the journal is %s (journal was %s, terminal=%v, appended %v)", i, r.Verdict(), rep.JournalPhase, rep.JournalTerminal, rep.Appended)
			}
			if rep.JournalTerminal == (len(rep.Appended) > 0) {
				t.Errorf("crash %d: journal terminal=%v but recovery appended %v", i, rep.JournalTerminal, rep.Appended)
			}
			if len(rep.Appended) > 0 {
				verdicts["  of which completed by recovery ("+strings.Join(rep.Appended, ", ")+")"]++
			}
			// Recovering again appends nothing.
			before, _ := os.ReadFile(journal)
			again, err := checkpoint.Recover(ctx, checkpoint.RecoverOptions{PublishDir: job.PublishDir})
			if err != nil || len(again) != 1 || len(again[0].Appended) > 0 {
				t.Errorf("crash %d: second recovery: %v %+v", i, err, again)
			}
			if after, _ := os.ReadFile(journal); string(after) != string(before) {
				t.Errorf("crash %d: the second recovery changed the journal", i)
			}
		} else {
			verdicts["no journal"]++
		}
		// Nothing of the run is left behind.
		if ents, _ := os.ReadDir(filepath.Join(job.PublishDir, checkpoint.MetaDir, "staging")); len(ents) > 0 {
			t.Errorf("crash %d: staging leftovers after recovery: %v", i, ents)
		}
		for try := 0; ; try++ {
			pids := runProcesses(rep.Run)
			if len(pids) == 0 {
				break
			}
			if try == 50 {
				t.Errorf("crash %d: processes of the run alive after recovery: %v", i, pids)
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
		// A retry never publishes twice.
		before, _ := checkpoint.ReadManifest(checkpoint.OSFS{}, target)
		res, err := checkpoint.Publish(ctx, checkpoint.Config{PublishDir: job.PublishDir, Name: job.Name,
			Command: []string{"true", "good"}, Runner: fakeRunner()})
		switch {
		case published && !errors.Is(err, checkpoint.ErrAlreadyPublished):
			t.Errorf("crash %d: a retry over a published checkpoint: %v", i, err)
		case !published && (err != nil || res.Outcome != checkpoint.PhasePublished):
			t.Errorf("crash %d: the retry after an unpublished crash did not publish: %v %+v", i, err, res)
		}
		after, err := checkpoint.ReadManifest(checkpoint.OSFS{}, target)
		if err != nil {
			t.Errorf("crash %d: after the retry: %v", i, err)
		} else if published && after.Digest != before.Digest {
			t.Errorf("crash %d: the retry replaced the published checkpoint", i)
		}
	default:
		t.Errorf("crash %d: %d runs recovered, want 1", i, len(reps))
	}
	return phase
}

func formatTally(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "    %-32s %d\n", k, m[k])
	}
	return b.String()
}

// TestStartupRecovery: a publisher's start-up recovers a dead run's
// leftovers once (reporting it) and skips settled runs afterwards.
func TestStartupRecovery(t *testing.T) {
	pub := filepath.Join(t.TempDir(), "pub")
	job := crashJob{PublishDir: pub, Name: "model", Command: cmd(t, "train.py", "--extra-mb", "4")}
	out := runChildAt(t, job, `"ProgramSucceeds"`, 0)
	if !out.killed {
		t.Skipf("SKIP: the publisher finished before it could be killed: %+v", out)
	}
	ctx := context.Background()
	cfg := checkpoint.Config{PublishDir: pub, Name: "next", Command: []string{"true", "good"}, Runner: fakeRunner()}
	res, err := checkpoint.Publish(ctx, cfg)
	if err != nil || res.Outcome != checkpoint.PhasePublished {
		t.Fatalf("publish after a crash: %v %+v", err, res)
	}
	if len(res.Recovered) != 1 || res.Recovered[0].Name != "model" || len(res.Recovered[0].Removed) != 1 ||
		res.Recovered[0].Outcome != checkpoint.OutcomeNotPublished || res.Recovered[0].JournalTerminal {
		t.Fatalf("start-up recovery: %+v", res.Recovered)
	}
	if ents, _ := os.ReadDir(filepath.Join(pub, checkpoint.MetaDir, "staging")); len(ents) != 0 {
		t.Errorf("staging leftovers: %v", ents)
	}
	cfg.Name = "third"
	res, err = checkpoint.Publish(ctx, cfg)
	if err != nil || len(res.Recovered) != 0 {
		t.Fatalf("second start-up recovered %+v (%v); want nothing pending", res.Recovered, err)
	}
	// An explicit recovery still reports every run, from the directory.
	reps, err := checkpoint.Recover(ctx, checkpoint.RecoverOptions{PublishDir: pub})
	if err != nil || len(reps) != 3 {
		t.Fatalf("recover: %+v %v", reps, err)
	}
}
