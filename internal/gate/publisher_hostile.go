package gate

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

// The hostile programs: a representative subset of harness/pubcheck's
// TestHostile (docs/publisher.md, threat model), run through the real CLI
// (`tracecheck run`, a child subreaper) in a root T holding pub/ (the
// publish directory), sentinel/ (a tree outside it that the scripts plant
// links to, never write) and the scripts. Each asserts the exit code, the
// journal's last action and the error, the published bytes (exactly the
// program's) or that nothing is published, inspect, a valid journal,
// recovery, no process of the case alive, and that nothing under T
// outside pub/ changed.

// hostilePrelude starts every script (as hostile_test.go's).
const hostilePrelude = `import hashlib, json, os, shutil, signal, sys, time
E = os.environ
staging = E.get("TRACECHECK_STAGING_DIR", "")
evalf = E.get("TRACECHECK_EVAL_FILE", "")
rundir = os.path.dirname(evalf) if evalf else ""
pub = os.path.dirname(os.path.dirname(os.path.dirname(staging))) if staging else ""
ckpt = E.get("TRACECHECK_CHECKPOINT_DIR", "")
name = E.get("TRACECHECK_CHECKPOINT_NAME", "")
sentinel = E["HOSTILE_SENTINEL"]
token = E["HOSTILE_TOKEN"]
MODEL = bytes((i * 7 + 3) % 251 for i in range(4096))
VOCAB = b"hello\nworld\n"
TAMPER = bytes(255 - b for b in MODEL)


def sha(b):
    return hashlib.sha256(b).hexdigest()


def write_files(d=None):
    d = d or staging
    for rel, b in {"model.bin": MODEL, "sub/vocab.txt": VOCAB}.items():
        p = os.path.join(d, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "wb") as f:
            f.write(b)


def write_eval(obj=None, raw=None):
    if raw is None:
        raw = json.dumps(obj if obj is not None else {"passed": True, "metrics": {"loss": 0.25}})
    if isinstance(raw, str):
        raw = raw.encode()
    with open(evalf, "wb") as f:
        f.write(raw)


def good():
    write_files()
    write_eval()


_keep = []


def escape(child):
    """Run child(r) in a grandchild that left the process group and the
    session (fork, setsid, fork); r reaches EOF when this process exits."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        try:
            os.setsid()
            if os.fork() != 0:
                os._exit(0)
            os.close(w)
            child(r)
        except BaseException:
            pass
        os._exit(0)
    os.close(r)
    os.waitpid(pid, 0)
    _keep.append(w)


def after_exit(r, delay=0.0):
    while os.read(r, 1):
        pass
    time.sleep(delay)


`

// hostileGood is what good() publishes.
var hostileGood = func() map[string][]byte {
	m := make([]byte, 4096)
	for i := range m {
		m[i] = byte((i*7 + 3) % 251)
	}
	return map[string][]byte{"model.bin": m, "sub/vocab.txt": []byte("hello\nworld\n")}
}()

// hostileCase is one hostile program and what the publisher must do.
type hostileCase struct {
	id, name string
	// prog is the program's body after the prelude ("" = good());
	// verify, if set, the verify command's.
	prog, verify string
	// exit is `tracecheck run`'s exit code (-1: the publisher was killed).
	exit int
	// last is the journal's last action; text a case-insensitive
	// substring of the error.
	last, text string
	// escapes: children outlive the program and try to write after it.
	escapes bool
	// planted: the program plants pub/model itself; post checks it.
	planted bool
	post    func(h *hostileRun, res *pubResult)
}

// hostileRun is one case's world.
type hostileRun struct {
	root, pub, sentinel string
	token               string
	run                 string // the run's ID
}

