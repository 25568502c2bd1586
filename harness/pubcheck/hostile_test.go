package pubcheck_test

// TestHostile is the acceptance test of a publisher that is safe against a
// hostile program: the program, everything it spawns (children escaping
// its process group with setsid or a double fork included) and the verify
// command are untrusted. Every case runs the real CLI binary
// (`tracecheck run`, `check`, `recover`, `inspect`) as a subprocess, under
// a memory cap and a per-step timeout, in a temporary root T holding
//
//	T/pub/       the publish directory
//	T/sentinel/  a small tree outside pub that the hostile scripts plant
//	             links and references to (they never write to it)
//	T/*.py       the case's scripts
//
// and asserts, for every case: (1) the outcome (exit code of `run`, the
// last action of the run's journal, a substring of the error); (2) every
// journal of a run that ended validates (`tracecheck check --model
// program`, exit 0); (3) `tracecheck recover --json` finishes and reports
// the truth about the case's runs, and a published checkpoint holds exactly
// the bytes the program intended; (4) `tracecheck inspect` exits 0 for a
// published checkpoint; (5, 6) everything under T except pub/ is unchanged
// and nothing was created there (a snapshot before and after: path, mode,
// size, mtime, SHA-256 or link target of every entry).
//
// Many cases fail against a publisher that trusts its program; the table
// names, for each, the behaviour the hardened publisher has. The case
// numbers follow the design brief; letters mark cases added to it.
//
// HOSTILE_STEP_TIMEOUT (a Go duration) overrides the 60 s per-step timeout,
// for quick iterations; HOSTILE_TRACECHECK names a prebuilt CLI binary to
// test instead of building cmd/tracecheck from this tree.

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/tracecheck/tracecheck/harness/pubcheck"
	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

// The journal's action names (spec/Program.tla's), spelled here so that
// this test depends on the CLI only, not on impl/checkpoint.
const (
	hActExecFails    = "ExecutionFails"
	hActSaveFails    = "SaveOrVerificationFails"
	hActInterrupt    = "Interrupt"
	hActIntBefore    = "InterruptBeforePublication"
	hActPublish      = "AtomicPublication"
	hActPubFails     = "PublicationFails"
	hOutPublished    = "published-and-verified"
	hOutNotPublished = "not-published"
	hOutUnverified   = "published-but-fails-verification"
	hManifest        = "tracecheck-manifest.json"
	hFakeRun         = "20260101T000000Z-abcdef"
	hFakeRun2        = "20260101T000000Z-fedcba"
	hMemCapKiB       = "4000000" // ulimit -v for every tracecheck process and its children
	hLogCap          = 8 << 20   // the most a capped stdout.log/stderr.log may hold ("a few MiB")
)

// hostileStepTimeout bounds every subprocess step; a step that takes
// longer hung.
func hostileStepTimeout() time.Duration {
	if s := os.Getenv("HOSTILE_STEP_TIMEOUT"); s != "" {
		if d, err := time.ParseDuration(s); err == nil && d > 0 {
			return d
		}
	}
	return 60 * time.Second
}

// The checkpoint a good program writes, and the tampered model.
var (
	hGood   = pubcheck.HostileCheckpoint()
	hVocab  = hGood["sub/vocab.txt"]
	hTamper = pubcheck.HostileTamper()
)

// hwant is the outcome a case requires of `tracecheck run`.
type hwant struct {
	label   string
	exits   []int
	actions []string // the journal's last action, any of; nil: not checked
	texts   []string // a case-insensitive substring of the error, any of; nil: not checked
}

func wP() hwant { return hwant{label: "P", exits: []int{0}, actions: []string{hActPublish}} }
func wF(action string, texts ...string) hwant {
	w := hwant{label: fmt.Sprintf("F(%s, %q)", action, texts), exits: []int{4}, texts: texts}
	if action != "" {
		w.actions = []string{action}
	} else {
		w.label = fmt.Sprintf("F(any, %q)", texts)
	}
	return w
}
func wR() hwant { return hwant{label: "R", exits: []int{3}} }
func wU() hwant { return hwant{label: "U", exits: []int{2}} }
func wI(actions ...string) hwant {
	return hwant{label: "I", exits: []int{5}, actions: actions}
}

// hsignal interrupts `tracecheck run`: once the file matching glob (under
// the publish directory) contains marker, it sends sig and requires the
// run to end within `within`.
type hsignal struct {
	sig    syscall.Signal
	glob   string
	marker string
	within time.Duration
}

// hostileCase is one hostile program and what the publisher must do.
type hostileCase struct {
	id   string // the brief's number ("16", "19b", ...)
	name string
	// prog is the program's Python body, after pubcheck.HostilePrelude ("" = good()).
	prog string
	// verify, if set, is the --verify-cmd's Python body, after pubcheck.HostilePrelude.
	verify string
	// flags returns extra flags for `run`.
	flags func(h *hctx) []string
	// ckName is --name ("" = "model").
	ckName string
	// runs starts this many runs of the program at once, named
	// ckName-0, ckName-1, ... (0 = one run named ckName).
	runs int
	// signal interrupts the run.
	signal *hsignal
	// heavy cases are started first, so that their waiting overlaps the
	// rest.
	heavy bool
	// sentinelExtra adds entries to the sentinel before the snapshot.
	sentinelExtra func(h *hctx)
	// setup prepares the publish directory before the snapshot.
	setup func(h *hctx)
	want  hwant
	// files are the bytes the program intended to publish (nil = hGood).
	files map[string][]byte
	// planted: the program plants PUBLISH_DIR/NAME itself; the case
	// checks it.
	planted bool
	// escapes: the case's scripts leave children outside the process
	// group that write, or try to, after the program exits. Before the
	// published bytes and `inspect` are checked, the case waits until no
	// process carrying its token is alive (awaitEscapees).
	escapes bool
	// post runs after the run (and the escapees), before the generic checks.
	post func(h *hctx, r *hrun)
	// inspectWant is inspect's exit code for a published checkpoint (0).
	inspectWant int
	// recExits are the exit codes allowed of `recover` (default {0}).
	recExits []int
	// recOutcome overrides the outcome recover must report for the
	// case's runs (default: published-and-verified if the run exited 0,
	// not-published otherwise).
	recOutcome string
	// recLenient accepts a report of the case's run that carries an error
	// instead of an outcome.
	recLenient bool
	// recNoRuns: recover refuses the directory as a whole; its reports of
	// runs are not checked.
	recNoRuns bool
	// final runs after recover.
	final func(h *hctx, runs []*hrun, reps []hrep)
}

// hrun is one `tracecheck run` (or other command) and how it ended.
type hrun struct {
	name           string
	code           int
	stdout, stderr string
	hung           bool
	crashed        string
	runID          string
	dur            time.Duration
	signal         string // the signal that ended the process, if any
	sigSent        bool
	sigToExit      time.Duration
}

// started reports whether the run got as far as its journal.
func (r *hrun) started() bool { return r.runID != "" }

// ended reports whether the publisher finished the run itself (its
// journal should then be terminal).
func (r *hrun) ended() bool { return !r.hung && (r.code == 0 || r.code == 4 || r.code == 5) }

// errText is what `run` printed about the error: the stdout error: line
// and stderr.
func (r *hrun) errText() string {
	var b strings.Builder
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "error:") {
			b.WriteString(strings.TrimSpace(l))
			b.WriteByte('\n')
		}
	}
	b.WriteString(r.stderr)
	return b.String()
}

