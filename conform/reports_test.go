package conform_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/conform"
	"github.com/tracecheck/tracecheck/internal/formal"
	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/model/program"
	"github.com/tracecheck/tracecheck/model/session"
)

func repoRoot(t *testing.T) string {
	t.Helper()
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(root, "go.mod")); err != nil {
		t.Fatalf("repository root not found at %s: %v", root, err)
	}
	return root
}

func retainedDir(t *testing.T) string {
	return filepath.Join(repoRoot(t), "formal-verification", "reports")
}

// load reads and verifies a report. A retained report that is absent skips
// the test, loudly; a live one (from make formal) must exist.
func load(t *testing.T, dir string, live bool) *conform.Report {
	t.Helper()
	r, err := conform.LoadReport(dir)
	if errors.Is(err, conform.ErrNoReport) && !live {
		t.Skipf("SKIPPED, NOT CHECKED: the retained tool report %s is absent: it could not be produced "+
			"(the tool was not on the machine that made this commit), so this conformance check did not run. "+
			"Produce it by running the real tools: %s", dir, conform.RegenCommand)
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Verify(repoRoot(t)); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRetained checks the retained tool reports in formal-verification/
// against the Go model: spec hashes, verdicts, counts, whole graphs and
// counterexamples (internal/formal, which tracecheck verify runs too).
func TestRetained(t *testing.T) {
	for _, c := range formal.Checks {
		t.Run(c.Name, func(t *testing.T) {
			verify(t, c, load(t, filepath.Join(retainedDir(t), c.Name), false))
		})
	}
}

// TestLive runs the same checks against fresh tool output in the directory
// CONFORM_LIVE_DIR names; formal-verification/run.sh (make formal) sets it.
func TestLive(t *testing.T) {
	dir := os.Getenv("CONFORM_LIVE_DIR")
	if dir == "" {
		t.Skip("CONFORM_LIVE_DIR is not set: `make formal` (with TLA2TOOLS and FIZZ) sets it to fresh tool output")
	}
	for _, c := range formal.Checks {
		t.Run(c.Name, func(t *testing.T) {
			verify(t, c, load(t, filepath.Join(dir, c.Name), true))
		})
	}
}

func verify(t *testing.T, c formal.Check, r *conform.Report) {
	t.Helper()
	summary, err := c.Verify(r)
	if err != nil {
		t.Fatal(err)
	}
	t.Log(summary)
}

func explore[S comparable](t *testing.T, sp *model.Spec[S]) (*model.Result[S], *conform.Graph) {
	t.Helper()
	res, err := model.Explore(context.Background(), sp, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g, err := conform.FromModel(sp, &res.Graph)
	if err != nil {
		t.Fatal(err)
	}
	return res, g
}

func tlcGraph(t *testing.T, r *conform.Report) *conform.Graph {
	t.Helper()
	g, err := formal.TLCGraph(r)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func fizzGraph(t *testing.T, r *conform.Report) *conform.Graph {
	t.Helper()
	g, err := formal.FizzGraph(r)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestGateCanFail shows that the gate rejects a Go transcription that
// differs from the tools' graphs, and a spec edited after its report.
func TestGateCanFail(t *testing.T) {
	t.Run("session mutant against FizzBee", func(t *testing.T) {
		tool := fizzGraph(t, load(t, filepath.Join(retainedDir(t), "fizzbee-session"), false))
		_, mg := explore(t, session.Spec(session.Options{NoCompactionTeardown: true}))
		d := conform.Compare(mg, tool)
		if d.Empty() {
			t.Fatal("the NoCompactionTeardown mutant compares equal to FizzBee's graph of session.fizz")
		}
		torn := `/\ compaction = 2 /\ conn = 1 /\ resp = 2 /\ vad = 2`
		if !slices.Contains(d.ExtraStates, torn) || !slices.Contains(d.ExtraStutters, torn) {
			t.Errorf("diff does not name FizzBee's torn-down state as missing from the mutant:\n%s", d)
		}
	})
	t.Run("program without Interrupt against TLC", func(t *testing.T) {
		tool := tlcGraph(t, load(t, filepath.Join(retainedDir(t), "tlc-program"), false))
		sp := program.Spec()
		sp.Actions = slices.DeleteFunc(sp.Actions, func(a model.Action[program.State]) bool { return a.Name == program.Interrupt })
		_, mg := explore(t, sp)
		d := conform.Compare(mg, tool)
		// Without Interrupt, the unverified Interrupted state is unreachable:
		// TLC has it, its two Interrupt edges in and its Terminated loop.
		interrupted := `/\ phase = "Interrupted" /\ published = FALSE /\ verified = FALSE`
		if !slices.Equal(d.ExtraStates, []string{interrupted}) || len(d.ExtraEdges) != 3 ||
			len(d.MissingStates)+len(d.MissingEdges) != 0 {
			t.Fatalf("want TLC's unverified Interrupted state and its 3 edges missing from the mutant, got:\n%s", d)
		}
		var actions []string
		for _, e := range d.ExtraEdges {
			actions = append(actions, e[strings.Index(e, "--")+2:strings.Index(e, "-->")])
		}
		slices.Sort(actions)
		if !slices.Equal(actions, []string{"Interrupt", "Interrupt", "Terminated"}) {
			t.Errorf("edges only in TLC: %v, want Interrupt, Interrupt, Terminated", actions)
		}
	})
	t.Run("spec edited after its report", func(t *testing.T) {
		r := load(t, filepath.Join(retainedDir(t), "tlc-program"), false)
		root := t.TempDir()
		for _, s := range r.Manifest.Specs {
			b, err := os.ReadFile(filepath.Join(repoRoot(t), s.Path))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.MkdirAll(filepath.Dir(filepath.Join(root, s.Path)), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(root, s.Path), append(b, "\\* edited\n"...), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		err := r.Verify(root)
		if !errors.Is(err, conform.ErrStale) || !strings.Contains(err.Error(), "REGEN=1 make formal") {
			t.Fatalf("Verify after an edit: %v; want ErrStale with the regenerate command", err)
		}
	})
}