func hostileCases() []*hostileCase {
	const (
		published = 0
		failed    = 4
	)
	return []*hostileCase{
		{id: "02", name: "staging-symlink-to-sentinel", exit: failed, last: aExecFails, text: "unsafe file", prog: `
good()
shutil.rmtree(staging)
os.symlink(sentinel, staging)
`},
		{id: "07", name: "symlink-inside-staging", exit: failed, last: aSaveFails, text: "unsafe file", prog: `
good()
os.symlink(os.path.join(sentinel, "target.txt"), os.path.join(staging, "link.txt"))
`},
		{id: "08", name: "hardlink-to-sentinel", exit: failed, last: aSaveFails, text: "unsafe file", prog: `
good()
os.link(os.path.join(sentinel, "target.txt"), os.path.join(staging, "hard.txt"))
`},
		{id: "09", name: "fifo-inside-staging", exit: failed, last: aSaveFails, text: "unsafe file", prog: `
good()
os.mkfifo(os.path.join(staging, "pipe"))
`},
		{id: "18", name: "escaped-child-empty-env", exit: published, last: aPublishes, escapes: true, prog: `
good()
fd = os.open(os.path.join(staging, "model.bin"), os.O_RDWR)
os.set_inheritable(fd, True)
CODE = "import os, sys, time\nr, fd = int(sys.argv[1]), int(sys.argv[2])\nwhile os.read(r, 1):\n    pass\ntime.sleep(0.5)\nos.pwrite(fd, b'TAMPERED', 0)\n"


def child(r):
    os.set_inheritable(r, True)
    os.execve(sys.executable, [sys.executable, "-I", "-S", "-c", CODE, str(r), str(fd), token], {})


escape(child)
`},
		{id: "20", name: "eval-fifo", exit: failed, last: aExecFails, text: "evaluation", prog: `
write_files()
os.mkfifo(evalf)
`},
		{id: "22", name: "eval-symlink-dev-zero", exit: failed, last: aExecFails, text: "evaluation", prog: `
write_files()
os.symlink("/dev/zero", evalf)
`},
		{id: "26", name: "eval-over-1MiB", exit: failed, last: aExecFails, text: "1 MiB", prog: `
write_files()
write_eval({"passed": True, "pad": "x" * (2 << 20)})
`},
		{id: "31", name: "eval-wrong-claim", exit: failed, last: aSaveFails, text: "verification", prog: `
write_files()
write_eval({"passed": True, "files": {"model.bin": "0" * 64}})
`},
		{id: "33", name: "stdout-log-symlink-to-sentinel", exit: published, last: aPublishes, prog: `
good()
p = os.path.join(rundir, "stdout.log")
os.remove(p)
os.symlink(os.path.join(sentinel, "target.txt"), p)
print("o" * 1000, flush=True)
`},
		{id: "34", name: "journal-garbage-appended", exit: failed, last: aExecFails, text: "modified", prog: `
good()
with open(os.path.join(rundir, "journal.ndjson"), "ab") as f:
    f.write(b"GARBAGE, not a receipt\n")
`},
		{id: "34b", name: "journal-replaced-by-symlink-to-sentinel", exit: failed, last: aExecFails, text: "modified", prog: `
good()
j = os.path.join(rundir, "journal.ndjson")
os.remove(j)
os.symlink(os.path.join(sentinel, "target.txt"), j)
`},
		{id: "41", name: "target-symlink-to-sentinel", exit: failed, last: aPubFails, text: "publication failed", planted: true, prog: `
good()
os.symlink(sentinel, os.path.join(pub, name))
`, post: func(h *hostileRun, res *pubResult) {
			if target, err := os.Readlink(filepath.Join(h.pub, "model")); err != nil || target != h.sentinel {
				res.fail("the planted symlink was replaced: readlink = %q, %v", target, err)
			}
		}},
		{id: "44", name: "verify-rewrites-model", exit: failed, last: aSaveFails, text: "verification", verify: `
with open(os.path.join(ckpt, "model.bin"), "r+b") as f:
    f.write(TAMPER)
`},
		{id: "47", name: "verify-forges-manifest", exit: failed, last: aSaveFails, text: "verification", verify: `
p = os.path.join(ckpt, "model.bin")
with open(p, "wb") as f:
    f.write(TAMPER)
mp = os.path.join(ckpt, "tracecheck-manifest.json")
with open(mp) as f:
    text = f.read()
m = json.loads(text)
old = m["digest"]


def digest(files):
    return "sha256:" + sha(json.dumps(files, separators=(",", ":")).encode())


for e in m["files"]:
    if e["path"] == "model.bin" and "sha256" in e:
        text = text.replace(e["sha256"], sha(TAMPER))
        e["sha256"] = sha(TAMPER)
text = text.replace(old, digest(m["files"]))
with open(mp, "w") as f:
    f.write(text)
`},
		{id: "48", name: "verify-escaped-child", exit: published, last: aPublishes, escapes: true, verify: `
fd = os.open(os.path.join(ckpt, "model.bin"), os.O_RDWR)


def child(r):
    after_exit(r, 0.5)
    os.pwrite(fd, b"TAMPERED", 0)


escape(child)
`},
		{id: "61", name: "program-kills-publisher", exit: -1, prog: `
good()
os.kill(os.getppid(), signal.SIGKILL)
time.sleep(5)
`},
	}
}

// cliCheck returns the CLI binary (Options.Exe) once it answers `run
// --help` as tracecheck's run does.
func (pe *pubEnv) cliCheck(ctx context.Context) (string, error) {
	exe := pe.r.opt.Exe
	if strings.HasSuffix(exe, ".test") {
		// A go test binary would run its tests, this one included.
		return "", fmt.Errorf("%s is a test binary, not tracecheck: set Options.Exe to a tracecheck binary (the crash campaign and the hostile cases run it)", exe)
	}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	out, _ := exec.CommandContext(cctx, exe, "run", "--help").CombinedOutput()
	if !bytes.Contains(out, []byte("--publish-dir")) {
		return "", fmt.Errorf("%s is not a tracecheck binary with a run command (the crash campaign and the hostile cases run it): %q", exe, firstLine(string(out)))
	}
	return exe, nil
}