func (r *hrun) errLine() string {
	if r.crashed != "" {
		return r.crashed
	}
	for _, l := range strings.Split(r.stdout, "\n") {
		if s := strings.TrimSpace(l); strings.HasPrefix(s, "error:") {
			return strings.TrimSpace(strings.TrimPrefix(s, "error:"))
		}
	}
	if r.code == 0 {
		return ""
	}
	for _, l := range strings.Split(r.stderr, "\n") {
		if strings.HasPrefix(l, "tracecheck") && !strings.Contains(l, "recovered earlier run") && !strings.Contains(l, "warning:") &&
			!strings.HasPrefix(l, "tracecheck: hashing") && !strings.HasPrefix(l, "tracecheck: verifying") && !strings.HasPrefix(l, "tracecheck: executing") {
			return strings.TrimSpace(l)
		}
	}
	return ""
}

// hrep is one run of `recover --json`'s report.
type hrep struct {
	Run     string   `json:"run"`
	Name    string   `json:"name"`
	Outcome string   `json:"outcome"`
	Error   string   `json:"error"`
	Notes   []string `json:"notes"`
	Killed  []int    `json:"killed"`
}

// hctx is one case's world.
type hctx struct {
	t        *testing.T
	c        *hostileCase
	cli      string
	py       []string
	root     string // T
	pub      string // T/pub
	sentinel string // T/sentinel
	prog     string // T/prog.py
	good     string // T/good.py
	verify   string // T/verify.py
	token    string
	env      []string
	timeout  time.Duration

	mu        sync.Mutex
	failures  []string
	notes     []string
	setupRuns map[string]string // run ID -> outcome recover must report ("error": an error)
	unended   map[string]bool   // runs whose publisher did not finish them
}

// fail records a failed assertion.
func (h *hctx) fail(format string, args ...any) {
	h.t.Helper()
	msg := fmt.Sprintf(format, args...)
	h.mu.Lock()
	h.failures = append(h.failures, msg)
	h.mu.Unlock()
	h.t.Error(msg)
}

// note records an observation for the summary (not a failure).
func (h *hctx) note(format string, args ...any) {
	h.t.Helper()
	msg := fmt.Sprintf(format, args...)
	h.mu.Lock()
	h.notes = append(h.notes, msg)
	h.mu.Unlock()
	h.t.Log(msg)
}

// --- building the CLI ---

// hostileBin is the CLI built for this test binary: built by the first
// case that needs it and reused while it exists; the top-level test that
// built it removes it in its cleanup (sync.Once would leave -count=2 with
// a removed binary).
var hostileBin struct {
	sync.Mutex
	path string
}

func hostileCLI(t *testing.T) string {
	t.Helper()
	hostileBin.Lock()
	defer hostileBin.Unlock()
	if hostileBin.path != "" {
		return hostileBin.path
	}
	if bin := os.Getenv("HOSTILE_TRACECHECK"); bin != "" {
		t.Logf("using the CLI binary %s ($HOSTILE_TRACECHECK)", bin)
		return bin
	}
	dir, err := os.MkdirTemp("", "hostile-cli-")
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(dir, "tracecheck")
	goTool, err := exec.LookPath("go")
	if err != nil {
		goTool = "/usr/local/go/bin/go"
	}
	_, file, _, _ := runtime.Caller(0)
	build := exec.Command(goTool, "build", "-o", bin, "github.com/tracecheck/tracecheck/cmd/tracecheck")
	build.Dir = filepath.Join(filepath.Dir(file), "..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		os.RemoveAll(dir)
		t.Fatalf("building the CLI: %v\n%s", err, out)
	}
	hostileBin.path = bin
	t.Cleanup(func() {
		hostileBin.Lock()
		defer hostileBin.Unlock()
		os.RemoveAll(dir)
		hostileBin.path = ""
	})
	return bin
}

// --- running the CLI ---

// capBuf keeps the first max bytes written to it.
type capBuf struct {
	mu    sync.Mutex
	b     []byte
	max   int
	total int64
}

func (c *capBuf) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.total += int64(len(p))
	if room := c.max - len(c.b); room > 0 {
		c.b = append(c.b, p[:min(room, len(p))]...)
	}
	return len(p), nil
}

func (c *capBuf) String() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return string(c.b)
}

type hproc struct {
	cmd            *exec.Cmd
	ctx            context.Context
	cancel         context.CancelFunc
	stdout, stderr *capBuf
	start          time.Time
}

// start starts the CLI with args, in its own process group, under the
// memory cap; the step's timeout kills the whole group.
func (h *hctx) start(args ...string) (*hproc, error) {
	ctx, cancel := context.WithTimeout(context.Background(), h.timeout)
	argv := append([]string{"-c", `ulimit -v ` + hMemCapKiB + `; exec "$0" "$@"`, h.cli}, args...)
	cmd := exec.CommandContext(ctx, "/bin/sh", argv...)
	cmd.Env = h.env
	cmd.Dir = h.root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	p := &hproc{cmd: cmd, ctx: ctx, cancel: cancel, stdout: &capBuf{max: 1 << 20}, stderr: &capBuf{max: 1 << 20}}
	cmd.Stdout, cmd.Stderr = p.stdout, p.stderr
	p.start = time.Now()
	if err := cmd.Start(); err != nil {
		cancel()
		return nil, err
	}
	return p, nil
}

// wait waits for p and describes how it ended.
func (p *hproc) wait() *hrun {
	err := p.cmd.Wait()
	defer p.cancel()
	r := &hrun{stdout: p.stdout.String(), stderr: p.stderr.String(), dur: time.Since(p.start), code: -1}
	if p.cmd.ProcessState != nil {
		r.code = p.cmd.ProcessState.ExitCode()
	}
	if errors.Is(p.ctx.Err(), context.DeadlineExceeded) {
		r.hung = true
	} else if err != nil && p.cmd.ProcessState == nil {
		r.crashed = err.Error()
	}
	for _, sig := range []string{"fatal error:", "panic:", "goroutine 1 ["} {
		if i := strings.Index(r.stderr, sig); i >= 0 {
			line := r.stderr[i:]
			if j := strings.IndexByte(line, '\n'); j >= 0 {
				line = line[:j]
			}
			r.crashed = strings.TrimSpace(line)
			break
		}
	}
	if p.cmd.ProcessState != nil {
		if ws, ok := p.cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			r.signal = ws.Signal().String()
		}
	}
	return r
}

// tc runs the CLI to completion.
func (h *hctx) tc(args ...string) *hrun {
	h.t.Helper()
	p, err := h.start(args...)
	if err != nil {
		h.t.Fatalf("start tracecheck %v: %v", args, err)
	}
	return p.wait()
}

// runArgs is `run`'s command line for checkpoint name.
func (h *hctx) runArgs(name, script string, withVerify bool, extra []string) []string {
	args := []string{"run", "--publish-dir", h.pub, "--name", name}
	if withVerify {
		args = append(args, "--verify-cmd", strings.Join(append(append([]string(nil), h.py...), h.verify), " "))
	}
	args = append(args, extra...)
	args = append(append(append(args, "--"), h.py...), script)
	return args
}

// runDirs lists the run directories of the publish directory (not its
// other entries, such as lock files).
func (h *hctx) runDirs() map[string]bool {
	out := map[string]bool{}
	ents, _ := os.ReadDir(filepath.Join(h.pub, ".tracecheck", "runs"))
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") && e.IsDir() {
			out[e.Name()] = true
		}
	}
	return out
}

