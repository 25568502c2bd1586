package gate

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/harness/pubcheck"
	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

// publisherStage runs the checkpoint publisher (impl/checkpoint) on real
// Python, the bundled examples/*.py:
//
//   - scenarios, in process: a publication (with a verify command), each
//     kind of failure (the program fails; its evaluation is missing, false
//     or its checkpoint empty; the checkpoint is stale, unsafe or refused by
//     the verify command; the name appears during the run), interrupts
//     while the program runs (SIGTERM enough, SIGKILL after the grace),
//     while the verify command runs, and a program whose child tampers
//     after it exits;
//   - an interrupt before and after each step of a publishing run;
//   - a fault-injection sweep through harness/pubcheck's filesystem, every
//     fault point once: the manifest's create, write and fsync, reads,
//     file and directory fsyncs and readdir while staging, the reload, the
//     rename, the fsync after it, the staging removal, every receipt's
//     write and fsync, and a refusal at start;
//   - a crash campaign: `tracecheck run` processes (Options.Exe) SIGKILLed
//     at seeded random moments, then recovery;
//   - hostile programs run through `tracecheck run`: escaped children,
//     symlinks to a tree outside the publish directory, FIFOs, a huge
//     evaluation file, a tampered journal, a verify command that rewrites
//     the checkpoint or forges its manifest, a program that kills the
//     publisher.
//
// Every run asserts its outcome exactly: the actions and the outcome, the
// error's kind, the program's exit, whether the checkpoint is published
// (and then that it verifies and that inspect finds the journal agrees),
// that no staging directory remains, the journal's receipts and verdict,
// what recovery reports afterwards, that no process of the run is alive,
// and that nothing outside the publish directory changed. Every journal
// goes to the coverage stage.
func publisherStage(ctx context.Context, r *run, s *stage) error {
	return publisherRun(ctx, r, s, pubOptions{})
}

// pubOptions are the tests' hooks into the stage.
type pubOptions struct {
	// wrapFS, if set, wraps the filesystem of each in-process run (tests
	// make it behave as a code mutant would).
	wrapFS func(c *pubCase, fsys checkpoint.FS) checkpoint.FS
	// only, if set, selects the in-process cases to run.
	only func(c *pubCase) bool
	// inProcessOnly skips the crash campaign and the hostile cases, which
	// run the CLI binary.
	inProcessOnly bool
}

// pubEnv is what the publisher stage's parts share.
type pubEnv struct {
	r        *run
	opt      pubOptions
	py       []string // the interpreter and its flags: exe -I -S -B
	examples string   // the absolute path of examples/
	env      []string // the programs' base environment
}

// pubResult is one case's result.
type pubResult struct {
	name     string
	kind     string // "scenario", "interrupt", "fault", "hostile"
	outcome  string // the outcome, for the tally ("refused" when Publish refused the run)
	verdict  string // the journal's verdict (crash campaign)
	failures []string
	elapsed  time.Duration
	note     string // what the case measured, for the detail
}

func (p *pubResult) fail(format string, args ...any) {
	p.failures = append(p.failures, fmt.Sprintf(format, args...))
}

