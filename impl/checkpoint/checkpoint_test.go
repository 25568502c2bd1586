package checkpoint_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestValidateName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"model", true}, {"model-v1.2_final", true}, {"модель", true},
		{"", false}, {".", false}, {"..", false}, {"a/b", false}, {"../x", false}, {"/abs", false},
		{".hidden", false}, {"a\x00b", false}, {"tab\there", false}, {strings.Repeat("x", 201), false},
	} {
		err := checkpoint.ValidateName(tc.name)
		if (err == nil) != tc.ok {
			t.Errorf("ValidateName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
		if err != nil && !errors.Is(err, checkpoint.ErrBadName) {
			t.Errorf("ValidateName(%q) = %v, not ErrBadName", tc.name, err)
		}
	}
}

func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, body := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func sum(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestStageAndVerify(t *testing.T) {
	ctx := context.Background()
	fsys := checkpoint.OSFS{}
	files := map[string]string{"b.bin": "bbbb", "a/x.json": `{"w":1}`, "a/y/z.txt": "", "c": "cc"}
	stage := func(t *testing.T, eval string) string {
		dir := t.TempDir()
		writeFiles(t, dir, files)
		m, err := checkpoint.Stage(ctx, fsys, dir, checkpoint.StageOptions{Run: "r1", Name: "n", Eval: []byte(eval)})
		if err != nil {
			t.Fatal(err)
		}
		var paths []string
		for _, f := range m.Files {
			paths = append(paths, f.Path)
			if f.SHA256 != sum(files[f.Path]) || f.Size != int64(len(files[f.Path])) {
				t.Errorf("%s: %+v", f.Path, f)
			}
		}
		if got := strings.Join(paths, ","); got != "a/x.json,a/y/z.txt,b.bin,c" {
			t.Errorf("files %s", got)
		}
		if m.Bytes() != 13 || !strings.HasPrefix(m.Digest, "sha256:") {
			t.Errorf("bytes %d digest %s", m.Bytes(), m.Digest)
		}
		return dir
	}
	claims := `{"passed":true,"files":{"b.bin":"` + sum("bbbb") + `"}}`
	cases := []struct {
		name   string
		eval   string
		mutate func(dir string) error
		want   error
	}{
		{"intact", claims, func(string) error { return nil }, nil},
		{"byte changed, same size", claims, func(d string) error { return os.WriteFile(filepath.Join(d, "c"), []byte("cX"), 0o644) }, checkpoint.ErrVerification},
		{"file grew", "", func(d string) error { return os.WriteFile(filepath.Join(d, "a/y/z.txt"), []byte("more"), 0o644) }, checkpoint.ErrVerification},
		{"file added", "", func(d string) error { return os.WriteFile(filepath.Join(d, "new"), nil, 0o644) }, checkpoint.ErrVerification},
		{"file removed", "", func(d string) error { return os.Remove(filepath.Join(d, "b.bin")) }, checkpoint.ErrVerification},
		{"manifest removed", "", func(d string) error { return os.Remove(filepath.Join(d, checkpoint.ManifestName)) }, checkpoint.ErrVerification},
		{"manifest garbled", "", func(d string) error {
			return os.WriteFile(filepath.Join(d, checkpoint.ManifestName), []byte("{"), 0o644)
		}, checkpoint.ErrVerification},
		{"manifest digest edited", "", func(d string) error {
			p := filepath.Join(d, checkpoint.ManifestName)
			b, _ := os.ReadFile(p)
			return os.WriteFile(p, []byte(strings.Replace(string(b), `"size": 4`, `"size": 5`, 1)), 0o644)
		}, checkpoint.ErrVerification},
		{"symlink added", "", func(d string) error { return os.Symlink("b.bin", filepath.Join(d, "link")) }, checkpoint.ErrUnsafeFile},
		{"fifo added", "", func(d string) error { return syscall.Mkfifo(filepath.Join(d, "fifo"), 0o644) }, checkpoint.ErrUnsafeFile},
		{"claims another hash", `{"passed":true,"files":{"b.bin":"` + sum("other") + `"}}`, func(string) error { return nil }, checkpoint.ErrVerification},
		{"claims a missing file", `{"passed":true,"files":{"nope":"` + sum("") + `"}}`, func(string) error { return nil }, checkpoint.ErrVerification},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := stage(t, tc.eval)
			if err := tc.mutate(dir); err != nil {
				t.Fatal(err)
			}
			_, err := checkpoint.Verify(ctx, fsys, dir, nil)
			if tc.want == nil && err != nil || tc.want != nil && !errors.Is(err, tc.want) {
				t.Fatalf("Verify = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestStageRefuses(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		make func(dir string) error
		msg  string
	}{
		{"symlink outside", func(d string) error { return os.Symlink("/etc/passwd", filepath.Join(d, "vocab")) }, "points outside"},
		{"symlink inside", func(d string) error {
			_ = os.WriteFile(filepath.Join(d, "real"), nil, 0o644)
			return os.Symlink("real", filepath.Join(d, "alias"))
		}, "points inside"},
		{"fifo", func(d string) error { return syscall.Mkfifo(filepath.Join(d, "fifo"), 0o644) }, "special file"},
		{"socket-like reserved manifest", func(d string) error {
			return os.WriteFile(filepath.Join(d, checkpoint.ManifestName), nil, 0o644)
		}, "reserved"},
		{"hard link to a file outside", func(d string) error {
			out := filepath.Join(t.TempDir(), "outside")
			if err := os.WriteFile(out, []byte("x"), 0o644); err != nil {
				return err
			}
			return os.Link(out, filepath.Join(d, "weights"))
		}, "hard links"},
		{"name not valid UTF-8", func(d string) error { return os.WriteFile(filepath.Join(d, "w\xff.bin"), nil, 0o644) }, "not valid UTF-8"},
		{"name with a bidi override", func(d string) error {
			return os.WriteFile(filepath.Join(d, "model\u202enib.exe"), nil, 0o644)
		}, "format character"},
		{"name with a newline", func(d string) error { return os.WriteFile(filepath.Join(d, "a\nb"), nil, 0o644) }, "control character"},
		{"nested too deep", func(d string) error {
			p := d
			for i := 0; i <= checkpoint.MaxDepth; i++ {
				p = filepath.Join(p, "d")
			}
			if err := os.MkdirAll(p, 0o755); err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(p, "f"), nil, 0o644)
		}, "nested deeper"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := tc.make(dir); err != nil {
				t.Fatal(err)
			}
			_, err := checkpoint.Stage(ctx, checkpoint.OSFS{}, dir, checkpoint.StageOptions{})
			if !errors.Is(err, checkpoint.ErrUnsafeFile) || !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("Stage = %v, want ErrUnsafeFile mentioning %q", err, tc.msg)
			}
		})
	}
	// Only empty directories: no checkpoint, said as such.
	empty := t.TempDir()
	if err := os.MkdirAll(filepath.Join(empty, "a", "b"), 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := checkpoint.Stage(ctx, checkpoint.OSFS{}, empty, checkpoint.StageOptions{}); !errors.Is(err, checkpoint.ErrEmptyCheckpoint) || !strings.Contains(err.Error(), "no file") {
		t.Fatalf("Stage of empty directories = %v, want ErrEmptyCheckpoint saying no file", err)
	}
	// Cancelled while hashing.
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"a": "x"})
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := checkpoint.Stage(cctx, checkpoint.OSFS{}, dir, checkpoint.StageOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("Stage with a cancelled context = %v", err)
	}
}

