package gate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/internal/bundled"
	"github.com/tracecheck/tracecheck/internal/formal"
	"go.uber.org/goleak"
)

const root = "../.."

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newRun(t *testing.T, root string) *run {
	t.Helper()
	return &run{opt: Options{Root: root, Dir: t.TempDir(), Mode: Quick, Progress: io.Discard, Getenv: func(string) string { return "" }},
		seed: 1, traces: map[string][]traceFile{}, covered: map[string][2]int{}}
}

func runStage(t *testing.T, r *run, f func(context.Context, *run, *stage) error) *stage {
	t.Helper()
	s := &stage{}
	if err := f(context.Background(), r, s); err != nil {
		s.fail("%v", err)
	}
	return s
}

// specMutants counts the registered spec mutants.
func specMutants() int {
	n := 0
	for _, sp := range bundled.Specs() {
		n += len(sp.Mutants)
	}
	return n
}

// The stages that need no workload pass on the repository as it is, with
// the figures that say what they checked.
func TestSpecStagesPass(t *testing.T) {
	for _, c := range []struct {
		name string
		f    func(context.Context, *run, *stage) error
		want []string
	}{
		{"explore", exploreStage, []string{"program: 9 states, 15 transitions", "session: 9 states, 36 transitions",
			"tts: 33 states", fmt.Sprintf("%d/%d spec mutants caught", specMutants(), specMutants()),
			"5/5 machine specs refine session.fizz"}},
		{"conformance", conformanceStage, []string{fmt.Sprintf("%d/%d retained TLC/FizzBee reports", len(formal.Checks), len(formal.Checks)),
			"TLC's trace validation agrees on"}},
		{"corpus", corpusStage, []string{"corpus traces get their expected verdict"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := runStage(t, newRun(t, root), c.f)
			if len(s.Failures) > 0 {
				t.Fatalf("failures: %q", s.Failures)
			}
			for _, w := range c.want {
				if !strings.Contains(s.Figures, w) {
					t.Errorf("figures %q lack %q", s.Figures, w)
				}
			}
		})
	}
}