func publisherRun(ctx context.Context, r *run, s *stage, opt pubOptions) error {
	py, err := pubPython(ctx, r.opt.Python)
	if err != nil {
		return fmt.Errorf("publisher: %w", err)
	}
	examples, err := filepath.Abs(filepath.Join(r.opt.Root, "examples"))
	if err != nil {
		return err
	}
	for _, f := range []string{"train.py", "fail.py", "badckpt.py", "hang.py", "tamper.py", "verify.py"} {
		if _, err := os.Stat(filepath.Join(examples, f)); err != nil {
			return fmt.Errorf("publisher: the example program %s: %w (run the gate from the repository root, or set --root)", f, err)
		}
	}
	pe := &pubEnv{r: r, opt: opt, py: py, examples: examples, env: pubBaseEnv()}
	// Failures name paths relative to the run directory.
	dir, _ := filepath.Abs(r.opt.Dir)
	shorten := func(f string) string {
		if dir == "" || dir == "/" {
			return f
		}
		return strings.ReplaceAll(f, dir+string(filepath.Separator), "")
	}

	var results []*pubResult
	cases := pe.cases()
	var jobs []func()
	for _, c := range cases {
		if opt.only != nil && !opt.only(c) {
			continue
		}
		res := &pubResult{name: c.name, kind: c.kind}
		results = append(results, res)
		jobs = append(jobs, func() { pe.runCase(ctx, c, res) })
	}
	for _, c := range durabilityCases {
		res := &pubResult{name: "durability: " + c.name, kind: "durability"}
		results = append(results, res)
		jobs = append(jobs, func() { pe.runDurability(ctx, c, res) })
	}
	var hostile []pubcheck.HostileProgram
	if !opt.inProcessOnly {
		hostile = pubcheck.HostilePrograms()
		cli, err := pe.cliCheck(ctx)
		if err != nil {
			return fmt.Errorf("publisher: %w", err)
		}
		for _, c := range hostile {
			res := &pubResult{name: "hostile " + c.ID + " " + c.Name, kind: "hostile"}
			results = append(results, res)
			jobs = append(jobs, func() { pe.runHostile(ctx, cli, c, res) })
		}
	}
	pubParallel(ctx, runtime.NumCPU()+1, jobs)

	var crash *crashTally
	if !opt.inProcessOnly && ctx.Err() == nil {
		n := r.opt.Mode.pick(5, 30, 200)
		crash = pe.crashCampaign(ctx, n)
	}

	// The verdict, the figures and the detail.
	tally := map[string]int{}
	kinds := map[string]int{}
	var detail strings.Builder
	runs := 0
	for _, res := range results {
		if res.outcome == "" && len(res.failures) == 0 {
			res.fail("did not run (%v)", ctx.Err())
		}
		kinds[res.kind]++
		if res.outcome != "" {
			runs++
			tally[res.outcome]++
		}
		verdict := "ok"
		if len(res.failures) > 0 {
			verdict = "FAIL"
		}
		fmt.Fprintf(&detail, "%-4s %-9s %-60s %-12s %s %s\n", verdict, res.kind, res.name, res.outcome, res.elapsed.Round(time.Millisecond), res.note)
		for _, f := range res.failures {
			s.fail("%s %q: %s", res.kind, res.name, shorten(f))
		}
	}
	if crash != nil {
		for _, f := range crash.failures {
			s.fail("crash campaign (seed %d): %s", r.seed, shorten(f))
		}
		detail.WriteString("\n" + crash.detail())
	}
	s.Detail = detail.String()
	figure := fmt.Sprintf("%d runs: %d published, %d failed, %d interrupted", runs,
		tally[checkpoint.PhasePublished.String()], tally[checkpoint.PhaseFailed.String()]+tally["refused"], tally[checkpoint.PhaseInterrupted.String()])
	if k := tally["killed"]; k > 0 {
		figure += fmt.Sprintf(", %d publisher killed", k)
	}
	s.figure("%s", figure)
	s.figure("%d fault points, %d interrupt points; %d publications on the durability oracle, every power cut checked", kinds["fault"], kinds["interrupt"], kinds["durability"])
	if crash != nil {
		s.figure("%d crashes (%d killed mid-run; %d published, %d recovered unpublished)", crash.n, crash.killed, crash.published, crash.recovered)
	}
	if !opt.inProcessOnly {
		s.figure("%d hostile cases", kinds["hostile"])
	}
	return nil
}

// pubPython returns the interpreter to run the examples with: the real
// executable behind py (a pyenv shim costs a shell per start), with -I -S
// (isolated, no site-packages: the examples use the standard library
// only) and -B (no bytecode written into examples/).
func pubPython(ctx context.Context, py string) ([]string, error) {
	if py == "" {
		py = "python3"
	}
	path, err := exec.LookPath(py)
	if err != nil {
		return nil, fmt.Errorf("python interpreter %q not found (%w): the publisher stage runs examples/*.py on real Python; install python3 or name an interpreter (gate.Options.Python)", py, err)
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, err := exec.CommandContext(cctx, path, "-I", "-S", "-c", "import sys; print(sys.executable)").Output()
	if err != nil {
		return nil, fmt.Errorf("python interpreter %s does not run (%w): the publisher stage runs examples/*.py on real Python", path, err)
	}
	exe := strings.TrimSpace(string(out))
	if exe == "" {
		exe = path
	}
	return []string{exe, "-I", "-S", "-B"}, nil
}

// pubBaseEnv is the gate's environment without TRACECHECK_ variables (the
// publisher sets its own).
func pubBaseEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TRACECHECK_") && !strings.HasPrefix(kv, "HOSTILE_") {
			env = append(env, kv)
		}
	}
	return env
}

