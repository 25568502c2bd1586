package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	pubPyOnce sync.Once
	pubPyArgv []string
)

// python returns the real interpreter behind python3 with -I -S (fast
// start-up; the examples use the standard library only), or skips loudly.
func pubPython(t *testing.T) []string {
	t.Helper()
	pubPyOnce.Do(func() {
		py := os.Getenv("TRACECHECK_PYTHON")
		if py == "" {
			py = "python3"
		}
		out, err := exec.Command(py, "-I", "-S", "-c", "import sys; print(sys.executable)").Output()
		if err == nil && len(bytes.TrimSpace(out)) > 0 {
			pubPyArgv = []string{string(bytes.TrimSpace(out)), "-I", "-S"}
		}
	})
	if pubPyArgv == nil {
		t.Skip("SKIP: python3 not found (set TRACECHECK_PYTHON)")
	}
	return pubPyArgv
}

func pubExample(name string) string {
	p, _ := filepath.Abs(filepath.Join("..", "..", "examples", name))
	return p
}

func pubCLI(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestRunCommandUsage(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		name   string
		args   []string
		code   int
		stderr string
	}{
		{"help", []string{"run", "-h"}, exitOK, "Exit codes: 0 published"},
		{"no publish dir", []string{"run", "--name", "m", "--", "python3", "x.py"}, exitUsage, "--publish-dir is required"},
		{"no name", []string{"run", "--publish-dir", dir, "--", "python3", "x.py"}, exitUsage, "--name is required"},
		{"no program", []string{"run", "--publish-dir", dir, "--name", "m"}, exitUsage, "no program given"},
		{"bad name", []string{"run", "--publish-dir", dir, "--name", "../x", "--", "python3", "x.py"}, exitUsage, "invalid checkpoint name"},
		{"bad grace", []string{"run", "--publish-dir", dir, "--name", "m", "--grace", "0s", "--", "python3", "x.py"}, exitUsage, "--grace must be positive"},
		{"bad flag", []string{"run", "--nope"}, exitUsage, "flag provided but not defined"},
		{"missing interpreter", []string{"run", "--publish-dir", dir, "--name", "m", "--", "no-such-python3", "x.py"}, exitInput, "program not found"},
		{"missing script", []string{"run", "--publish-dir", dir, "--name", "m", "--", "python3", filepath.Join(dir, "none.py")}, exitInput, "program not found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := pubCLI(tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.stderr) {
				t.Errorf("code %d, stderr %q; want %d and %q", code, stderr, tc.code, tc.stderr)
			}
		})
	}
	if ents, _ := os.ReadDir(dir); len(ents) > 0 {
		t.Errorf("refused runs left %v", ents)
	}
}

