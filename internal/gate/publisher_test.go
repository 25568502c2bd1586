package gate

import (
	"bufio"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/impl/checkpoint"
	"github.com/tracecheck/tracecheck/internal/mutants"
	"github.com/tracecheck/tracecheck/model/program"
	"github.com/tracecheck/tracecheck/mutate"
)

// moduleRoot is the repository root.
func moduleRoot(t testing.TB) string {
	_, file, _, _ := runtime.Caller(0)
	root, err := filepath.Abs(filepath.Join(filepath.Dir(file), "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// testCLI builds cmd/tracecheck for a test (the crash campaign and the
// hostile cases run it as Options.Exe).
func testCLI(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "tracecheck")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/tracecheck")
	cmd.Dir = moduleRoot(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the CLI: %v\n%s", err, out)
	}
	return bin
}

// newTestRun returns a gate run in Quick mode for one stage.
func newTestRun(t *testing.T, exe string) *run {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("SKIP: python3 not found; the publisher stage needs it")
	}
	return &run{opt: Options{Root: moduleRoot(t), Dir: t.TempDir(), Mode: Quick, Python: "python3", Exe: exe,
		Getenv: os.Getenv}, seed: time.Now().UnixNano(), traces: map[string][]traceFile{}, covered: map[string][2]int{}}
}

// TestPublisherStage runs the stage in Quick mode on the real publisher:
// it passes, every trace it registered is valid (or, for a run killed on
// purpose, incomplete), and together they exercise every transition of
// Program.tla but the terminal self-loops.
func TestPublisherStage(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	r := newTestRun(t, testCLI(t))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s := &stage{Stage: Stage{Name: "publisher"}}
	start := time.Now()
	if err := publisherStage(ctx, r, s); err != nil {
		t.Fatal(err)
	}
	t.Logf("publisher stage (seed %d) in %v: %s", r.seed, time.Since(start).Round(time.Millisecond), s.Figures)
	for _, f := range s.Failures {
		t.Errorf("failure: %s", f)
	}
	if t.Failed() {
		t.Logf("detail:\n%s", s.Detail)
	}
	if s.Verdict == Skip {
		t.Fatalf("the stage skipped: %s", s.Figures)
	}
	checkProgramCoverage(t, ctx, r)
}

// checkProgramCoverage checks the stage's traces and their coverage as
// the coverage stage does.
func checkProgramCoverage(t *testing.T, ctx context.Context, r *run) {
	t.Helper()
	sp, err := lookup("program")
	if err != nil {
		t.Fatal(err)
	}
	var reps []*check.Report
	for _, tf := range r.traces["program"] {
		f, err := os.Open(tf.path)
		if err != nil {
			t.Fatal(err)
		}
		rep, err := sp.Check(ctx, bufio.NewReader(f), tf.path, check.Options{})
		f.Close()
		if err != nil {
			t.Errorf("%s: %v", tf.path, err)
			continue
		}
		for _, in := range rep.Instances {
			if in.Verdict == check.Violation || in.Verdict == check.Incomplete && !tf.incompleteOK {
				t.Errorf("%s: %s: %s: %s", tf.path, in.Instance, in.Verdict, in.Reason)
			}
		}
		reps = append(reps, rep)
	}
	chart, required, exercised, err := chartOf(ctx, program.Spec(), reps)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d program traces, %d/%d transitions", len(reps), exercised, required)
	if required != 10 || exercised != required {
		for _, e := range chart.Edges {
			if e.Count == 0 && !notRequired(chart, e) {
				t.Errorf("not exercised: %s --%s--> %s", e.From, e.Action, e.To)
			}
		}
		t.Errorf("%d of %d transitions exercised, want all 10", exercised, required)
	}
}

// mutantFS is a filesystem that behaves as a code mutant of the publisher
// would, for the cases it selects.
type mutantFS struct {
	checkpoint.FS
	removeAll func(name string) (skip bool)
	sync      func(name string) (skip bool)
}

func (m mutantFS) OpenRoot(dir string) (checkpoint.Root, error) {
	r, err := m.FS.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return mutantRoot{Root: r, m: m}, nil
}

type mutantRoot struct {
	checkpoint.Root
	m mutantFS
}

func (r mutantRoot) RemoveAll(name string) error {
	if r.m.removeAll != nil && r.m.removeAll(name) {
		return nil // "removed"
	}
	return r.Root.RemoveAll(name)
}

// RenameNoReplace unwraps a target of this filesystem: the real root
// renames between real roots only.
func (r mutantRoot) RenameNoReplace(oldname string, to checkpoint.Root, newname string) error {
	if t, ok := to.(mutantRoot); ok {
		to = t.Root
	}
	return r.Root.RenameNoReplace(oldname, to, newname)
}

func (r mutantRoot) OpenFile(name string, flag int, perm fs.FileMode) (checkpoint.File, error) {
	f, err := r.Root.OpenFile(name, flag, perm)
	if err != nil || r.m.sync == nil || !r.m.sync(name) {
		return f, err
	}
	return noSyncFile{f}, nil
}

// noSyncFile closes without the fsync (skip-manifest-fsync).
type noSyncFile struct{ checkpoint.File }

func (noSyncFile) Sync() error { return nil }

// Fd keeps the descriptor reachable (the publisher locks files by it).
func (f noSyncFile) Fd() uintptr {
	if d, ok := f.File.(interface{ Fd() uintptr }); ok {
		return d.Fd()
	}
	return ^uintptr(0)
}

// TestPublisherStageFails: the stage fails, naming the case, when the
// publisher behaves as the code mutants leave-staging-on-failure (the
// staging removal does nothing, and the run says it removed it) and
// skip-manifest-fsync (the manifest is never fsynced, so an fsync fault
// cannot fail the run) would: each mutant's behaviour, injected through
// the filesystem into the in-process runs.
func TestPublisherStageFails(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	for _, tc := range []struct {
		name string
		only func(c *pubCase) bool
		wrap func(c *pubCase, fsys checkpoint.FS) checkpoint.FS
		want []string // substrings of some failure each
	}{
		{name: "leave-staging-on-failure",
			only: func(c *pubCase) bool {
				return c.name == "fail.py exits 3" || strings.HasPrefix(c.name, "badckpt.py stale")
			},
			wrap: func(c *pubCase, fsys checkpoint.FS) checkpoint.FS {
				return mutantFS{FS: fsys, removeAll: func(name string) bool { return strings.Contains(name, "staging/") }}
			},
			want: []string{`scenario "fail.py exits 3": the staging directory`, `scenario "badckpt.py stale: not the evaluated bytes": the staging directory`}},
		{name: "skip-manifest-fsync",
			only: func(c *pubCase) bool { return c.name == "save: manifest fsync EIO" },
			wrap: func(c *pubCase, fsys checkpoint.FS) checkpoint.FS {
				return mutantFS{FS: fsys, sync: func(name string) bool { return strings.HasSuffix(name, checkpoint.ManifestName) }}
			},
			want: []string{`fault "save: manifest fsync EIO": the fault never fired`, `fault "save: manifest fsync EIO": outcome Published, want Failed`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newTestRun(t, "")
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			s := &stage{Stage: Stage{Name: "publisher"}}
			if err := publisherRun(ctx, r, s, pubOptions{only: tc.only, wrapFS: tc.wrap, inProcessOnly: true}); err != nil {
				t.Fatal(err)
			}
			all := strings.Join(s.Failures, "\n")
			for _, w := range tc.want {
				if !strings.Contains(all, w) {
					t.Errorf("no failure says %q; failures:\n%s", w, all)
				}
			}
		})
	}
}

// TestPublisherStageNoPython: without the interpreter the stage fails
// with a message that says so.
func TestPublisherStageNoPython(t *testing.T) {
	r := &run{opt: Options{Root: moduleRoot(t), Dir: t.TempDir(), Mode: Quick, Python: "python3-does-not-exist"},
		traces: map[string][]traceFile{}, covered: map[string][2]int{}}
	s := &stage{Stage: Stage{Name: "publisher"}}
	err := publisherStage(context.Background(), r, s)
	if err == nil || !strings.Contains(err.Error(), "python3-does-not-exist") || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("publisherStage: %v, want a python-not-found error", err)
	}
}