// script returns the argv that runs examples/name with args.
func (pe *pubEnv) script(name string, args ...string) []string {
	return append(append(append([]string(nil), pe.py...), filepath.Join(pe.examples, name)), args...)
}

// pubParallel runs jobs on n workers, starting none once ctx ended.
func pubParallel(ctx context.Context, n int, jobs []func()) {
	sem := make(chan struct{}, max(n, 1))
	var wg sync.WaitGroup
	for _, job := range jobs {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			job()
		}()
	}
	wg.Wait()
}

// pubSlug turns a case name into a directory name.
func pubSlug(name string) string {
	var b strings.Builder
	dash := false
	for _, c := range strings.ToLower(name) {
		if c >= 'a' && c <= 'z' || c >= '0' && c <= '9' {
			b.WriteRune(c)
			dash = false
		} else if !dash && b.Len() > 0 {
			b.WriteByte('-')
			dash = true
		}
	}
	return strings.TrimSuffix(b.String(), "-")
}

// --- what every run must satisfy ---

// runProcesses lists the live processes whose environment carries the
// run's ID (zombies are dead and not listed).
func runProcesses(run string) []int {
	if run == "" {
		return nil
	}
	ents, _ := os.ReadDir("/proc")
	var out []int
	needle := []byte(checkpoint.EnvRunID + "=" + run + "\x00")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !strings.Contains(string(env), string(needle)) {
			continue
		}
		if stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); strings.Contains(string(stat), ") Z ") {
			continue
		}
		out = append(out, pid)
	}
	return out
}

// awaitNoProcesses waits up to d for list() to be empty and returns what
// is left.
func awaitNoProcesses(list func() []int, d time.Duration) []int {
	deadline := time.Now().Add(d)
	for {
		pids := list()
		if len(pids) == 0 || time.Now().After(deadline) {
			return pids
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// killPids SIGKILLs pids (cleanup of a failed case).
func killPids(pids []int) {
	for _, pid := range pids {
		_ = syscall.Kill(pid, syscall.SIGKILL)
	}
}

// journalVerdict checks a journal against model/program, registers it for
// the coverage stage, and returns its verdict. A violation is always a
// failure.
func (pe *pubEnv) journalVerdict(ctx context.Context, res *pubResult, path string, incompleteOK bool) check.Verdict {
	rep, err := pubcheck.CheckJournal(ctx, path)
	if err != nil {
		res.fail("journal %s: %v", path, err)
		return 0
	}
	pe.r.addTrace("program", path, incompleteOK)
	v := rep.Verdict()
	if v == check.Violation {
		for _, in := range rep.Instances {
			if in.Verdict == check.Violation {
				res.fail("journal violates model/program: %s: %s", in.Instance, in.Reason)
			}
		}
	}
	return v
}

// recoverOne runs recovery on pub, retrying while it reports the run
// active (a kill landing between fork and exec leaves the run's lock
// briefly shared with the program), and returns its reports.
func recoverOne(ctx context.Context, pub string) ([]checkpoint.RunReport, error) {
	for try := 0; ; try++ {
		reps, err := checkpoint.Recover(ctx, checkpoint.RecoverOptions{PublishDir: pub})
		if err != nil || len(reps) != 1 || reps[0].Outcome != checkpoint.OutcomeActive || try == 150 || ctx.Err() != nil {
			return reps, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkPublished checks a published checkpoint: it verifies, inspect finds
// it the run's (its manifest names the run, the digest is want, the
// journal agrees).
func checkPublished(ctx context.Context, res *pubResult, target, run, digest string) {
	if _, err := checkpoint.Verify(ctx, checkpoint.OSFS{}, target, nil); err != nil {
		res.fail("the published checkpoint does not verify: %v", err)
	}
	in, err := checkpoint.Inspect(ctx, nil, target)
	switch {
	case err != nil:
		res.fail("inspect %s: %v", filepath.Base(target), err)
	case in.Run != run:
		res.fail("inspect: the published checkpoint is run %s's, want %s's", in.Run, run)
	case digest != "" && in.Digest != digest:
		res.fail("inspect: digest %s, the run verified %s", in.Digest, digest)
	case in.JournalVerdict != checkpoint.JournalAgrees:
		res.fail("inspect: journal %s, want %s (notes %q)", in.JournalVerdict, checkpoint.JournalAgrees, in.Notes)
	}
}

func errText(err error) string {
	if err == nil {
		return "<nil>"
	}
	return err.Error()
}

func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