// syncBuffer is a bytes.Buffer safe for a writer and a reader at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestExecRunner(t *testing.T) {
	var out, errOut *syncBuffer
	proc := func(script string) checkpoint.Process {
		out, errOut = &syncBuffer{}, &syncBuffer{}
		return checkpoint.Process{Argv: []string{"sh", "-c", script}, Env: os.Environ(),
			Stdout: out, Stderr: errOut, Grace: 200 * time.Millisecond}
	}
	r := checkpoint.ExecRunner{}
	ctx := context.Background()

	ex, err := r.Run(ctx, proc(`echo hello; echo oops >&2; exit 3`), nil)
	if err != nil || ex.Code != 3 || ex.Interrupted {
		t.Fatalf("exit 3: %+v %v", ex, err)
	}
	if b := out.String(); b != "hello\n" {
		t.Errorf("stdout captured %q", b)
	}
	if b := errOut.String(); b != "oops\n" {
		t.Errorf("stderr captured %q", b)
	}

	ex, err = r.Run(ctx, proc(`kill -KILL $$`), nil)
	if err != nil || ex.Code != -1 || ex.Signal != "killed" {
		t.Fatalf("killed: %+v %v", ex, err)
	}

	// Interrupted: SIGTERM ignored, so SIGKILL after the grace period.
	cctx, cancel := context.WithCancel(ctx)
	var pid int
	start := time.Now()
	interrupted := proc(`trap "" TERM; echo ready; sleep 30 & wait; sleep 30`)
	ex, err = r.Run(cctx, interrupted, func(p int) error {
		pid = p
		go func() { // interrupt once the trap is set (sh may start slowly)
			defer cancel()
			for i := 0; i < 1000; i++ {
				if strings.Contains(out.String(), "ready") {
					return
				}
				time.Sleep(10 * time.Millisecond)
			}
		}()
		return nil
	})
	if err != nil || !ex.Interrupted || !ex.Killed || ex.PID != pid {
		t.Fatalf("interrupted: %+v %v", ex, err)
	}
	if d := time.Since(start); d < 200*time.Millisecond || d > 20*time.Second {
		t.Errorf("interrupt took %v, want at least the 200ms grace", d)
	}
	// The group's background sleep was SIGKILLed too (it may linger briefly
	// as a zombie until its new parent reaps it).
	for i := 0; ; i++ {
		err := syscall.Kill(-pid, 0)
		if errors.Is(err, syscall.ESRCH) {
			break
		}
		if i == 200 {
			t.Errorf("process group %d still alive: %v", pid, err)
			break
		}
		time.Sleep(10 * time.Millisecond)
	}

	// started failing kills the process.
	boom := errors.New("receipt failed")
	if _, err := r.Run(ctx, proc(`sleep 30`), func(int) error { return boom }); !errors.Is(err, boom) {
		t.Fatalf("started error: %v", err)
	}
	if _, err := r.Run(ctx, checkpoint.Process{Argv: []string{"/no/such/program"}}, nil); !errors.Is(err, checkpoint.ErrStart) {
		t.Fatalf("missing program: %v", err)
	}
}