func TestRunCommand(t *testing.T) {
	py := pubPython(t)
	dir := t.TempDir()
	pub := filepath.Join(dir, "pub")
	journal := filepath.Join(dir, "journal.ndjson")
	args := append([]string{"run", "--publish-dir", pub, "--name", "linreg", "--journal", journal,
		"--verify-cmd", strings.Join(append(append([]string(nil), py...), pubExample("verify.py")), " "), "--"},
		append(append([]string(nil), py...), pubExample("train.py"))...)
	code, stdout, stderr := pubCLI(args...)
	if code != exitOK {
		t.Fatalf("run: code %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"outcome:    Published", "checkpoint: " + filepath.Join(pub, "linreg"), "digest:     sha256:", "duration:"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("summary lacks %q:\n%s", want, stdout)
		}
	}
	if !strings.Contains(stderr, "tracecheck: hashing") || !strings.Contains(stderr, "tracecheck: verifying") {
		t.Errorf("no progress lines on stderr:\n%s", stderr)
	}
	// The journal is a trace that tracecheck check validates.
	if code, out, errs := pubCLI("check", journal); code != exitOK || !strings.Contains(out, "VALID") {
		t.Errorf("check journal: code %d\n%s%s", code, out, errs)
	}
	// The same name again is refused; the journal again too.
	if code, _, stderr := pubCLI(args...); code != exitInput || !strings.Contains(stderr, "already") {
		t.Errorf("second run: code %d, %s", code, stderr)
	}
	// Recovery finds it published and verified.
	code, out, _ := pubCLI("recover", "--publish-dir", pub)
	if code != exitOK || !strings.Contains(out, "linreg: published-and-verified") {
		t.Errorf("recover: code %d\n%s", code, out)
	}
	code, out, _ = pubCLI("recover", "--publish-dir", pub, "--journal", journal, "--json")
	if code != exitOK || !strings.Contains(out, `"outcome": "published-and-verified"`) {
		t.Errorf("recover --json: code %d\n%s", code, out)
	}
	// Tampering with the published checkpoint is reported, exit 1.
	if err := os.WriteFile(filepath.Join(pub, "linreg", "model.json"), []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ = pubCLI("recover", "--publish-dir", pub)
	if code != exitViolation || !strings.Contains(out, "published-but-fails-verification") {
		t.Errorf("recover after tampering: code %d\n%s", code, out)
	}

	// A failing program: exit 4, nothing published.
	code, stdout, _ = pubCLI(append([]string{"run", "--publish-dir", pub, "--name", "bad", "--quiet", "--"},
		append(append([]string(nil), py...), pubExample("fail.py"))...)...)
	if code != exitRunFailed || !strings.Contains(stdout, "outcome:    Failed") || !strings.Contains(stdout, "staging:    removed") {
		t.Errorf("fail.py: code %d\n%s", code, stdout)
	}
	if _, err := os.Lstat(filepath.Join(pub, "bad")); err == nil {
		t.Error("fail.py's checkpoint was published")
	}
}

// TestRunCommandSignal sends SIGTERM to the publisher (this process, whose
// run command has registered for it) while hang.py runs: the run ends
// Interrupted, exit 5.
func TestRunCommandSignal(t *testing.T) {
	py := pubPython(t)
	dir := t.TempDir()
	journal := filepath.Join(dir, "journal.ndjson")
	go func() {
		for i := 0; i < 500; i++ {
			if b, _ := os.ReadFile(journal); bytes.Contains(b, []byte(`"ExecutePython"`)) {
				_ = syscall.Kill(os.Getpid(), syscall.SIGTERM)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	code, stdout, stderr := pubCLI(append([]string{"run", "--publish-dir", filepath.Join(dir, "pub"), "--name", "h",
		"--journal", journal, "--grace", "500ms", "--quiet", "--"}, append(append([]string(nil), py...), pubExample("hang.py"))...)...)
	if code != exitRunInterrupted || !strings.Contains(stdout, "outcome:    Interrupted") {
		t.Fatalf("code %d\n%s\n%s", code, stdout, stderr)
	}
	if code, out, _ := pubCLI("check", journal); code != exitOK {
		t.Errorf("check journal: code %d\n%s", code, out)
	}
}

func TestRecoverCommandUsage(t *testing.T) {
	dir := t.TempDir()
	cases := []struct {
		args   []string
		code   int
		output string
	}{
		{[]string{"recover", "-h"}, exitOK, "Exit codes: 0 every run examined"},
		{[]string{"recover"}, exitUsage, "--publish-dir is required"},
		{[]string{"recover", "--publish-dir", dir, "extra"}, exitUsage, "unexpected arguments"},
		{[]string{"recover", "--publish-dir", filepath.Join(dir, "none")}, exitInput, "no such file"},
		{[]string{"recover", "--publish-dir", dir}, exitOK, "no runs to recover"},
		{[]string{"recover", "--publish-dir", dir, "--journal", filepath.Join(dir, "none.ndjson")}, exitInput, "no such file"},
	}
	for _, tc := range cases {
		code, out, errs := pubCLI(tc.args...)
		if code != tc.code || !strings.Contains(out+errs, tc.output) {
			t.Errorf("%v: code %d, output %q%q; want %d and %q", tc.args, code, out, errs, tc.code, tc.output)
		}
	}
}

// TestRunCommandWholeSHA256: a large file's manifest entry has block hashes
// only by default, and also its whole-file SHA-256 (sha256sum's) with
// --whole-sha256; both publish and verify.
func TestRunCommandWholeSHA256(t *testing.T) {
	py := pubPython(t)
	dir := t.TempDir()
	prog := filepath.Join(dir, "big.py")
	src := `import json, os
d = os.environ["TRACECHECK_STAGING_DIR"]
block = bytes(range(256)) * 4096
with open(os.path.join(d, "weights.bin"), "wb") as f:
    for _ in range(33):
        f.write(block)
with open(os.environ["TRACECHECK_EVAL_FILE"], "w") as f:
    json.dump({"passed": True}, f)
`
	if err := os.WriteFile(prog, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	block := make([]byte, 256*4096)
	for i := range block {
		block[i] = byte(i)
	}
	h := sha256.New()
	for i := 0; i < 33; i++ {
		h.Write(block)
	}
	whole := hex.EncodeToString(h.Sum(nil))
	pub := filepath.Join(dir, "pub")
	for _, tc := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"blocks", nil, ""},
		{"whole", []string{"--whole-sha256"}, whole},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{"run", "--publish-dir", pub, "--name", tc.name, "--quiet"}, tc.flags...)
			args = append(append(append(args, "--"), py...), prog)
			if code, stdout, stderr := pubCLI(args...); code != exitOK {
				t.Fatalf("run: code %d\n%s%s", code, stdout, stderr)
			}
			b, err := os.ReadFile(filepath.Join(pub, tc.name, "tracecheck-manifest.json"))
			if err != nil {
				t.Fatal(err)
			}
			var m struct {
				Files []struct {
					Path   string   `json:"path"`
					Size   int64    `json:"size"`
					SHA256 string   `json:"sha256"`
					Blocks []string `json:"blocks"`
				} `json:"files"`
			}
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			if len(m.Files) != 1 || m.Files[0].Size != 33<<20 || len(m.Files[0].Blocks) != 3 || m.Files[0].SHA256 != tc.want {
				t.Fatalf("manifest files %+v; want weights.bin, 3 blocks, sha256 %q", m.Files, tc.want)
			}
			if code, out, _ := pubCLI("recover", "--publish-dir", pub); code != exitOK || !strings.Contains(out, tc.name+": published-and-verified") {
				t.Errorf("recover: code %d\n%s", code, out)
			}
		})
	}
}