// copyTree copies the named subtrees of the repository into a new root.
func copyTree(t *testing.T, dirs ...string) string {
	t.Helper()
	dst := t.TempDir()
	for _, d := range dirs {
		err := filepath.WalkDir(filepath.Join(root, d), func(p string, e os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			rel, _ := filepath.Rel(root, p)
			if e.IsDir() {
				return os.MkdirAll(filepath.Join(dst, rel), 0o755)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// The gate can fail: a spec edited after its reports, a corpus trace
// whose verdict changed, a trace with a violation, a transition never
// exercised.
func TestStagesFail(t *testing.T) {
	t.Run("stale spec", func(t *testing.T) {
		dst := copyTree(t, "spec", "formal-verification", "traces", "harness/tlccross/testdata")
		f, err := os.OpenFile(filepath.Join(dst, "spec", "Program.tla"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString("\\* edited after the reports\n")
		f.Close()
		s := runStage(t, newRun(t, dst), conformanceStage)
		all := strings.Join(s.Failures, "\n")
		if !strings.Contains(all, "tlc-program") || !strings.Contains(all, "REGEN=1 make formal") || !strings.Contains(all, "spec/Program.tla changed") {
			t.Fatalf("an edited Program.tla: failures %q", s.Failures)
		}
	})
	t.Run("corpus verdict", func(t *testing.T) {
		dst := copyTree(t, "traces")
		path := filepath.Join(dst, "traces", "EXPECTED.tsv")
		b, _ := os.ReadFile(path)
		b = []byte(strings.Replace(string(b), "program/published-ok.ndjson\tprogram\tvalid", "program/published-ok.ndjson\tprogram\tincomplete", 1))
		os.WriteFile(path, b, 0o644)
		s := runStage(t, newRun(t, dst), corpusStage)
		if len(s.Failures) != 1 || !strings.Contains(s.Failures[0], "published-ok.ndjson: valid, want incomplete") {
			t.Fatalf("failures %q", s.Failures)
		}
	})
	t.Run("violation and coverage", func(t *testing.T) {
		r := newRun(t, root)
		r.addTrace("program", filepath.Join(root, "traces", "program", "publish-unverified-bad.ndjson"), false)
		r.addTrace("session", filepath.Join(root, "traces", "session", "atomic-teardown-ok.ndjson"), false)
		s := runStage(t, r, coverageStage)
		all := strings.Join(s.Failures, "\n")
		if !strings.Contains(all, "violation") || !strings.Contains(all, "transitions never exercised") ||
			!strings.Contains(all, "tts (projected): ") || !strings.Contains(all, "below the realistic workload's") {
			t.Fatalf("failures %q", s.Failures)
		}
		if len(r.divs) != 1 || r.divs[0].Excerpt == "" || !strings.Contains(r.divs[0].Replay, "tracecheck replay --model program") ||
			!strings.Contains(r.divs[0].Report, "VIOLATION") {
			t.Fatalf("divergence for the report: %+v", r.divs)
		}
		// program's and session's charts, then the five machine specs',
		// coloured by the session trace projected onto each.
		if len(r.charts) != 7 || r.covered["program"][1] != 10 || r.covered["session"][1] != 36 ||
			r.charts[6].Spec != "tts (projected from the session traces)" || r.charts[6].Required != 72 {
			t.Fatalf("charts %d, coverage %v; want 7 charts (the last tts's, 72 required), 10 and 36 transitions required", len(r.charts), r.covered)
		}
		if figs := s.Figures; !strings.Contains(figs, "machine specs, projected from the session traces: connection ") {
			t.Errorf("no machine spec coverage among the figures: %s", figs)
		}
	})
}

// Run writes summary.json and report.html, refuses a used run directory,
// and a failing stage fails the run without stopping the next.
func TestRun(t *testing.T) {
	saved := stageList
	defer func() { stageList = saved }()
	ran := []string{}
	stageList = func() []stageFunc {
		return []stageFunc{
			{name: "fails", run: func(ctx context.Context, r *run, s *stage) error {
				ran = append(ran, "fails")
				return errors.New("broken on purpose")
			}},
			{name: "passes", run: func(ctx context.Context, r *run, s *stage) error {
				ran = append(ran, "passes")
				s.figure("42 things")
				return nil
			}},
			{name: "skipped", run: nil, skip: func(*run) string { return "not today" }},
		}
	}
	dir := filepath.Join(t.TempDir(), "run")
	var progress strings.Builder
	res, err := Run(context.Background(), Options{Root: root, Dir: dir, Progress: &progress, Exe: "/bin/true"})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict != Fail || len(res.Stages) != 3 || strings.Join(ran, ",") != "fails,passes" {
		t.Fatalf("verdict %s, %d stages, ran %v", res.Verdict, len(res.Stages), ran)
	}
	if res.Stages[0].Verdict != Fail || res.Stages[1].Verdict != Pass || res.Stages[2].Verdict != Skip {
		t.Fatalf("stage verdicts %+v", res.Stages)
	}
	for _, w := range []string{"fails", "FAIL", "broken on purpose", "passes", "PASS", "42 things", "SKIP"} {
		if !strings.Contains(progress.String(), w) {
			t.Errorf("progress lacks %q:\n%s", w, progress.String())
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	var back Result
	if err := json.Unmarshal(b, &back); err != nil || back.Verdict != Fail || len(back.Stages) != 3 {
		t.Fatalf("summary.json: %v %+v", err, back)
	}
	html, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil || !strings.Contains(string(html), "broken on purpose") {
		t.Fatalf("report.html: %v", err)
	}
	if _, err := Run(context.Background(), Options{Root: root, Dir: dir, Exe: "/bin/true"}); !errors.Is(err, ErrRunDir) {
		t.Fatalf("a used run directory: %v, want ErrRunDir", err)
	}
}