// runHostile runs one hostile case through the CLI and checks it.
func (pe *pubEnv) runHostile(ctx context.Context, cli string, c *hostileCase, res *pubResult) {
	start := time.Now()
	defer func() { res.elapsed = time.Since(start) }()
	pub, err := pe.r.path("publisher", "hostile", c.id+"-"+c.name, "pub")
	if err != nil {
		res.fail("%v", err)
		return
	}
	var tok [8]byte
	_, _ = rand.Read(tok[:])
	h := &hostileRun{root: filepath.Dir(pub), pub: pub, sentinel: filepath.Join(filepath.Dir(pub), "sentinel"),
		token: "hostile-token-" + hex.EncodeToString(tok[:])}
	tokenProcs := func() []int { return tokenProcesses(h.token) }
	defer func() {
		if pids := tokenProcs(); len(pids) > 0 {
			killPids(pids)
		}
	}()
	if err := os.Mkdir(pub, 0o755); err != nil {
		res.fail("%v", err)
		return
	}
	if err := writeSentinel(h.sentinel); err != nil {
		res.fail("%v", err)
		return
	}
	body := c.prog
	if body == "" {
		body = "good()\n"
	}
	if err := os.WriteFile(filepath.Join(h.root, "prog.py"), []byte(hostilePrelude+body), 0o644); err != nil {
		res.fail("%v", err)
		return
	}
	args := []string{"run", "--quiet", "--grace", "2s", "--publish-dir", pub, "--name", "model"}
	if c.verify != "" {
		if err := os.WriteFile(filepath.Join(h.root, "verify.py"), []byte(hostilePrelude+c.verify), 0o644); err != nil {
			res.fail("%v", err)
			return
		}
		// Relative: --verify-cmd is split on spaces; the CLI runs in T.
		args = append(args, "--verify-cmd", strings.Join(append(append([]string(nil), pe.py...), "verify.py"), " "))
	}
	args = append(append(append(args, "--"), pe.py...), "prog.py")
	before, err := treeSnapshot(h.root, "pub")
	if err != nil {
		res.fail("snapshot: %v", err)
		return
	}

	// The run, under a step timeout that kills its process group.
	cctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(cctx, cli, args...)
	cmd.Dir = h.root
	cmd.Env = append(append([]string(nil), pe.env...), "HOSTILE_SENTINEL="+h.sentinel, "HOSTILE_TOKEN="+h.token)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err = cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		res.fail("tracecheck run: %v", err)
		return
	}
	if cctx.Err() != nil {
		res.fail("tracecheck run hung: no exit within 60 s")
		return
	}
	code := cmd.ProcessState.ExitCode()
	for _, l := range strings.Split(stdout.String(), "\n") {
		if s, ok := strings.CutPrefix(l, "run:"); ok {
			h.run = strings.TrimSpace(s)
		}
	}
	if h.run == "" { // a publisher killed before it printed: its one run directory
		ents, _ := os.ReadDir(filepath.Join(pub, checkpoint.MetaDir, "runs"))
		for _, e := range ents {
			if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
				h.run = e.Name()
			}
		}
	}
	switch {
	case code != c.exit:
		res.fail("tracecheck run: exit %d, want %d: %s", code, c.exit, firstLine(errLines(stdout.String(), stderr.String())))
	case h.run == "":
		res.fail("no run ID (no run: line, no run directory)")
		return
	}
	switch code {
	case 0:
		res.outcome = checkpoint.PhasePublished.String()
	case 4:
		res.outcome = checkpoint.PhaseFailed.String()
	case 5:
		res.outcome = checkpoint.PhaseInterrupted.String()
	default:
		res.outcome = "killed"
	}
	if c.text != "" && !strings.Contains(strings.ToLower(errLines(stdout.String(), stderr.String())), strings.ToLower(c.text)) {
		res.fail("the error %q does not say %q", firstLine(errLines(stdout.String(), stderr.String())), c.text)
	}
	journal := filepath.Join(pub, checkpoint.MetaDir, "runs", h.run, "journal.ndjson")
	last, jerr := lastAction(journal)
	switch {
	case jerr != nil:
		res.fail("journal: %v", jerr)
	case c.last != "" && last != c.last:
		res.fail("the journal's last action is %s, want %s", last, c.last)
	}
	if c.escapes {
		if pids := awaitNoProcesses(tokenProcs, 10*time.Second); len(pids) > 0 {
			res.fail("processes of the case alive 10 s after the run: %v", pids)
			killPids(pids)
		}
	}

	// What is published: exactly the program's bytes, or nothing.
	target := filepath.Join(pub, "model")
	if code == 0 {
		got, problems, err := readCheckpointTree(target)
		switch {
		case err != nil:
			res.fail("the published checkpoint: %v", err)
		case len(problems) > 0:
			res.fail("the published checkpoint holds unsafe entries: %s", strings.Join(problems, "; "))
		case !sameFiles(got, hostileGood):
			res.fail("the published checkpoint is not the program's bytes (after every process of the case ended)")
		}
		checkPublished(ctx, res, target, h.run, "")
	} else if _, err := os.Lstat(target); err == nil && !c.planted {
		res.fail("exit %d, but %s exists", code, target)
	}
	if c.post != nil {
		c.post(h, res)
	}

	// The journal: valid if the publisher ended the run itself.
	if jerr == nil {
		ended := code == 0 || code == 4 || code == 5
		if v := pe.journalVerdict(ctx, res, journal, !ended); ended && v != check.Valid {
			res.fail("journal verdict %s, want valid", v)
		}
	}
	if pids := awaitNoProcesses(func() []int { return runProcesses(h.run) }, 3*time.Second); len(pids) > 0 {
		res.fail("processes of the run alive: %v", pids)
		killPids(pids)
	}

	// Recovery tells the truth and leaves no staging.
	reps, err := recoverOne(ctx, pub)
	if err != nil {
		res.fail("recover: %v", err)
	}
	want := checkpoint.OutcomeNotPublished
	if code == 0 {
		want = checkpoint.OutcomePublished
	}
	found := false
	for _, rep := range reps {
		if rep.Run != h.run {
			continue
		}
		found = true
		if rep.Outcome != want || rep.Error != "" {
			res.fail("recover reports %s (error %q, notes %q), want %s", rep.Outcome, rep.Error, rep.Notes, want)
		}
	}
	if !found && err == nil {
		res.fail("recover does not report run %s", h.run)
	}
	if ents, _ := os.ReadDir(filepath.Join(pub, checkpoint.MetaDir, "staging")); len(ents) > 0 {
		res.fail("staging leftovers after recovery: %v", ents)
	}

	after, err := treeSnapshot(h.root, "pub")
	if err != nil {
		res.fail("snapshot: %v", err)
	} else if d := snapshotDiff(before, after); d != "" {
		res.fail("outside the publish directory: %s", d)
	}
}

