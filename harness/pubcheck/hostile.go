package pubcheck

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

// The hostile programs of the publisher's threat model (docs/publisher.md):
// Python scripts that attack the publisher running them, and the pieces
// that check what it did — a snapshot of the tree around the publish
// directory, the published checkpoint read back without following links,
// and the processes a case left behind. TestHostile runs every case of the
// threat model; the gate (tracecheck verify) runs HostilePrograms, a
// representative subset, through the same scripts.
//
// A case's world is a root T holding the publish directory T/pub, a
// sentinel tree T/sentinel (WriteSentinel) that the scripts plant links
// and references to but never write, and the scripts. The scripts read
// HOSTILE_SENTINEL (T/sentinel) and HOSTILE_TOKEN (a random string that
// marks every process of the case, escaped ones included: TokenProcesses)
// from their environment.

// HostilePrelude starts every hostile script, program or verify command.
// It defines the paths the publisher gives the program (staging, evalf,
// rundir, pub, ckpt, name, myrun), the sentinel and token, the good
// checkpoint's bytes (MODEL, VOCAB) and a tampered model (TAMPER), and
// write_files, write_eval, good (a good program), escape (run a function
// in a grandchild that left the process group and the session) and
// after_exit.
const HostilePrelude = `import hashlib, json, mmap, os, shutil, signal, socket, sys, time
E = os.environ
staging = E.get("TRACECHECK_STAGING_DIR", "")
evalf = E.get("TRACECHECK_EVAL_FILE", "")
rundir = os.path.dirname(evalf) if evalf else ""
pub = os.path.dirname(os.path.dirname(os.path.dirname(staging))) if staging else ""
ckpt = E.get("TRACECHECK_CHECKPOINT_DIR", "")
name = E.get("TRACECHECK_CHECKPOINT_NAME", "")
myrun = E.get("TRACECHECK_RUN_ID", "")
sentinel = E["HOSTILE_SENTINEL"]
token = E["HOSTILE_TOKEN"]
MODEL = bytes((i * 7 + 3) % 251 for i in range(4096))
VOCAB = b"hello\nworld\n"
TAMPER = bytes(255 - b for b in MODEL)


def sha(b):
    return hashlib.sha256(b).hexdigest()


def write_files(d=None, files=None):
    d = d or staging
    files = files if files is not None else {"model.bin": MODEL, "sub/vocab.txt": VOCAB}
    for rel, b in files.items():
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

// HostileCheckpoint returns the files good() writes: what a published
// checkpoint must hold, byte for byte, when a hostile program's run
// publishes.
func HostileCheckpoint() map[string][]byte {
	m := make([]byte, 4096)
	for i := range m {
		m[i] = byte((i*7 + 3) % 251)
	}
	return map[string][]byte{"model.bin": m, "sub/vocab.txt": []byte("hello\nworld\n")}
}

// HostileTamper returns TAMPER, the bytes a hostile script writes over
// model.bin.
func HostileTamper() []byte {
	b := HostileCheckpoint()["model.bin"]
	for i, c := range b {
		b[i] = 255 - c
	}
	return b
}

// WriteSentinel writes the sentinel tree at dir: files that no run may
// change, among them target.txt (a link target) and passed.json (an
// evaluation that passes).
func WriteSentinel(dir string) error {
	files := map[string][]byte{
		"a.txt":       []byte("sentinel a: must never change\n"),
		"b.bin":       bytes.Repeat([]byte{0, 1, 2, 254, 255}, 1000),
		"sub/c.txt":   []byte("sentinel c\n"),
		"target.txt":  []byte("link target: must never change\n"),
		"passed.json": []byte(`{"passed": true}` + "\n"),
	}
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(p, body, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// HostileProgram is one hostile program (and verify command) and what the
// publisher must do with it.
type HostileProgram struct {
	// ID is the case's number in TestHostile ("02", "34b", ...); Name
	// says what the script does.
	ID, Name string
	// Prog is the program's Python body after HostilePrelude ("" means
	// good()); Verify, if set, the --verify-cmd's.
	Prog, Verify string
	// Exit is `tracecheck run`'s exit code: 0 published, 4 failed, -1
	// the publisher is killed.
	Exit int
	// Last is the journal's last action ("" when not checked); Text a
	// case-insensitive substring of the error.
	Last, Text string
	// Escapes: children outlive the program and try to write after it.
	Escapes bool
	// Planted: the program plants PUBLISH_DIR/NAME as a symlink to the
	// sentinel, which must still be there, unchanged, afterwards.
	Planted bool
}

// HostilePrograms returns the hostile programs the gate runs: one or two
// of each class of the threat model — the staging directory and entries
// in it, escaped children, the evaluation file, the publisher's own files,
// the publication target, the verify command, and the program killing
// its publisher.
func HostilePrograms() []HostileProgram {
	const (
		published = 0
		failed    = 4
	)
	return []HostileProgram{
		{ID: "02", Name: "staging-symlink-to-sentinel", Exit: failed, Last: checkpoint.ActionExecutionFails, Text: "unsafe file", Prog: `