// watchWriter records what is written to it and closes seen once the
// text so far contains want.
type watchWriter struct {
	mu   sync.Mutex
	buf  bytes.Buffer
	want string
	seen chan struct{}
	once sync.Once
}

func (w *watchWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf.Write(p)
	if strings.Contains(w.buf.String(), w.want) {
		w.once.Do(func() { close(w.seen) })
	}
	return len(p), nil
}

func (w *watchWriter) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.buf.String()
}

// TestRunCommandFailureOutput runs a real Python program that prints a
// line, waits until the test has seen that line on tracecheck run's
// stderr, then dies with a traceback whose message holds an escape
// sequence. With --stream the line arrives while the program still runs
// (else the program would wait out its 30 s and exit 7), escaped; without
// it, the traceback's end is printed when the run fails. --json gives the
// summary as JSON.
func TestRunCommandFailureOutput(t *testing.T) {
	py := pubPython(t)
	dir := t.TempDir()
	prog := filepath.Join(dir, "crash.py")
	src := `import os, sys, time
print("hello-from-the-program", flush=True)
go = sys.argv[1]
deadline = time.time() + 30
while go != "-" and not os.path.exists(go):
    if time.time() > deadline:
        sys.exit(7)
    time.sleep(0.01)
raise RuntimeError("boom \x1b[31mred\x1b[0m")
`
	if err := os.WriteFile(prog, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	pub := filepath.Join(dir, "pub")
	runArgs := func(name string, flags []string, goFile string) []string {
		args := append([]string{"run", "--publish-dir", pub, "--name", name, "--quiet"}, flags...)
		return append(append(append(args, "--"), py...), prog, goFile)
	}

	t.Run("stream", func(t *testing.T) {
		goFile := filepath.Join(dir, "go")
		errw := &watchWriter{want: "stdout| hello-from-the-program\n", seen: make(chan struct{})}
		var out bytes.Buffer
		done := make(chan int, 1)
		go func() { done <- run(runArgs("streamed", []string{"--stream"}, goFile), &out, errw) }()
		select {
		case <-errw.seen:
		case code := <-done:
			t.Fatalf("the run ended (code %d) before its first line was streamed:\n%s", code, errw.String())
		}
		if err := os.WriteFile(goFile, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		code := <-done
		stderr := errw.String()
		if code != exitRunFailed {
			t.Fatalf("code %d, want %d\n%s\n%s", code, exitRunFailed, out.String(), stderr)
		}
		for _, want := range []string{"stderr| Traceback (most recent call last):", `stderr| RuntimeError: boom \x1b[31mred\x1b[0m`} {
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
		}
		if strings.Contains(stderr, "\x1b") {
			t.Errorf("an escape sequence of the program reached the terminal:\n%q", stderr)
		}
	})

	t.Run("tail", func(t *testing.T) {
		code, stdout, stderr := pubCLI(runArgs("tail", nil, "-")...)
		if code != exitRunFailed || !strings.Contains(stdout, "outcome:    Failed") {
			t.Fatalf("code %d\n%s\n%s", code, stdout, stderr)
		}
		for _, want := range []string{"the program failed; the end of its stderr", "stderr.log", "  | Traceback (most recent call last):", `  | RuntimeError: boom \x1b[31mred\x1b[0m`} {
			if !strings.Contains(stderr, want) {
				t.Errorf("stderr lacks %q:\n%s", want, stderr)
			}
		}
		if strings.Contains(stderr, "hello-from-the-program") || strings.Contains(stderr, "\x1b") {
			t.Errorf("stdout was streamed without --stream, or an escape reached the terminal:\n%q", stderr)
		}
	})

	t.Run("json", func(t *testing.T) {
		code, stdout, stderr := pubCLI(runArgs("json", []string{"--json"}, "-")...)
		if code != exitRunFailed {
			t.Fatalf("code %d\n%s\n%s", code, stdout, stderr)
		}
		var j struct {
			Outcome, Run, Name, Journal, RunDir, StderrTail, Error string
			Exit                                                   *struct{ Code int }
			StagingRemoved                                         *bool `json:"staging_removed"`
		}
		if err := json.Unmarshal([]byte(stdout), &j); err != nil {
			t.Fatalf("%v:\n%s", err, stdout)
		}
		var raw map[string]any
		_ = json.Unmarshal([]byte(stdout), &raw)
		j.RunDir, _ = raw["run_dir"].(string)
		j.StderrTail, _ = raw["stderr_tail"].(string)
		if j.Outcome != "Failed" || j.Name != "json" || j.Run == "" || j.Exit == nil || j.Exit.Code != 1 ||
			j.StagingRemoved == nil || !*j.StagingRemoved || !strings.Contains(j.StderrTail, "RuntimeError: boom") ||
			filepath.Dir(j.Journal) != j.RunDir || !strings.HasSuffix(j.RunDir, j.Run) {
			t.Errorf("run --json: %+v\n%s", j, stdout)
		}
		if _, ok := raw["duration_ms"].(float64); !ok {
			t.Errorf("no duration_ms: %s", stdout)
		}
	})
}