// runIDOf finds a run's ID: its `run:` line, else (a publisher that died
// before printing it, alone in the publish directory) the one new run
// directory. A run refused before starting (exit 2 or 3) has none.
func (h *hctx) runIDOf(r *hrun, before map[string]bool, alone bool) {
	for _, l := range strings.Split(r.stdout, "\n") {
		if s, ok := strings.CutPrefix(l, "run:"); ok {
			r.runID = strings.TrimSpace(s)
			return
		}
	}
	if !alone || r.code == 2 || r.code == 3 {
		return
	}
	var fresh []string
	for d := range h.runDirs() {
		if !before[d] {
			fresh = append(fresh, d)
		}
	}
	if len(fresh) == 1 {
		r.runID = fresh[0]
	}
}

// publish runs `run` for name and script and returns how it ended.
func (h *hctx) publish(name, script string, withVerify bool, extra []string, sig *hsignal, alone bool) *hrun {
	h.t.Helper()
	before := h.runDirs()
	p, err := h.start(h.runArgs(name, script, withVerify, extra)...)
	if err != nil {
		return &hrun{name: name, code: -1, crashed: "cannot start: " + err.Error()}
	}
	var sigAt time.Time
	var sigMu sync.Mutex
	done := make(chan struct{})
	var wg sync.WaitGroup
	if sig != nil {
		wg.Add(1)
		go func() {
			defer wg.Done()
			deadline := time.Now().Add(30 * time.Second)
			for time.Now().Before(deadline) {
				select {
				case <-done:
					return
				case <-time.After(20 * time.Millisecond):
				}
				files, _ := filepath.Glob(filepath.Join(h.pub, sig.glob))
				for _, f := range files {
					if b, _ := os.ReadFile(f); bytes.Contains(b, []byte(sig.marker)) {
						sigMu.Lock()
						sigAt = time.Now()
						sigMu.Unlock()
						_ = p.cmd.Process.Signal(sig.sig)
						return
					}
				}
			}
		}()
	}
	r := p.wait()
	close(done)
	wg.Wait()
	r.name = name
	if sig != nil {
		sigMu.Lock()
		if !sigAt.IsZero() {
			r.sigSent = true
			r.sigToExit = r.dur - sigAt.Sub(p.start)
		}
		sigMu.Unlock()
	}
	h.runIDOf(r, before, alone)
	if r.runID != "" && !r.ended() {
		h.mu.Lock()
		h.unended[r.runID] = true
		h.mu.Unlock()
	}
	return r
}

// goodRun publishes name with the good program (setup and later runs).
func (h *hctx) goodRun(name string) *hrun {
	h.t.Helper()
	return h.publish(name, h.good, false, nil, nil, true)
}

// describe is how a run ended, for logs and failures.
func (h *hctx) describe(r *hrun) string {
	if r.hung {
		return fmt.Sprintf("HUNG (killed after %v)", h.timeout)
	}
	s := fmt.Sprintf("exit %d", r.code)
	if r.signal != "" {
		s += " (killed by signal: " + r.signal + ")"
	}
	if r.started() {
		s += ", last action " + h.lastAction(r.runID)
	}
	if e := r.errLine(); e != "" {
		s += fmt.Sprintf(", error %q", clip(e, 300))
	}
	if r.crashed != "" {
		s += ", CRASHED: " + r.crashed
	}
	if r.started() && strings.Contains(strings.ToLower(r.errLine()), "program failed") {
		// Why the program failed: the tail of its stderr.log.
		if b, err := readTail(filepath.Join(h.pub, ".tracecheck", "runs", r.runID, "stderr.log"), 300); err == nil && len(b) > 0 {
			s += fmt.Sprintf(", program's stderr ends %q", strings.TrimSpace(string(b)))
		}
	}
	return s
}

// readTail returns the last n bytes of a regular file.
func readTail(name string, n int64) ([]byte, error) {
	fi, err := os.Lstat(name)
	if err != nil || !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s: not a regular file (%v)", name, err)
	}
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	off := max(fi.Size()-n, 0)
	b := make([]byte, fi.Size()-off)
	_, err = f.ReadAt(b, off)
	if errors.Is(err, io.EOF) {
		err = nil
	}
	return b, err
}

// lastAction is the action of the last receipt of a run's journal.
func (h *hctx) lastAction(run string) string {
	j := filepath.Join(h.pub, ".tracecheck", "runs", run, "journal.ndjson")
	fi, err := os.Lstat(j)
	if err != nil {
		return "(no journal: " + err.Error() + ")"
	}
	if !fi.Mode().IsRegular() {
		return fmt.Sprintf("(journal is not a regular file: %s)", fi.Mode().Type())
	}
	b, err := readCapped(j, 64<<20)
	if err != nil {
		return "(journal unreadable: " + err.Error() + ")"
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	last := lines[len(lines)-1]
	var e struct {
		Action string `json:"action"`
	}
	if json.Unmarshal([]byte(last), &e) != nil || e.Action == "" {
		return fmt.Sprintf("(last line is not a receipt: %q)", clip(last, 80))
	}
	return e.Action
}

func firstLine(s string) string {
	return strings.SplitN(strings.TrimSpace(s), "\n", 2)[0]
}

func clip(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

func readCapped(name string, n int64) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, n))
}

// --- the published tree ---

// --- processes the case started ---

