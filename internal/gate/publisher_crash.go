package gate

import (
	"bytes"
	"context"
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
	"time"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/harness/pubcheck"
	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

// crashTally is what the crash campaign found.
type crashTally struct {
	n                 int
	killed, completed int
	// published counts the crashes whose run's checkpoint is published
	// (recovery: published-and-verified); recovered the killed runs that
	// recovery settled as not published.
	published, recovered int
	phases               map[string]int // the journal's last phase at the kill
	verdicts             map[string]int
	full                 time.Duration // an uncrashed run
	failures             []string
	lines                []string // one per crash, for the report
}

func (t *crashTally) detail() string {
	var b strings.Builder
	fmt.Fprintf(&b, "crash campaign: %d publisher processes SIGKILLed at seeded random moments (an uncrashed run takes %v)\n", t.n, t.full.Round(time.Millisecond))
	for _, m := range []struct {
		title string
		m     map[string]int
	}{{"the journal's last receipt at the kill", t.phases}, {"journal verdicts", t.verdicts}} {
		fmt.Fprintf(&b, "  %s:\n", m.title)
		keys := make([]string, 0, len(m.m))
		for k := range m.m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "    %-36s %d\n", k, m.m[k])
		}
	}
	for _, l := range t.lines {
		b.WriteString("  " + l + "\n")
	}
	return b.String()
}

// crashOut is how a publisher process ended.
type crashOut struct {
	killed bool
	code   int
	stderr string
}

// crashChild runs `tracecheck run` (the gate's Exe) publishing pub/model
// from examples/train.py with args, and SIGKILLs it delay after its
// journal first holds trigger (after its start if trigger is ""; never if
// delay < 0).
func (pe *pubEnv) crashChild(ctx context.Context, pub string, args []string, trigger string, delay time.Duration) (crashOut, error) {
	argv := append([]string{"run", "--quiet", "--grace", "2s", "--publish-dir", pub, "--name", "model", "--"}, pe.script("train.py", args...)...)
	cmd := exec.CommandContext(ctx, pe.r.opt.Exe, argv...)
	cmd.Env = pe.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		return crashOut{}, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	ended := func(err error) (crashOut, error) {
		out := crashOut{code: cmd.ProcessState.ExitCode(), stderr: stderr.String()}
		var ee *exec.ExitError
		if err != nil && !errors.As(err, &ee) {
			return out, err
		}
		return out, nil
	}
	if delay < 0 {
		return ended(<-done)
	}
	if trigger != "" {
		pattern := filepath.Join(pub, checkpoint.MetaDir, "runs", "*", "journal.ndjson")
		for seen := false; !seen; {
			select {
			case err := <-done:
				return ended(err)
			case <-time.After(time.Millisecond):
			}
			if js, _ := filepath.Glob(pattern); len(js) == 1 {
				b, _ := os.ReadFile(js[0])
				seen = bytes.Contains(b, []byte(trigger))
			}
		}
	}
	timer := time.NewTimer(delay)
	defer timer.Stop()
	select {
	case err := <-done:
		return ended(err)
	case <-timer.C:
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-done
		return crashOut{killed: true, code: -1, stderr: stderr.String()}, nil
	}
}