good()
shutil.rmtree(staging)
os.symlink(sentinel, staging)
`},
		{ID: "07", Name: "symlink-inside-staging", Exit: failed, Last: checkpoint.ActionSaveOrVerificationFails, Text: "unsafe file", Prog: `
good()
os.symlink(os.path.join(sentinel, "target.txt"), os.path.join(staging, "link.txt"))
`},
		{ID: "08", Name: "hardlink-to-sentinel", Exit: failed, Last: checkpoint.ActionSaveOrVerificationFails, Text: "unsafe file", Prog: `
good()
os.link(os.path.join(sentinel, "target.txt"), os.path.join(staging, "hard.txt"))
`},
		{ID: "09", Name: "fifo-inside-staging", Exit: failed, Last: checkpoint.ActionSaveOrVerificationFails, Text: "unsafe file", Prog: `
good()
os.mkfifo(os.path.join(staging, "pipe"))
`},
		{ID: "18", Name: "escaped-child-empty-env", Exit: published, Last: checkpoint.ActionAtomicPublication, Escapes: true, Prog: `
good()
fd = os.open(os.path.join(staging, "model.bin"), os.O_RDWR)
os.set_inheritable(fd, True)
CODE = "import os, sys, time\nr, fd = int(sys.argv[1]), int(sys.argv[2])\nwhile os.read(r, 1):\n    pass\ntime.sleep(0.5)\nos.pwrite(fd, b'TAMPERED', 0)\n"


def child(r):
    os.set_inheritable(r, True)
    os.execve(sys.executable, [sys.executable, "-I", "-S", "-c", CODE, str(r), str(fd), token], {})


escape(child)
`},
		{ID: "20", Name: "eval-fifo", Exit: failed, Last: checkpoint.ActionExecutionFails, Text: "evaluation", Prog: `
write_files()
os.mkfifo(evalf)
`},
		{ID: "22", Name: "eval-symlink-dev-zero", Exit: failed, Last: checkpoint.ActionExecutionFails, Text: "evaluation", Prog: `
write_files()
os.symlink("/dev/zero", evalf)
`},
		{ID: "26", Name: "eval-over-1MiB", Exit: failed, Last: checkpoint.ActionExecutionFails, Text: "1 MiB", Prog: `
write_files()
write_eval({"passed": True, "pad": "x" * (2 << 20)})
`},
		{ID: "31", Name: "eval-wrong-claim", Exit: failed, Last: checkpoint.ActionSaveOrVerificationFails, Text: "verification", Prog: `
write_files()
write_eval({"passed": True, "files": {"model.bin": "0" * 64}})
`},
		{ID: "33", Name: "stdout-log-symlink-to-sentinel", Exit: published, Last: checkpoint.ActionAtomicPublication, Prog: `
good()
p = os.path.join(rundir, "stdout.log")
os.remove(p)
os.symlink(os.path.join(sentinel, "target.txt"), p)
print("o" * 1000, flush=True)
`},
		{ID: "34", Name: "journal-garbage-appended", Exit: failed, Last: checkpoint.ActionExecutionFails, Text: "modified", Prog: `
good()
with open(os.path.join(rundir, "journal.ndjson"), "ab") as f:
    f.write(b"GARBAGE, not a receipt\n")
`},
		{ID: "34b", Name: "journal-replaced-by-symlink-to-sentinel", Exit: failed, Last: checkpoint.ActionExecutionFails, Text: "modified", Prog: `
good()
j = os.path.join(rundir, "journal.ndjson")
os.remove(j)
os.symlink(os.path.join(sentinel, "target.txt"), j)
`},
		{ID: "41", Name: "target-symlink-to-sentinel", Exit: failed, Last: checkpoint.ActionPublicationFails, Text: "publication failed", Planted: true, Prog: `
good()
os.symlink(sentinel, os.path.join(pub, name))
`},
		{ID: "44", Name: "verify-rewrites-model", Exit: failed, Last: checkpoint.ActionSaveOrVerificationFails, Text: "verification", Verify: `
with open(os.path.join(ckpt, "model.bin"), "r+b") as f:
    f.write(TAMPER)
`},
		{ID: "47", Name: "verify-forges-manifest", Exit: failed, Last: checkpoint.ActionSaveOrVerificationFails, Text: "verification", Verify: `
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
		{ID: "48", Name: "verify-escaped-child", Exit: published, Last: checkpoint.ActionAtomicPublication, Escapes: true, Verify: `
fd = os.open(os.path.join(ckpt, "model.bin"), os.O_RDWR)


def child(r):
    after_exit(r, 0.5)
    os.pwrite(fd, b"TAMPERED", 0)


escape(child)
`},
		{ID: "61", Name: "program-kills-publisher", Exit: -1, Prog: `
good()
os.kill(os.getppid(), signal.SIGKILL)
time.sleep(5)
`},
	}
}

// Tree is a snapshot of a directory tree: for each entry (by slash path
// relative to the root), its mode, size, mtime and the SHA-256 of a
// regular file or the target of a symlink.
type Tree map[string]string