// awaitEscapees waits until no process of the case is alive, polling up to
// the step timeout: an escaped child writes (or tries to) before it exits,
// so once none is alive every write one could make has landed, and what
// is read afterwards is final however slow the machine. One still alive
// then is a failure (the cleanup kills it).
func (h *hctx) awaitEscapees() {
	h.t.Helper()
	start := time.Now()
	for {
		pids := pubcheck.TokenProcesses(h.token)
		if len(pids) == 0 {
			if d := time.Since(start); d > 20*time.Millisecond {
				h.t.Logf("escaped processes ended %v after the run", d.Round(time.Millisecond))
			}
			return
		}
		if time.Since(start) > h.timeout {
			h.fail("processes of the case still alive %v after the run: %v", h.timeout, pids)
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// --- the test ---

type hostileSummary struct {
	mu   sync.Mutex
	rows map[string]string
}

// TestHostile runs every hostile case (see the top of this file) in
// parallel and logs a summary table: each case and PASS or the assertions
// it failed.
func TestHostile(t *testing.T) {
	py := python(t)
	cli := hostileCLI(t)
	cases := hostileCases()
	if len(cases) < 40 {
		t.Fatalf("%d cases, want at least 40", len(cases))
	}
	seen := map[string]bool{}
	for _, c := range cases {
		if seen[c.id] {
			t.Fatalf("case id %s twice", c.id)
		}
		seen[c.id] = true
	}
	// Heavy cases first: their waiting overlaps the others.
	order := slices.Clone(cases)
	sort.SliceStable(order, func(i, j int) bool { return order[i].heavy && !order[j].heavy })

	sum := &hostileSummary{rows: map[string]string{}}
	start := time.Now()
	t.Cleanup(func() {
		var b strings.Builder
		fmt.Fprintf(&b, "hostile cases: %d, wall time %v\n", len(cases), time.Since(start).Round(100*time.Millisecond))
		pass := 0
		for _, c := range cases {
			row := sum.rows[c.id]
			if strings.HasPrefix(row, "PASS") {
				pass++
			}
			fmt.Fprintf(&b, "  %-4s %-40s %s\n", c.id, c.name, row)
		}
		fmt.Fprintf(&b, "%d PASS, %d not PASS\n", pass, len(cases)-pass)
		t.Log(b.String())
	})
	for _, c := range order {
		t.Run(c.id+"-"+c.name, func(t *testing.T) {
			t.Parallel()
			runHostileCase(t, c, cli, py, sum)
		})
	}
}

func runHostileCase(t *testing.T, c *hostileCase, cli string, py []string, sum *hostileSummary) {
	root, err := os.MkdirTemp("", "hostile-")
	if err != nil {
		t.Fatal(err)
	}
	var tok [8]byte
	_, _ = rand.Read(tok[:])
	h := &hctx{t: t, c: c, cli: cli, py: py, root: root,
		pub: filepath.Join(root, "pub"), sentinel: filepath.Join(root, "sentinel"),
		prog: filepath.Join(root, "prog.py"), good: filepath.Join(root, "good.py"), verify: filepath.Join(root, "verify.py"),
		token: "hostile-token-" + hex.EncodeToString(tok[:]), timeout: hostileStepTimeout(),
		setupRuns: map[string]string{}, unended: map[string]bool{}}
	t.Cleanup(func() { os.RemoveAll(root) })
	t.Cleanup(func() {
		// Escaped children may still run; they die before T goes.
		for i := 0; i < 50 && len(pubcheck.KillByToken(h.token)) > 0; i++ {
			time.Sleep(20 * time.Millisecond)
		}
	})
	defer func() {
		h.mu.Lock()
		defer h.mu.Unlock()
		row := "PASS"
		switch {
		case t.Skipped():
			row = "SKIP"
		case len(h.failures) > 0 || t.Failed():
			row = fmt.Sprintf("FAIL (%d): %s", len(h.failures), strings.Join(h.failures, " | "))
		}
		sum.mu.Lock()
		sum.rows[c.id] = row
		sum.mu.Unlock()
	}()

	env := []string{}
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "TRACECHECK_") && !strings.HasPrefix(kv, "HOSTILE_") {
			env = append(env, kv)
		}
	}
	h.env = append(env, "HOSTILE_SENTINEL="+h.sentinel, "HOSTILE_TOKEN="+h.token)

	// T: pub/, sentinel/, the scripts.
	mustWrite := func(p string, b []byte) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(h.pub, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := pubcheck.WriteSentinel(h.sentinel); err != nil {
		t.Fatal(err)
	}
	if c.sentinelExtra != nil {
		c.sentinelExtra(h)
	}
	body := c.prog
	if body == "" {
		body = "good()\n"
	}
	mustWrite(h.prog, []byte(pubcheck.HostilePrelude+body))
	mustWrite(h.good, []byte(pubcheck.HostilePrelude+"good()\n"))
	if c.verify != "" {
		mustWrite(h.verify, []byte(pubcheck.HostilePrelude+c.verify))
	}
	if c.setup != nil {
		c.setup(h)
	}
	before, err := pubcheck.SnapshotTree(root, "pub")
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}

	// The run(s).
	name := c.ckName
	if name == "" {
		name = "model"
	}
	var extra []string
	if c.flags != nil {
		extra = c.flags(h)
	}
	var runs []*hrun
	if c.runs > 0 {
		runs = make([]*hrun, c.runs)
		var wg sync.WaitGroup
		for i := range runs {
			wg.Add(1)
			go func() {
				defer wg.Done()
				runs[i] = h.publish(fmt.Sprintf("%s-%d", name, i), h.prog, c.verify != "", extra, c.signal, false)
			}()
		}
		wg.Wait()
	} else {
		runs = []*hrun{h.publish(name, h.prog, c.verify != "", extra, c.signal, true)}
	}
	for _, r := range runs {
		t.Logf("run %q (%s): %s, %v; want %s", r.name, r.runID, h.describe(r), r.dur.Round(time.Millisecond), c.want.label)
		h.checkOutcome(r)
	}
	if c.escapes {
		h.awaitEscapees()
	}
	for _, r := range runs {
		h.checkPublished(r)
	}
	if c.post != nil {
		c.post(h, runs[0])
	}
	for _, r := range runs {
		if r.code == 0 && !c.planted {
			h.inspect(filepath.Join(h.pub, r.name), c.inspectWant)
		}
	}
	h.checkJournals()
	reps := h.recover(runs)
	if c.final != nil {
		c.final(h, runs, reps)
	}

	after, err := pubcheck.SnapshotTree(root, "pub")
	if err != nil {
		h.fail("snapshot after the case: %v", err)
	} else if d := before.Diff(after); d != "" {
		h.fail("outside pub/ changed: %s", d)
	}
}

// checkOutcome asserts (1): exit code, last journal action, error text.
func (h *hctx) checkOutcome(r *hrun) {
	h.t.Helper()
	w := h.c.want
	if r.hung {
		h.fail("run %q hung: no exit within %v (its process group was killed)", r.name, h.timeout)
		return
	}
	if r.crashed != "" {
		h.fail("run %q crashed: %s", r.name, r.crashed)
	}
	if r.code == 4 && strings.Contains(strings.ToLower(r.errLine()), "program failed") && !slices.Contains(w.texts, "program failed") {
		// The hostile script itself broke: the case did not test what it
		// names, whatever the outcome.
		h.fail("run %q: the case's program failed, so its hostile action did not run as designed: %s", r.name, h.describe(r))
		return
	}
	if !slices.Contains(w.exits, r.code) {
		h.fail("run %q: %s; want %s", r.name, h.describe(r), w.label)
		return
	}
	if w.actions != nil {
		if !r.started() {
			h.fail("run %q: exit %d but no run ID found (no `run:` line, no new run directory)", r.name, r.code)
		} else if a := h.lastAction(r.runID); !slices.Contains(w.actions, a) {
			h.fail("run %q: last journal action %s, want %v (%s)", r.name, a, w.actions, h.describe(r))
		}
	}
	if len(w.texts) > 0 {
		text := strings.ToLower(r.errText())
		ok := false
		for _, s := range w.texts {
			ok = ok || strings.Contains(text, strings.ToLower(s))
		}
		if !ok {
			h.fail("run %q: error %q does not contain any of %q", r.name, clip(r.errLine(), 300), w.texts)
		}
	}
	if h.c.signal != nil {
		switch {
		case !r.sigSent:
			h.fail("run %q: the marker %q never appeared in %s; no signal was sent", r.name, h.c.signal.marker, h.c.signal.glob)
		case r.sigToExit > h.c.signal.within:
			h.fail("run %q: ended %v after %v, want within %v", r.name, r.sigToExit.Round(time.Millisecond), h.c.signal.sig, h.c.signal.within)
		}
	}
}

// checkPublished asserts that a run that exited 0 published exactly the
// intended bytes, and that a run that did not published nothing.
func (h *hctx) checkPublished(r *hrun) {
	h.t.Helper()
	if h.c.planted {
		return
	}
	target := filepath.Join(h.pub, r.name)
	if r.code != 0 {
		if fi, err := os.Lstat(target); err == nil {
			h.fail("run %q did not publish (exit %d) but %s exists (%s)", r.name, r.code, target, fi.Mode().Type())
		}
		return
	}
	want := h.c.files
	if want == nil {
		want = hGood
	}
	got, problems, err := pubcheck.ReadCheckpoint(target)
	switch {
	case err != nil:
		h.fail("published checkpoint %s: %v", target, err)
	case len(problems) > 0:
		h.fail("published checkpoint %s holds unsafe entries: %s", target, strings.Join(problems, "; "))
	}
	if err == nil {
		if d := pubcheck.FilesDiff(got, want); d != "" {
			h.fail("published checkpoint is not the program's bytes%s: %s", afterEscapees(h.c.escapes), d)
		}
	}
}

func afterEscapees(escapes bool) string {
	if !escapes {
		return ""
	}
	return " (after every escaped process ended)"
}

// inspect asserts (4): `tracecheck inspect path` exits want.
func (h *hctx) inspect(path string, want int) {
	h.t.Helper()
	r := h.tc("inspect", path)
	out := strings.ToLower(r.stdout + r.stderr)
	switch {
	case r.hung:
		h.fail("inspect %s hung", filepath.Base(path))
	case r.crashed != "":
		h.fail("inspect %s crashed: %s", filepath.Base(path), r.crashed)
	case r.code == 2 && strings.Contains(out, "unknown command"):
		h.fail("inspect %s: the binary has no `inspect` command (exit 2, unknown command); want exit %d", filepath.Base(path), want)
	case r.code != want:
		h.fail("inspect %s: exit %d, want %d: %s", filepath.Base(path), r.code, want, clip(firstLine(r.stdout+"\n"+r.stderr), 300))
	}
}

// checkJournals asserts (2): every journal of a run that ended validates.
func (h *hctx) checkJournals() {
	h.t.Helper()
	js, _ := filepath.Glob(filepath.Join(h.pub, ".tracecheck", "runs", "*", "journal.ndjson"))
	for _, j := range js {
		run := filepath.Base(filepath.Dir(j))
		fi, err := os.Lstat(j)
		if err != nil {
			continue
		}
		if !fi.Mode().IsRegular() {
			h.note("journal of run %s skipped: not a regular file (%s)", run, fi.Mode().Type())
			continue
		}
		h.mu.Lock()
		unended := h.unended[run]
		h.mu.Unlock()
		if unended {
			h.note("journal of run %s skipped: its publisher did not end the run", run)
			continue
		}
		r := h.tc("check", "--model", "program", j)
		if r.hung || r.code != 0 {
			first := firstLine(r.stdout + "\n" + r.stderr)
			h.fail("journal of run %s: check exit %d (hung %v), want 0 (valid): %s", run, r.code, r.hung, clip(first, 300))
		}
	}
}

// recover asserts (3): `recover --json` finishes, exits as the case
// wants, and reports the truth about the case's runs.
func (h *hctx) recover(runs []*hrun) []hrep {
	h.t.Helper()
	c := h.c
	r := h.tc("recover", "--publish-dir", h.pub, "--json")
	exits := c.recExits
	if exits == nil {
		exits = []int{0}
	}
	switch {
	case r.hung:
		h.fail("recover hung: no exit within %v", h.timeout)
		return nil
	case r.crashed != "":
		h.fail("recover crashed: %s (exit %d)", r.crashed, r.code)
	}
	if !slices.Contains(exits, r.code) {
		h.fail("recover: exit %d, want %v: %s", r.code, exits, clip(firstLine(r.stderr), 300))
	}
	var reps []hrep
	if strings.TrimSpace(r.stdout) != "" {
		if err := json.Unmarshal([]byte(r.stdout), &reps); err != nil {
			h.fail("recover --json printed no JSON report list: %v: %q", err, clip(r.stdout, 200))
			return nil
		}
	} else if r.code == 0 || r.code == 1 {
		h.fail("recover exited %d without a report", r.code)
	}
	byRun := map[string]hrep{}
	for _, rep := range reps {
		byRun[rep.Run] = rep
	}
	if len(reps) > 0 {
		var b strings.Builder
		for _, rep := range reps {
			fmt.Fprintf(&b, " [%s %s: %s", rep.Run, rep.Name, rep.Outcome)
			if rep.Error != "" {
				b.WriteString(" error=" + clip(rep.Error, 120))
			}
			b.WriteString("]")
		}
		h.t.Logf("recover exit %d:%s", r.code, b.String())
	}
	expect := func(run, want string, lenient bool) {
		rep, ok := byRun[run]
		switch {
		case !ok && len(reps) == 0 && r.code != 0 && r.code != 1:
			// No report list (e.g. an input error): nothing more to check.
		case !ok:
			h.fail("recover does not report run %s", run)
		case want == "error":
			if rep.Error == "" {
				h.fail("recover reports run %s as %s without an error; want an error", run, rep.Outcome)
			}
		case lenient && rep.Error != "":
		case rep.Outcome != want:
			h.fail("recover reports run %s as %q (error %q), want %s", run, rep.Outcome, clip(rep.Error, 200), want)
		}
	}
	for _, run := range runs {
		if !run.started() || run.hung || c.recNoRuns {
			continue
		}
		want := c.recOutcome
		if want == "" {
			want = hOutNotPublished
			if run.code == 0 {
				want = hOutPublished
			}
		}
		expect(run.runID, want, c.recLenient)
	}
	for run, want := range h.setupRuns {
		expect(run, want, false)
	}
	return reps
}

// setupKeep publishes pub/keep with a good run before the snapshot.
func setupKeep(h *hctx) {
	h.t.Helper()
	r := h.goodRun("keep")
	if r.code != 0 || r.runID == "" {
		h.t.Fatalf("setup: publishing keep: %s\n%s\n%s", h.describe(r), r.stdout, r.stderr)
	}
	h.setupRuns[r.runID] = hOutPublished
}

// plantFakeRun writes a run directory that no publisher created, whose
// run.json names paths in the sentinel.
func plantFakeRun(h *hctx, dirName, run, name, staging string) {
	h.t.Helper()
	d := filepath.Join(h.pub, ".tracecheck", "runs", dirName)
	if err := os.MkdirAll(d, 0o755); err != nil {
		h.t.Fatal(err)
	}
	meta := map[string]any{"run": run, "name": name, "publish_dir": h.pub, "staging": staging,
		"journal": filepath.Join(h.sentinel, "a.txt"), "command": []string{"python3", "train.py"},
		"publisher_pid": 1, "created": "2026-01-01T00:00:00Z"}
	b, _ := json.MarshalIndent(meta, "", "  ")
	if err := os.WriteFile(filepath.Join(d, "run.json"), b, 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// sentinelRunDir adds a sentinel subdirectory named like a run.
func sentinelRunDir(run string) func(h *hctx) {
	return func(h *hctx) {
		d := filepath.Join(h.sentinel, run)
		if err := os.MkdirAll(d, 0o755); err != nil {
			h.t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, "precious.txt"), []byte("named like a run; must never change\n"), 0o644); err != nil {
			h.t.Fatal(err)
		}
	}
}

// checkLogCapped asserts that a run's log is capped with a note of what
// was dropped.
func checkLogCapped(h *hctx, r *hrun, log string) {
	h.t.Helper()
	if r.runID == "" {
		h.fail("no run ID: cannot find %s", log)
		return
	}
	p := filepath.Join(h.pub, ".tracecheck", "runs", r.runID, log)
	fi, err := os.Lstat(p)
	if err != nil {
		h.fail("%s: %v", log, err)
		return
	}
	if fi.Size() > hLogCap {
		h.fail("%s holds %d bytes (%.1f MiB), want at most %d MiB (head and tail kept)", log, fi.Size(), float64(fi.Size())/(1<<20), hLogCap>>20)
	}
	f, err := os.Open(p)
	if err != nil {
		h.fail("%s: %v", log, err)
		return
	}
	defer f.Close()
	found := false
	br := bufio.NewReaderSize(f, 1<<20)
	var carry []byte
	buf := make([]byte, 1<<20)
	for !found {
		n, err := br.Read(buf)
		chunk := bytes.ToLower(append(carry, buf[:n]...))
		found = bytes.Contains(chunk, []byte("dropped"))
		if len(chunk) > 16 {
			carry = append([]byte(nil), chunk[len(chunk)-16:]...)
		}
		if err != nil {
			break
		}
	}
	if !found {
		h.fail("%s has no line saying how many bytes were dropped (no %q)", log, "dropped")
	}
}

// forgeManifest rewrites model.bin of the checkpoint at dir with tamper
// bytes and, if consistent, its manifest entry and digest the way the
// publisher computes them (sha256 of the JSON encoding of "files").
func forgeManifest(h *hctx, dir string, consistent bool) {
	h.t.Helper()
	fi, err := os.Lstat(filepath.Join(dir, "model.bin"))
	if err != nil || !fi.Mode().IsRegular() {
		h.fail("cannot edit %s/model.bin: %v (mode %v)", dir, err, fi)
		return
	}
	if err := os.WriteFile(filepath.Join(dir, "model.bin"), hTamper, 0o644); err != nil {
		h.t.Fatal(err)
	}
	if !consistent {
		return
	}
	mp := filepath.Join(dir, hManifest)
	text, err := os.ReadFile(mp)
	if err != nil {
		h.fail("cannot read the manifest to forge it: %v", err)
		return
	}
	type entry struct {
		Path      string   `json:"path"`
		Size      int64    `json:"size"`
		SHA256    string   `json:"sha256,omitempty"`
		BlockSize int64    `json:"block_size,omitempty"`
		Blocks    []string `json:"blocks,omitempty"`
	}
	var m struct {
		Files  []entry `json:"files"`
		Digest string  `json:"digest"`
	}
	if err := json.Unmarshal(text, &m); err != nil {
		h.fail("cannot parse the manifest to forge it: %v", err)
		return
	}
	digest := func() string {
		b, _ := json.Marshal(m.Files)
		s := sha256.Sum256(b)
		return "sha256:" + hex.EncodeToString(s[:])
	}
	if d := digest(); d != m.Digest {
		h.note("forge: the manifest's digest %s is not sha256(files) %s as manifest.go computes it; forging anyway", m.Digest, d)
	}
	oldDigest := m.Digest
	out := string(text)
	for i := range m.Files {
		if m.Files[i].Path == "model.bin" && m.Files[i].SHA256 != "" {
			s := sha256.Sum256(hTamper)
			out = strings.ReplaceAll(out, m.Files[i].SHA256, hex.EncodeToString(s[:]))
			m.Files[i].SHA256 = hex.EncodeToString(s[:])
		}
	}
	out = strings.ReplaceAll(out, oldDigest, digest())
	if err := os.WriteFile(mp, []byte(out), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// --- the cases ---

// hostileCases returns every case: the gate's (pubcheck.HostilePrograms)
// and the ones only this test runs.
func hostileCases() []*hostileCase {
	return append(sharedCases(), []*hostileCase{
		{id: "01", name: "good", want: wP()},

		// The staging directory itself.
		{id: "03", name: "staging-symlink-to-published", want: wF(hActExecFails, "unsafe file"), setup: setupKeep, prog: `
good()
shutil.rmtree(staging)
os.symlink(os.path.join(pub, "keep"), staging)
`, final: func(h *hctx, _ []*hrun, _ []hrep) { h.inspect(filepath.Join(h.pub, "keep"), 0) }},
		{id: "04", name: "staging-regular-file", want: wF(hActExecFails, "unsafe file"), prog: `
write_eval()
os.rmdir(staging)
with open(staging, "wb") as f:
    f.write(MODEL)
`},
		{id: "05", name: "staging-removed", want: wF(hActExecFails, "no checkpoint"), prog: `
write_eval()
os.rmdir(staging)
`},
		{id: "06", name: "staging-only-empty-dirs", want: wF(hActSaveFails, "no checkpoint"), prog: `
write_eval()
os.makedirs(os.path.join(staging, "a", "b"))
os.makedirs(os.path.join(staging, "c"))
`},

		// Entries inside the staging directory.
		{id: "10", name: "socket-inside-staging", want: wF(hActSaveFails, "unsafe file"), prog: `
good()
os.chdir(staging)
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.bind("sock")
s.close()
`},
		{id: "11", name: "name-not-utf8", want: wF(hActSaveFails, "unsafe file"), prog: `
good()
fd = os.open(os.path.join(staging.encode(), b"\xff.bin"), os.O_CREAT | os.O_WRONLY, 0o644)
os.write(fd, b"x")
os.close(fd)
`},
		{id: "12", name: "name-bidi-override", want: wF(hActSaveFails, "unsafe file"), prog: `
good()
with open(os.path.join(staging, "evil\u202etxt.bin"), "wb") as f:
    f.write(b"x")
`},
		{id: "13", name: "name-newline", want: wF(hActSaveFails, "unsafe file"), prog: `
good()
with open(os.path.join(staging, "a\nb.bin"), "wb") as f:
    f.write(b"x")
`},
		{id: "14", name: "name-manifest", want: wF(hActSaveFails, "unsafe file"), prog: `
good()
with open(os.path.join(staging, "tracecheck-manifest.json"), "w") as f:
    f.write("{}")
`},
		{id: "15", name: "nested-300-deep", want: wF(hActSaveFails, "unsafe file"), prog: `
good()
d = staging
for i in range(300):
    d = os.path.join(d, "d")
os.makedirs(d)
with open(os.path.join(d, "deep.bin"), "wb") as f:
    f.write(b"x")
`},

		// Children that escape the process group.
		{id: "16", name: "escaped-child-writes-by-path", want: wP(), escapes: true, heavy: true, prog: `
good()
# Both places model.bin lives, by path: staging, and where it is published.
paths = [os.path.join(staging, "model.bin"), os.path.join(pub, name, "model.bin")]


def child(r):
    # 0.1 s after the program exits: a child writing the instant the
    # program's descriptors close races the publisher's own notice of the
    # exit, which no publisher can win every time.
    after_exit(r, 0.1)
    end = time.time() + 3
    while time.time() < end:
        for p in paths:
            try:
                with open(p, "r+b") as f:
                    f.write(TAMPER)
            except OSError:
                pass
        time.sleep(0.01)


escape(child)
`},
		{id: "17", name: "escaped-child-writes-through-fd", want: wP(), escapes: true, heavy: true, prog: `
good()
fd = os.open(os.path.join(staging, "model.bin"), os.O_RDWR)


def child(r):
    after_exit(r, 0.5)
    os.pwrite(fd, b"TAMPERED", 0)


escape(child)
`},
		{id: "19", name: "escaped-child-mmap", want: wP(), escapes: true, heavy: true, prog: `
good()
fd = os.open(os.path.join(staging, "model.bin"), os.O_RDWR)
m = mmap.mmap(fd, 0, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)
os.close(fd)


def child(r):
    after_exit(r, 0.5)
    m[0:8] = b"TAMPERED"
    m.flush()


escape(child)
`},
		{id: "19b", name: "escaped-child-creates-through-dirfd", want: wP(), escapes: true, heavy: true, prog: `
good()
dfd = os.open(staging, os.O_RDONLY | os.O_DIRECTORY)


def child(r):
    after_exit(r, 0.5)
    fd = os.open("evil.bin", os.O_CREAT | os.O_WRONLY | os.O_EXCL, 0o644, dir_fd=dfd)
    os.write(fd, b"evil")
    os.close(fd)


escape(child)
`},

		// The evaluation result.
		{id: "21", name: "eval-symlink-to-sentinel", want: wF(hActExecFails, "evaluation"), prog: `
write_files()
os.symlink(os.path.join(sentinel, "passed.json"), evalf)
`},
		{id: "23", name: "eval-duplicate-key", want: wF(hActExecFails, "duplicate"), prog: `
write_files()
write_eval(raw='{"passed":false,"passed":true}')
`},
		{id: "24", name: "eval-number-1e999", want: wF(hActExecFails, "evaluation"), prog: `
write_files()
write_eval(raw='{"passed": true, "x": 1e999}')
`},
		{id: "25", name: "eval-1e999-hides-wrong-claim", want: wF(hActExecFails, "evaluation"), prog: `
write_files()
write_eval(raw='{"passed": true, "files": {"model.bin": "' + "0" * 64 + '"}, "x": 1e999}')
`},
		{id: "27", name: "eval-passed-is-string", want: wF(hActExecFails, "evaluation"), prog: `
write_files()
write_eval(raw='{"passed": "true"}')
`},
		{id: "28", name: "eval-formatting-kept", want: wP(), prog: `
write_files()
write_eval(raw='{ "zeta" : 1.50, "passed" : true , "alpha": [1,2] }')
`, post: func(h *hctx, r *hrun) {
			if r.code != 0 {
				return
			}
			b, err := os.ReadFile(filepath.Join(h.pub, r.name, hManifest))
			if err != nil {
				h.fail("manifest: %v", err)
				return
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(b, &m); err != nil {
				h.fail("manifest: %v", err)
				return
			}
			var got bytes.Buffer
			if err := json.Compact(&got, m["eval"]); err != nil {
				h.fail("manifest eval %q: %v", m["eval"], err)
				return
			}
			if want := `{"zeta":1.50,"passed":true,"alpha":[1,2]}`; got.String() != want {
				h.fail("manifest eval is %s, want the evaluation's own bytes compacted: %s", got.String(), want)
			}
		}},
		{id: "29", name: "eval-nested-100000", want: wF(hActExecFails, "evaluation"), prog: `
write_files()
write_eval(raw='{"passed": true, "deep": ' + "[" * 100000 + "]" * 100000 + "}")
`},
		{id: "30", name: "eval-is-directory", want: wF(hActExecFails, "evaluation"), prog: `
write_files()
os.mkdir(evalf)
`},

		// The publisher's own files in the run directory.
		{id: "32", name: "verify-log-symlink-to-sentinel", want: wP(), prog: `
good()
p = os.path.join(rundir, "verify.stdout.log")
if os.path.lexists(p):
    os.remove(p)
os.symlink(os.path.join(sentinel, "target.txt"), p)
`, verify: `
sys.stdout.write("v" * 1023 + "\n")
`},
		{id: "34c", name: "journal-replaced-by-directory", want: wF(hActExecFails, "modified"), prog: `
good()
j = os.path.join(rundir, "journal.ndjson")
os.remove(j)
os.makedirs(os.path.join(j, "sub"))
`},
		{id: "35", name: "other-journal-to-dev-zero", want: wP(), heavy: true, recExits: []int{3}, prog: `
good()
runs = os.path.join(pub, ".tracecheck", "runs")
for d in os.listdir(runs):
    j = os.path.join(runs, d, "journal.ndjson")
    if d != myrun and not d.startswith(".") and os.path.exists(j):
        os.remove(j)
        os.symlink("/dev/zero", j)
`, setup: func(h *hctx) {
			setupKeep(h)
			for run := range h.setupRuns {
				h.setupRuns[run] = "error"
			}
		}, final: otherJournalFinal},
		{id: "36", name: "other-journal-fifo", want: wP(), heavy: true, recExits: []int{3}, prog: `
good()
runs = os.path.join(pub, ".tracecheck", "runs")
for d in os.listdir(runs):
    j = os.path.join(runs, d, "journal.ndjson")
    if d != myrun and not d.startswith(".") and os.path.exists(j):
        os.remove(j)
        os.mkfifo(j)
`, setup: func(h *hctx) {
			setupKeep(h)
			for run := range h.setupRuns {
				h.setupRuns[run] = "error"
			}
		}, final: otherJournalFinal},

		// Run directories no publisher made.
		{id: "37", name: "fake-run-staging-in-sentinel", want: wP(),
			sentinelExtra: sentinelRunDir(hFakeRun),
			setup: func(h *hctx) {
				plantFakeRun(h, hFakeRun, hFakeRun, "x", filepath.Join(h.sentinel, hFakeRun))
				h.setupRuns[hFakeRun] = hOutNotPublished
			}},
		{id: "37b", name: "fake-run-named-sentinel", want: wP(),
			setup: func(h *hctx) {
				plantFakeRun(h, "sentinel", "sentinel", "x", h.sentinel)
				h.setupRuns["sentinel"] = hOutNotPublished
			}},
		{id: "37c", name: "program-plants-fake-run", want: wP(), recExits: []int{0, 3},
			sentinelExtra: sentinelRunDir(hFakeRun2), prog: `
good()
fake = "` + hFakeRun2 + `"
d = os.path.join(pub, ".tracecheck", "runs", fake)
os.makedirs(d)
with open(os.path.join(d, "run.json"), "w") as f:
    json.dump({"run": fake, "name": "x", "publish_dir": pub, "staging": os.path.join(sentinel, fake),
               "journal": os.path.join(sentinel, "a.txt"), "command": ["python3"], "publisher_pid": 1,
               "created": "2026-01-01T00:00:00Z"}, f)
`},
		{id: "38", name: "fake-run-name-escapes", want: wP(), recExits: []int{3},
			sentinelExtra: sentinelRunDir(hFakeRun),
			setup: func(h *hctx) {
				plantFakeRun(h, hFakeRun, hFakeRun, "../../sentinel", filepath.Join(h.sentinel, hFakeRun))
			}},

		// The publisher's directories.
		{id: "39", name: "staging-root-symlink-to-sentinel", want: wF(""), recExits: []int{0, 3}, prog: `
good()
root = os.path.dirname(staging)
os.rename(root, root + ".aside")
os.symlink(sentinel, root)
`},
		{id: "40", name: "meta-dir-symlink-to-sentinel", want: hwant{label: "not published (exit 4 or 3)", exits: []int{4, 3}}, recExits: []int{3}, recNoRuns: true, prog: `
good()
meta = os.path.join(pub, ".tracecheck")
os.rename(meta, meta + ".aside")
os.symlink(sentinel, meta)
`},
		{id: "42", name: "target-dir-planted", want: wF(hActPubFails, "already published"), planted: true, prog: `
good()
d = os.path.join(pub, name)
os.makedirs(d)
with open(os.path.join(d, "theirs"), "wb") as f:
    f.write(b"theirs")
`, post: func(h *hctx, r *hrun) {
			got, problems, err := pubcheck.ReadCheckpoint(filepath.Join(h.pub, r.name))
			if err != nil || len(problems) > 0 {
				h.fail("the planted directory: %v %v", err, problems)
			} else if d := pubcheck.FilesDiff(got, map[string][]byte{"theirs": []byte("theirs")}); d != "" {
				h.fail("the planted directory was changed: %s", d)
			}
		}},
		{id: "43", name: "run-json-garbage", want: wF(hActExecFails, "modified"), prog: `
good()
with open(os.path.join(rundir, "run.json"), "wb") as f:
    f.write(b"garbage\n")
`},

		// The verify command.
		{id: "45", name: "verify-adds-file", want: wF(hActSaveFails, "verification"), verify: `
with open(os.path.join(ckpt, "extra.bin"), "wb") as f:
    f.write(b"extra")
`},
		{id: "46", name: "verify-symlinks-model-to-sentinel", want: wF(hActSaveFails, "unsafe file", "verification"), verify: `
p = os.path.join(ckpt, "model.bin")
os.remove(p)
os.symlink(os.path.join(sentinel, "target.txt"), p)
`},
		{id: "47b", name: "verify-deletes-manifest", want: wF(hActSaveFails, "verification"), verify: `
os.remove(os.path.join(ckpt, "tracecheck-manifest.json"))
`},
		{id: "49", name: "verify-hangs-sigterm", heavy: true, want: wI(hActInterrupt, hActIntBefore),
			flags:  func(*hctx) []string { return []string{"--grace", "1s"} },
			signal: &hsignal{sig: syscall.SIGTERM, glob: ".tracecheck/runs/*/verify.stdout.log", marker: "hanging", within: 15 * time.Second},
			verify: `
signal.signal(signal.SIGTERM, signal.SIG_IGN)
print("hanging", flush=True)
while True:
    time.sleep(1)
`},
		{id: "50", name: "program-hangs-sigint", heavy: true, want: wI(hActInterrupt),
			flags:  func(*hctx) []string { return []string{"--grace", "1s"} },
			signal: &hsignal{sig: syscall.SIGINT, glob: ".tracecheck/runs/*/stdout.log", marker: "hanging", within: 15 * time.Second},
			prog: `
signal.signal(signal.SIGTERM, signal.SIG_IGN)
write_files()
print("hanging", flush=True)
while True:
    time.sleep(1)
`},

		// Output floods.
		{id: "51", name: "stdout-64MiB", want: wP(), heavy: true, prog: `
good()
chunk = (b"o" * 1023 + b"\n") * 1024
for _ in range(64):
    sys.stdout.buffer.write(chunk)
sys.stdout.flush()
`, post: func(h *hctx, r *hrun) { checkLogCapped(h, r, "stdout.log") }},
		{id: "52", name: "stderr-64MiB-fails", want: wF(hActExecFails, "program failed"), heavy: true, prog: `
good()
chunk = (b"e" * 1023 + b"\n") * 1024
for _ in range(64):
    sys.stderr.buffer.write(chunk)
sys.stderr.flush()
sys.exit(1)
`, post: func(h *hctx, r *hrun) { checkLogCapped(h, r, "stderr.log") }},

		// Edits after publication.
		{id: "53", name: "post-edit-consistent", want: wP(),
			inspectWant: 1, recExits: []int{1}, recOutcome: hOutUnverified,
			post: func(h *hctx, r *hrun) {
				if r.code == 0 {
					forgeManifest(h, filepath.Join(h.pub, r.name), true)
				}
			}},
		{id: "54", name: "post-edit-model-only", want: wP(),
			inspectWant: 1, recExits: []int{1}, recOutcome: hOutUnverified,
			post: func(h *hctx, r *hrun) {
				if r.code == 0 {
					forgeManifest(h, filepath.Join(h.pub, r.name), false)
				}
			}},

		// Flags.
		{id: "55", name: "staging-root-inside-pub", want: wR(),
			flags: func(h *hctx) []string { return []string{"--staging-root", filepath.Join(h.pub, "sub")} },
			final: noRunStarted},
		{id: "56", name: "staging-root-is-pub", want: wR(),
			flags: func(h *hctx) []string { return []string{"--staging-root", h.pub} },
			final: noRunStarted},
		{id: "57", name: "name-bidi-override", want: wU(), ckName: "evil\u202etxt", final: pubEmpty},
		{id: "58", name: "name-not-utf8", want: wU(), ckName: "\xffname", final: pubEmpty},

		// Concurrency and odd programs.
		{id: "59", name: "four-concurrent-runs", want: wP(), runs: 4, heavy: true},
		{id: "60a", name: "lock-replaced-by-dir", want: hwant{label: "any; if published then inspect 0", exits: []int{0, 4}},
			recExits: []int{0, 3}, recLenient: true, prog: `
good()
for lock in (os.path.join(rundir, "lock"), rundir + ".lock"):
    if os.path.lexists(lock):
        os.remove(lock)
        os.mkdir(lock)
`},
		{id: "60b", name: "staging-recreated", want: hwant{label: "any; if published then inspect 0", exits: []int{0, 4}},
			files: map[string][]byte{"other.bin": hTamper, "sub/vocab.txt": hVocab}, prog: `
write_files()
write_eval({"passed": True, "files": {"model.bin": sha(MODEL)}})
shutil.rmtree(staging)
write_files(files={"other.bin": TAMPER, "sub/vocab.txt": VOCAB})
`},
	}...)
}

// sharedCases are pubcheck.HostilePrograms as cases of this test: the
// same scripts and outcomes the gate requires, with this test's further
// checks.
func sharedCases() []*hostileCase {
	heavy := map[string]bool{"18": true, "20": true, "48": true}
	var out []*hostileCase
	for _, p := range pubcheck.HostilePrograms() {
		c := &hostileCase{id: p.ID, name: p.Name, prog: p.Prog, verify: p.Verify,
			escapes: p.Escapes, planted: p.Planted, heavy: heavy[p.ID]}
		switch p.Exit {
		case 0:
			c.want = wP()
		case 4:
			c.want = wF(p.Last, p.Text)
		case -1:
			c.want = hwant{label: "publisher SIGKILLed: nothing published", exits: []int{-1}}
		default:
			panic(fmt.Sprintf("hostile program %s: exit %d has no case shape", p.ID, p.Exit))
		}
		if p.Planted {
			c.post = func(h *hctx, r *hrun) {
				target, err := os.Readlink(filepath.Join(h.pub, r.name))
				if err != nil || target != h.sentinel {
					h.fail("the planted symlink %s was replaced: readlink = %q, %v", r.name, target, err)
				}
			}
		}
		out = append(out, c)
	}
	return out
}

// otherJournalFinal: after R2, a third good run publishes despite R1's
// broken journal; R1's checkpoint bytes still verify against its manifest,
// but inspect cannot confirm them against the run's receipts, which were
// destroyed, and says so (exit 1, journal unreadable) without hanging.
func otherJournalFinal(h *hctx, _ []*hrun, _ []hrep) {
	h.t.Helper()
	r3 := h.goodRun("third")
	h.t.Logf("R3: %s, %v", h.describe(r3), r3.dur.Round(time.Millisecond))
	switch {
	case r3.hung:
		h.fail("R3 hung (start-up recovery of R1's broken journal?)")
	case r3.code != 0:
		h.fail("R3 did not publish: %s", h.describe(r3))
	default:
		h.inspect(filepath.Join(h.pub, "third"), 0)
	}
	if _, err := checkpoint.Verify(context.Background(), checkpoint.OSFS{}, filepath.Join(h.pub, "keep"), nil); err != nil {
		h.fail("R1's checkpoint no longer verifies against its manifest: %v", err)
	}
	h.inspect(filepath.Join(h.pub, "keep"), 1)
	if r := h.tc("inspect", filepath.Join(h.pub, "keep")); !strings.Contains(r.stdout, "journal: unreadable") {
		h.fail("inspect keep does not say the journal is unreadable: %s", clip(r.stdout, 300))
	}
}

// noRunStarted: a refused run leaves no run directory and no checkpoint.
func noRunStarted(h *hctx, runs []*hrun, _ []hrep) {
	h.t.Helper()
	if d := h.runDirs(); len(d) > 0 {
		h.fail("a refused run left run directories: %v", slices.Sorted(maps.Keys(d)))
	}
}

// pubEmpty: a usage error touches nothing.
func pubEmpty(h *hctx, _ []*hrun, _ []hrep) {
	h.t.Helper()
	ents, _ := os.ReadDir(h.pub)
	if len(ents) > 0 {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		h.fail("a usage error left entries in the publish directory: %q", names)
	}
}