// crashCampaign SIGKILLs n publisher processes running examples/train.py
// at seeded random moments — a third uniformly over a run, the others
// shortly after staging or verification began, short windows of a run —
// and recovers each. It must never find a partial or unverified published
// checkpoint, a journal that violates model/program (or that recovery
// calls terminal when it is not), a staging leftover or a live process of
// the run after recovery, a recovery that disagrees with the directory, or
// a retry after recovery that publishes twice.
func (pe *pubEnv) crashCampaign(ctx context.Context, n int) *crashTally {
	t := &crashTally{n: n, phases: map[string]int{}, verdicts: map[string]int{}}
	rng := rand.New(rand.NewPCG(uint64(pe.r.seed), 0x5eed0c4a5))
	base, err := pe.r.path("publisher", "crash", "x")
	if err != nil {
		t.failures = append(t.failures, err.Error())
		return t
	}
	base = filepath.Dir(base)

	// Calibrate: an uncrashed run, which must publish.
	calib := filepath.Join(base, "calibration", "pub")
	start := time.Now()
	out, err := pe.crashChild(ctx, calib, nil, "", -1)
	t.full = time.Since(start)
	res := &pubResult{}
	switch {
	case err != nil:
		res.fail("cannot run %s: %v", pe.r.opt.Exe, err)
	case out.code != 0:
		res.fail("exit %d, want 0 (published): %s", out.code, firstLine(out.stderr))
	default:
		pe.crashCheck(ctx, res, calib, out, "calibration")
	}
	for _, f := range res.failures {
		t.failures = append(t.failures, "the uncrashed calibration run: "+f)
	}
	if len(res.failures) > 0 {
		return t
	}

	sizes := []int{0, 1, 4}
	if pe.r.opt.Mode == Full {
		sizes = append(sizes, 40) // a large file, staged and verified by block ranges
	}
	for i := 0; i < n && ctx.Err() == nil; i++ {
		pub := filepath.Join(base, fmt.Sprintf("%03d", i), "pub")
		var args []string
		mb := sizes[rng.IntN(len(sizes))]
		if mb > 0 {
			args = []string{"--extra-mb", strconv.Itoa(mb)}
		}
		trigger, delay := "", time.Duration(rng.Int64N(int64(t.full)+1))
		switch rng.IntN(3) {
		case 1:
			trigger, delay = `"ProgramSucceeds"`, time.Duration(rng.Int64N(int64(15*time.Millisecond)))
		case 2:
			trigger, delay = `"ReloadAndVerify"`, time.Duration(rng.Int64N(int64(2*time.Millisecond)))
		}
		what := fmt.Sprintf("crash %d (%d MiB extra, SIGKILL %v after %s)", i, mb, delay.Round(time.Microsecond), strings.Trim(cmpOr(trigger, "the start"), `"`))
		cstart := time.Now()
		out, err := pe.crashChild(ctx, pub, args, trigger, delay)
		res := &pubResult{}
		switch {
		case err != nil:
			res.fail("cannot run %s: %v", pe.r.opt.Exe, err)
		case !out.killed && out.code != 0:
			res.fail("the publisher failed on its own: exit %d: %s", out.code, firstLine(out.stderr))
		default:
			phase := pe.crashCheck(ctx, res, pub, out, what)
			if out.killed {
				t.killed++
				t.phases[phase]++
			} else {
				t.completed++
				t.phases["completed before the kill"]++
			}
		}
		for _, f := range res.failures {
			t.failures = append(t.failures, what+": "+f)
		}
		verdict := "ok"
		if len(res.failures) > 0 {
			verdict = "FAIL"
		}
		t.lines = append(t.lines, fmt.Sprintf("%-4s %s: killed=%v, recovered %s, journal %s (%v)", verdict, what, out.killed, res.outcome, res.verdict, time.Since(cstart).Round(time.Millisecond)))
		if res.outcome == checkpoint.OutcomePublished.String() {
			t.published++
		} else if out.killed && res.outcome == checkpoint.OutcomeNotPublished.String() {
			t.recovered++
		}
		if v := res.verdict; v != "" {
			t.verdicts[v]++
		}
		if mb > 0 { // keep the run directory small: the journals stay
			_ = os.RemoveAll(filepath.Join(pub, "model"))
		}
	}
	return t
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// crashCheck recovers after one crash (or completed run) of a publisher
// process and checks everything that must hold. It returns the phase of
// the journal's last receipt; res.outcome is set to recovery's outcome,
// res.verdict to the journal's verdict.
func (pe *pubEnv) crashCheck(ctx context.Context, res *pubResult, pub string, out crashOut, what string) string {
	target := filepath.Join(pub, "model")
	// Before recovery: whatever is published is complete and verifies.
	if _, err := os.Lstat(target); err == nil {
		if _, err := checkpoint.Verify(ctx, checkpoint.OSFS{}, target, nil); err != nil {
			res.fail("a partial or unverified checkpoint is published: %v", err)
		}
	}
	reps, err := recoverOne(ctx, pub)
	if err != nil && !errors.Is(err, checkpoint.ErrConfig) {
		res.fail("recover: %v", err)
		return "recover failed"
	}
	phase := "no run directory yet"
	switch len(reps) {
	case 0:
		if !out.killed {
			res.fail("a completed run, but recovery finds no run")
		}
		if _, err := os.Lstat(target); err == nil {
			res.fail("a checkpoint without a run")
		}
		res.outcome, res.verdict = checkpoint.OutcomeNotPublished.String(), "no journal"
		return phase
	case 1:
	default:
		res.fail("recovery reports %d runs, want 1", len(reps))
		return "several runs"
	}
	rep := reps[0]
	res.outcome = rep.Outcome.String()
	phase = cmpOr(rep.JournalPhase, "no receipt")
	m, merr := checkpoint.ReadManifest(checkpoint.OSFS{}, target)
	published := merr == nil && m.Run == rep.Run
	switch {
	case rep.Outcome == checkpoint.OutcomePublished && !published,
		rep.Outcome == checkpoint.OutcomeNotPublished && published,
		rep.Outcome != checkpoint.OutcomePublished && rep.Outcome != checkpoint.OutcomeNotPublished:
		res.fail("recovery says %s, the directory says published=%v: %+v", rep.Outcome, published, rep)
	}
	if !out.killed && (!published || !rep.JournalTerminal || rep.JournalPhase != "Published") {
		res.fail("a completed run: recovery says %s, journal %s (terminal %v); want published", rep.Outcome, rep.JournalPhase, rep.JournalTerminal)
	}
	if rep.JournalTerminal && (rep.JournalPhase == checkpoint.PhasePublished.String()) != published {
		res.fail("the terminal journal says %s, the directory says published=%v", rep.JournalPhase, published)
	}
	journal := filepath.Join(pub, checkpoint.MetaDir, "runs", rep.Run, "journal.ndjson")
	receipts := 0
	if f, err := os.Open(journal); err == nil {
		if s, err := checkpoint.ReadJournal(f); err == nil {
			receipts = len(s.Events)
		} else {
			res.fail("journal: %v", err)
		}
		f.Close()
	}
	if receipts == 0 {
		// Killed between creating the journal and its Init receipt:
		// nothing ran (the checker calls an empty trace an input error).
		res.verdict = "no receipt"
		if rep.JournalPhase != "" || published || !out.killed {
			res.fail("a journal without receipts, but %+v, published=%v", rep, published)
		}
	} else {
		v := pe.journalVerdict(ctx, res, journal, out.killed)
		res.verdict = v.String()
		// Recovery completes a nonterminal journal with the receipt of
		// the outcome it established: after it, every journal is valid.
		if v != check.Valid {
			res.fail("after recovery the journal is %s (it was %s, terminal=%v; recovery appended %v)", v, rep.JournalPhase, rep.JournalTerminal, rep.Appended)
		}
		if rep.JournalTerminal == (len(rep.Appended) > 0) {
			res.fail("recovery calls the journal terminal=%v and appended %v", rep.JournalTerminal, rep.Appended)
		}
	}
	if published {
		checkPublished(ctx, res, target, rep.Run, "")
	}
	// Nothing of the run is left behind.
	if ents, _ := os.ReadDir(filepath.Join(pub, checkpoint.MetaDir, "staging")); len(ents) > 0 {
		res.fail("staging leftovers after recovery: %v", ents)
	}
	if pids := awaitNoProcesses(func() []int { return runProcesses(rep.Run) }, 2*time.Second); len(pids) > 0 {
		res.fail("processes of the run alive after recovery: %v", pids)
		killPids(pids)
	}
	// A retry never publishes twice.
	before, _ := checkpoint.ReadManifest(checkpoint.OSFS{}, target)
	retry, err := checkpoint.Publish(ctx, checkpoint.Config{PublishDir: pub, Name: "model", Command: []string{"true", "retry"},
		Runner: pubcheck.FuncRunner{Programs: map[string]pubcheck.Program{
			"retry": pubcheck.WriteCheckpoint(map[string]string{"model.bin": "retried weights"}, true)}}})
	switch {
	case published && !errors.Is(err, checkpoint.ErrAlreadyPublished):
		res.fail("a retry over the published checkpoint: %v, want it refused", err)
	case !published && (err != nil || retry.Outcome != checkpoint.PhasePublished):
		res.fail("the retry after an unpublished crash did not publish: %v %+v", err, retry)
	}
	if err == nil {
		pe.journalVerdict(ctx, res, retry.Journal, false)
	}
	after, err := checkpoint.ReadManifest(checkpoint.OSFS{}, target)
	if err != nil {
		res.fail("after the retry: %v", err)
	} else if published && after.Digest != before.Digest {
		res.fail("the retry replaced the published checkpoint")
	}
	return phase
}