func TestReadJournal(t *testing.T) {
	line := func(run, action, phase string) string {
		return `{"v":1,"instance":"` + run + `","seq":0,"action":"` + action + `","state":{"phase":"` + phase + `","verified":false,"published":false},"detail":{"publish_dir":"/p","name":"m"}}` + "\n"
	}
	s, err := checkpoint.ReadJournal(strings.NewReader(line("r", "Init", "Ready") + line("r", "ExecutePython", "Running") + `{"v":1,"inst`))
	if err != nil || !s.Truncated || s.Last != "Running" || s.Terminal || s.Run != "r" || s.PublishDir != "/p" || s.Name != "m" || len(s.Events) != 2 {
		t.Fatalf("truncated: %+v %v", s, err)
	}
	s, err = checkpoint.ReadJournal(strings.NewReader(line("r", "Init", "Ready") + line("r", "ExecutionFails", "Failed")))
	if err != nil || !s.Terminal || s.Truncated {
		t.Fatalf("terminal: %+v %v", s, err)
	}
	if _, err := checkpoint.ReadJournal(strings.NewReader(line("r", "Init", "Ready") + line("q", "Init", "Ready"))); !errors.Is(err, checkpoint.ErrForeignJournal) {
		t.Fatalf("mixed runs: %v", err)
	}
	if _, err := checkpoint.ReadJournal(strings.NewReader("not json\n")); err == nil {
		t.Fatal("garbage accepted")
	}
}