// errLines is what `run` printed about an error: its error: line and
// stderr.
func errLines(stdout, stderr string) string {
	var b strings.Builder
	for _, l := range strings.Split(stdout, "\n") {
		if s := strings.TrimSpace(l); strings.HasPrefix(s, "error:") {
			b.WriteString(s + "\n")
		}
	}
	b.WriteString(stderr)
	return b.String()
}

// lastAction is the action of a journal's last receipt, read without
// following a symlink or blocking on a FIFO.
func lastAction(path string) (string, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if err != nil {
		return "", err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", fmt.Errorf("%s is not a regular file (%v)", path, err)
	}
	s, err := checkpoint.ReadJournal(f)
	if err != nil {
		return "", err
	}
	if len(s.Events) == 0 {
		return "", nil
	}
	return s.Events[len(s.Events)-1].Action, nil
}

// readCheckpointTree reads a published checkpoint's files (the manifest
// left out) without following symlinks; problems lists what is not a
// directory or a single-link regular file.
func readCheckpointTree(dir string) (map[string][]byte, []string, error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, nil, err
	}
	if !fi.IsDir() {
		return nil, nil, fmt.Errorf("%s is not a directory (%s)", dir, fi.Mode().Type())
	}
	files := map[string][]byte{}
	var problems []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if rel == "." || rel == checkpoint.ManifestName {
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		switch {
		case fi.IsDir():
		case fi.Mode().IsRegular():
			if st, ok := fi.Sys().(*syscall.Stat_t); ok && st.Nlink > 1 {
				problems = append(problems, fmt.Sprintf("%q has %d hard links", rel, st.Nlink))
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files[filepath.ToSlash(rel)] = b
		default:
			problems = append(problems, fmt.Sprintf("%q is a %s", rel, fi.Mode().Type()))
		}
		return nil
	})
	return files, problems, err
}

func sameFiles(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || !bytes.Equal(v, w) {
			return false
		}
	}
	return true
}

// tokenProcesses lists the live processes whose environment or command
// line carries token (escaped children, re-executed ones included).
func tokenProcesses(token string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if bytes.Contains(env, []byte(token)) || bytes.Contains(cmdline, []byte(token)) {
			if stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); !bytes.Contains(stat, []byte(") Z ")) {
				pids = append(pids, pid)
			}
		}
	}
	return slices.Clip(pids)
}