// SnapshotTree describes every entry under root except the ones named in
// skip (paths relative to root; a directory's whole subtree is skipped).
// It follows no link.
func SnapshotTree(root string, skip ...string) (Tree, error) {
	t := Tree{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		rel = filepath.ToSlash(rel)
		if slices.Contains(skip, rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		line := fmt.Sprintf("mode=%v size=%d mtime=%d", fi.Mode(), fi.Size(), fi.ModTime().UnixNano())
		switch {
		case fi.Mode().IsRegular():
			f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
			if err != nil {
				return err
			}
			h := sha256.New()
			_, err = io.Copy(h, f)
			f.Close()
			if err != nil {
				return err
			}
			line += " sha256=" + hex.EncodeToString(h.Sum(nil))
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := os.Readlink(p)
			if err != nil {
				return err
			}
			line += fmt.Sprintf(" -> %q", target)
		}
		t[rel] = line
		return nil
	})
	return t, err
}

// Diff returns the first difference between t and after ("" if none),
// preferring a created, removed or changed file to a directory whose
// mtime or size changed because of it, and says how many there are.
func (t Tree) Diff(after Tree) string {
	paths := slices.Sorted(func(yield func(string) bool) {
		for p := range t {
			if !yield(p) {
				return
			}
		}
		for p := range after {
			if _, ok := t[p]; !ok && !yield(p) {
				return
			}
		}
	})
	var diffs, dirDiffs []string
	for _, p := range paths {
		a, inA := t[p]
		b, inB := after[p]
		switch {
		case !inA:
			diffs = append(diffs, fmt.Sprintf("created: %q %s", p, b))
		case !inB:
			diffs = append(diffs, fmt.Sprintf("removed: %q %s", p, a))
		case a != b && strings.HasPrefix(a, "mode=d") && strings.HasPrefix(b, "mode=d"):
			dirDiffs = append(dirDiffs, fmt.Sprintf("changed: %q %s  =>  %s", p, a, b))
		case a != b:
			diffs = append(diffs, fmt.Sprintf("changed: %q %s  =>  %s", p, a, b))
		}
	}
	all := append(diffs, dirDiffs...)
	switch len(all) {
	case 0:
		return ""
	case 1:
		return all[0]
	default:
		return fmt.Sprintf("%s (and %d more differences)", all[0], len(all)-1)
	}
}

// maxCheckpointFile bounds what ReadCheckpoint reads of one file.
const maxCheckpointFile = 128 << 20

// ReadCheckpoint reads a published checkpoint's files (the manifest left
// out) by slash path, following no symlink and opening nothing that is
// not a regular file; problems lists every entry that is neither a
// directory nor a regular file with one link.
func ReadCheckpoint(dir string) (files map[string][]byte, problems []string, err error) {
	fi, err := os.Lstat(dir)
	if err != nil {
		return nil, nil, err
	}
	if !fi.IsDir() {
		return nil, nil, fmt.Errorf("%s is not a directory (%s)", filepath.Base(dir), fi.Mode().Type())
	}
	files = map[string][]byte{}
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
			f, err := os.OpenFile(p, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
			if err != nil {
				return err
			}
			b, err := io.ReadAll(io.LimitReader(f, maxCheckpointFile))
			f.Close()
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

// FilesDiff returns the first difference between two checkpoints' files
// ("" if they are equal).
func FilesDiff(got, want map[string][]byte) string {
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range got {
			if !yield(k) {
				return
			}
		}
		for k := range want {
			if _, ok := got[k]; !ok && !yield(k) {
				return
			}
		}
	})
	for _, k := range keys {
		g, gok := got[k]
		w, wok := want[k]
		switch {
		case !gok:
			return fmt.Sprintf("%q missing", k)
		case !wok:
			return fmt.Sprintf("unexpected file %q (%d bytes)", k, len(g))
		case !bytes.Equal(g, w):
			return fmt.Sprintf("%q differs: %d bytes starting %q, want %d bytes starting %q", k, len(g), prefix(g), len(w), prefix(w))
		}
	}
	return ""
}

func prefix(b []byte) string {
	if len(b) > 12 {
		return string(b[:12]) + "…"
	}
	return string(b)
}

// TokenProcesses lists the live processes (zombies left out) whose
// environment or command line carries token: every process of a hostile
// case, children that escaped its process group and re-executed ones with
// a cleared environment included (they carry the token in their
// arguments). The caller's own process is never listed.
func TokenProcesses(token string) []int {
	var pids []int
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == os.Getpid() {
			continue
		}
		env, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if !bytes.Contains(env, []byte(token)) && !bytes.Contains(cmdline, []byte(token)) {
			continue
		}
		if stat, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "stat")); bytes.Contains(stat, []byte(") Z ")) {
			continue
		}
		pids = append(pids, pid)
	}
	return pids
}

// KillByToken SIGKILLs every process TokenProcesses lists, and returns
// the ones it signalled.
func KillByToken(token string) []int {
	var killed []int
	for _, pid := range TokenProcesses(token) {
		if syscall.Kill(pid, syscall.SIGKILL) == nil {
			killed = append(killed, pid)
		}
	}
	return killed
}