func TestRecoverInput(t *testing.T) {
	ctx := context.Background()
	if _, err := checkpoint.Recover(ctx, checkpoint.RecoverOptions{}); !errors.Is(err, checkpoint.ErrConfig) {
		t.Errorf("no dir: %v", err)
	}
	if _, err := checkpoint.Recover(ctx, checkpoint.RecoverOptions{PublishDir: filepath.Join(t.TempDir(), "none")}); !errors.Is(err, checkpoint.ErrConfig) {
		t.Errorf("missing dir: %v", err)
	}
	reps, err := checkpoint.Recover(ctx, checkpoint.RecoverOptions{PublishDir: t.TempDir()})
	if err != nil || len(reps) != 0 {
		t.Errorf("empty dir: %v %v", reps, err)
	}
}

// A large checkpoint of several files is hashed several files at a time;
// a flipped byte in any of them is found and named.
func TestLargeFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	size := 3<<20 + 12345
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i * 7)
	}
	for _, name := range []string{"a.bin", "b.bin", "c.bin"} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	m, err := checkpoint.Stage(ctx, checkpoint.OSFS{}, dir, checkpoint.StageOptions{})
	if err != nil {
		t.Fatal(err)
	}
	whole := sha256.Sum256(data)
	for _, f := range m.Files {
		if f.SHA256 != hex.EncodeToString(whole[:]) || f.Size != int64(size) {
			t.Fatalf("entry %+v; want the file's size and sha256", f)
		}
	}
	var last checkpoint.Progress
	if _, err := checkpoint.Verify(ctx, checkpoint.OSFS{}, dir, func(p checkpoint.Progress) { last = p }); err != nil {
		t.Fatal(err)
	}
	if last.Step != "verifying" || last.Done != 3*int64(size) || last.Total != 3*int64(size) {
		t.Errorf("last progress %+v, want all bytes verified", last)
	}
	f, err := os.OpenFile(filepath.Join(dir, "b.bin"), os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := f.WriteAt([]byte{data[2<<20] ^ 1}, 2<<20); err != nil {
		t.Fatal(err)
	}
	f.Close()
	_, err = checkpoint.Verify(ctx, checkpoint.OSFS{}, dir, nil)
	if !errors.Is(err, checkpoint.ErrVerification) || !strings.Contains(err.Error(), "b.bin") {
		t.Fatalf("Verify after a flipped byte = %v, want a b.bin mismatch", err)
	}
}

// syncFailFS fails every file fsync with EIO.
type syncFailFS struct{ checkpoint.OSFS }

type syncFailRoot struct{ checkpoint.Root }

type syncFailFile struct{ checkpoint.File }

func (syncFailFile) Sync() error { return syscall.EIO }

func (s syncFailFS) OpenRoot(dir string) (checkpoint.Root, error) {
	r, err := s.OSFS.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return syncFailRoot{r}, nil
}

func (s syncFailRoot) OpenFile(name string, flag int, perm os.FileMode) (checkpoint.File, error) {
	f, err := s.Root.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return syncFailFile{f}, nil
}

// StageAndVerify's fsyncs overlap hashing and verification, but a failed
// one still fails the whole with ErrSave, as Stage does.
func TestStageAndVerifySyncFailure(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name string
		fsys checkpoint.FS
		want error
	}{{"ok", checkpoint.OSFS{}, nil}, {"fsync EIO", syncFailFS{}, syscall.EIO}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, map[string]string{"a": "1", "b/c": "2"})
			m, err := checkpoint.StageAndVerify(ctx, tc.fsys, dir, checkpoint.StageOptions{})
			if tc.want == nil {
				if err != nil || len(m.Files) != 2 {
					t.Fatalf("StageAndVerify = %+v, %v", m, err)
				}
				return
			}
			if !errors.Is(err, checkpoint.ErrSave) || !errors.Is(err, tc.want) {
				t.Fatalf("StageAndVerify = %v, want ErrSave wrapping %v", err, tc.want)
			}
			dir2 := t.TempDir()
			writeFiles(t, dir2, map[string]string{"a": "1"})
			if _, err := checkpoint.Stage(ctx, tc.fsys, dir2, checkpoint.StageOptions{}); !errors.Is(err, checkpoint.ErrSave) {
				t.Fatalf("Stage = %v, want ErrSave", err)
			}
		})
	}
}