// TestPublisherStageKillsCodeMutants builds this package's tests with a
// named code mutant of the publisher (go test -overlay, through package
// mutate) and runs TestPublisherStage with it: the stage must fail, so the
// test does. By default two mutants that no other test here simulates
// (skip-the-reload, relabel-published-on-receipt-failure); all seven with
// GATE_PUBLISHER_MUTANTS=all. Skipped with -short.
func TestPublisherStageKillsCodeMutants(t *testing.T) {
	if testing.Short() {
		t.Skip("SKIP: builds and runs the stage with code mutants (-short)")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("SKIP: no go command")
	}
	if _, err := exec.LookPath("python3"); err != nil {
		t.Skip("SKIP: python3 not found; the publisher stage needs it")
	}
	pick := map[string]bool{"publisher/skip-the-reload": true, "publisher/relabel-published-on-receipt-failure": true}
	all := os.Getenv("GATE_PUBLISHER_MUTANTS") == "all"
	n := 0
	for _, m := range mutants.Named() {
		if !strings.HasPrefix(m.Name, "publisher/") || !all && !pick[m.Name] {
			continue
		}
		n++
		t.Run(strings.TrimPrefix(m.Name, "publisher/"), func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			m.Tests = []mutate.Test{{Package: "./internal/gate/", Run: "^TestPublisherStage$"}}
			res := mutate.Run(ctx, m, mutate.Options{Root: moduleRoot(t), Timeout: 3 * time.Minute})
			switch {
			case res.Error != "":
				t.Fatalf("could not run: %s", res.Error)
			case !res.Killed:
				t.Fatalf("the publisher stage passes with the mutant %s (%s)", m.Name, m.Doc)
			case !strings.Contains(res.Detector, "TestPublisherStage"):
				t.Fatalf("killed by %s, not by the stage:\n%s", res.Detector, res.Output)
			}
			t.Logf("killed by %s", res.Detector)
		})
	}
	if n == 0 {
		t.Fatal("no publisher mutant found in internal/mutants")
	}
}
