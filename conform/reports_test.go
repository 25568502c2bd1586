package conform_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/conform"
	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/model/program"
	"github.com/tracecheck/tracecheck/model/session"
)

// The retained reports, by directory name under formal-verification/reports,
// and what each must show.
var reportChecks = []struct {
	name  string
	check func(t *testing.T, r *conform.Report)
}{
	{"tlc-program", checkTLCProgram},
	{"tlc-program-publish-from-staging", checkTLCMutant(program.PublishFromStaging)},
	{"tlc-program-failed-to-published", checkTLCMutant(program.FailedToPublished)},
	{"tlc-program-leave-published", checkTLCMutant(program.LeavePublished)},
	{"tlc-program-interrupt-after-published", checkTLCMutant(program.InterruptAfterPublished)},
	{"fizzbee-session", checkFizzSession},
	{"fizzbee-session-no-compaction-teardown", checkFizzMutant(session.Options{NoCompactionTeardown: true}, "Init", session.Teardown)},
	{"fizzbee-session-no-vad-teardown", checkFizzMutant(session.Options{NoVadTeardown: true}, "Init", session.Teardown)},
	{"fizzbee-session-no-resp-teardown", checkFizzMutant(session.Options{NoRespTeardown: true}, "Init", session.Teardown)},
	{"fizzbee-session-child-starts-after-teardown", checkFizzMutant(session.Options{ChildStartsAfterTeardown: true}, "Init", session.Teardown, session.RespStart)},
}

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

func readFile(t *testing.T, r *conform.Report, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(r.Path(name))
	if err != nil {
		t.Fatalf("report %s: %v", r.Manifest.Report, err)
	}
	return b
}

// TestRetained checks the retained tool reports in formal-verification/
// against the Go model: spec hashes, verdicts, counts and whole graphs.
func TestRetained(t *testing.T) {
	for _, rc := range reportChecks {
		t.Run(rc.name, func(t *testing.T) {
			rc.check(t, load(t, filepath.Join(retainedDir(t), rc.name), false))
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
	for _, rc := range reportChecks {
		t.Run(rc.name, func(t *testing.T) {
			rc.check(t, load(t, filepath.Join(dir, rc.name), true))
		})
	}
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
	g, err := conform.ParseTLCDot(bytes.NewReader(readFile(t, r, "states.dot")))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func fizzGraph(t *testing.T, r *conform.Report) *conform.Graph {
	t.Helper()
	g, err := conform.ParseFizzGraph(readFile(t, r, "nodes_000000_of_000000.pb"),
		readFile(t, r, "adjacency_lists_000000_of_000000.pb"))
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func checkTLCProgram(t *testing.T, r *conform.Report) {
	if r.Manifest.Tool != "TLC" || r.Manifest.ExitCode != 0 {
		t.Errorf("manifest: tool %q exit %d, want TLC exit 0", r.Manifest.Tool, r.Manifest.ExitCode)
	}
	out, err := conform.ParseTLCOutput(bytes.NewReader(readFile(t, r, "stdout.txt")))
	if err != nil {
		t.Fatal(err)
	}
	if out.Version != r.Manifest.ToolVersion || !strings.HasPrefix(out.Version, "TLC2 Version ") {
		t.Errorf("TLC version %q, manifest says %q", out.Version, r.Manifest.ToolVersion)
	}
	if !out.NoError || len(out.Errors) > 0 {
		t.Errorf("TLC did not print \"No error has been found\" (errors: %q)", out.Errors)
	}
	if out.Distinct != 9 || out.Left != 0 {
		t.Errorf("TLC: %d distinct states, %d left on queue; want 9 and 0", out.Distinct, out.Left)
	}
	tool := tlcGraph(t, r)
	states, edges := tool.Counts()
	if states != 9 || edges != 15 || len(tool.Edges) != 15 || len(tool.Init) != 1 {
		t.Errorf("TLC dot: %d states, %d distinct edges (%d lines), %d initial; want 9, 15, 15, 1",
			states, edges, len(tool.Edges), len(tool.Init))
	}
	res, mg := explore(t, program.Spec())
	if d := conform.Compare(mg, tool); !d.Empty() {
		t.Errorf("model/program does not have TLC's state graph:\n%s", d)
	}
	if res.States() != out.Distinct || res.Depth != out.Depth || !res.OK() {
		t.Errorf("model/program: %d states, depth %d, ok %v; TLC: %d distinct, depth %d, no error",
			res.States(), res.Depth, res.OK(), out.Distinct, out.Depth)
	}
	t.Logf("TLC %s: %d distinct states, %d edges, depth %d: equal to model/program", out.Version, states, edges, out.Depth)
}

func checkFizzSession(t *testing.T, r *conform.Report) {
	if r.Manifest.Tool != "FizzBee" || r.Manifest.ExitCode != 0 {
		t.Errorf("manifest: tool %q exit %d, want FizzBee exit 0", r.Manifest.Tool, r.Manifest.ExitCode)
	}
	out, err := conform.ParseFizzOutput(bytes.NewReader(readFile(t, r, "stdout.txt")))
	if err != nil {
		t.Fatal(err)
	}
	if out.Verdict != "PASSED" || out.VerdictLine != r.Manifest.Verdict {
		t.Errorf("FizzBee verdict %q (manifest %q), want PASSED", out.VerdictLine, r.Manifest.Verdict)
	}
	if out.UniqueStates != 9 {
		t.Errorf("FizzBee: %d unique states, want 9", out.UniqueStates)
	}
	tool := fizzGraph(t, r)
	states, edges := tool.Counts()
	selfLoops := 0
	for _, e := range tool.Edges {
		if e.From == e.To {
			selfLoops++
			if e.Action != session.RespStart {
				t.Errorf("FizzBee self-loop %s, want only RespStart", e.Action)
			}
		}
	}
	if states != 9 || edges != 36 || len(tool.Edges) != 36 || selfLoops != 4 || len(tool.Stutters) != 1 {
		t.Errorf("FizzBee graph: %d states, %d edges (%d links), %d self-loops, %d end stutters; want 9, 36, 36, 4, 1",
			states, edges, len(tool.Edges), selfLoops, len(tool.Stutters))
	}
	res, mg := explore(t, session.Spec(session.Options{}))
	if d := conform.Compare(mg, tool); !d.Empty() {
		t.Errorf("model/session does not have FizzBee's state graph:\n%s", d)
	}
	if res.States() != 9 || res.Transitions() != 36 || len(res.Graph.Stutters) != 1 || !res.OK() {
		t.Errorf("model/session: %d states, %d transitions, %d stutters, ok %v; want 9, 36, 1, true",
			res.States(), res.Transitions(), len(res.Graph.Stutters), res.OK())
	}
	t.Logf("FizzBee %s: %d unique states, %d edges (%d RespStart self-loops) + %d end stutter: equal to model/session",
		out.VerdictLine, out.UniqueStates, edges, selfLoops, len(tool.Stutters))
}

// checkFizzMutant checks a FizzBee report of a session.fizz mutant: FizzBee
// finds ChildrenDieWithParent violated along trace, and its counterexample
// is model/session's (with opt), state for state.
func checkFizzMutant(opt session.Options, trace ...string) func(*testing.T, *conform.Report) {
	return func(t *testing.T, r *conform.Report) {
		if r.Manifest.Tool != "FizzBee" || r.Manifest.ExitCode != 0 {
			t.Errorf("manifest: tool %q exit %d, want FizzBee exit 0 (it exits 0 on FAILED)", r.Manifest.Tool, r.Manifest.ExitCode)
		}
		out, err := conform.ParseFizzOutput(bytes.NewReader(readFile(t, r, "stdout.txt")))
		if err != nil {
			t.Fatal(err)
		}
		if out.Verdict != "FAILED" || out.FailedInvariant != "ChildrenDieWithParent" || out.VerdictLine != r.Manifest.Verdict {
			t.Errorf("FizzBee verdict %q (invariant %q), want FAILED ChildrenDieWithParent", out.VerdictLine, out.FailedInvariant)
		}
		errGraph, err := conform.ParseFizzErrorGraph(bytes.NewReader(readFile(t, r, "error-graph.json")))
		if err != nil {
			t.Fatal(err)
		}
		if !sameSteps(out.Trace, errGraph) {
			t.Errorf("FizzBee's printed trace %v differs from its error-graph.json %v", out.Trace, errGraph)
		}
		sp := session.Spec(opt)
		res, _ := explore(t, sp)
		var want []conform.FizzStep
		for _, v := range res.Violations {
			if v.Name != "ChildrenDieWithParent" {
				t.Errorf("model mutant: unexpected violation %s", v.Name)
				continue
			}
			for _, s := range v.Trace {
				st, err := conform.State(sp.Vars, sp.Valuation(s.State))
				if err != nil {
					t.Fatal(err)
				}
				want = append(want, conform.FizzStep{Action: s.Action, State: st})
			}
		}
		if got := stepNames(out.Trace); !slices.Equal(got, trace) {
			t.Errorf("FizzBee trace %v, want %v", got, trace)
		}
		if !sameSteps(want, out.Trace) {
			t.Errorf("FizzBee's counterexample differs from model/session's (%s):\nFizzBee: %s\nmodel:   %s",
				opt, formatSteps(out.Trace), formatSteps(want))
		}
		t.Logf("FizzBee %s: trace %s, equal to model/session's counterexample", out.VerdictLine, formatSteps(out.Trace))
	}
}

// checkTLCMutant checks a TLC report of a Program.tla mutant: TLC finds
// the mutant's property violated, and its counterexample is
// model/program's, state for state.
func checkTLCMutant(m program.Mutant) func(*testing.T, *conform.Report) {
	return func(t *testing.T, r *conform.Report) {
		if r.Manifest.Tool != "TLC" || r.Manifest.ExitCode == 0 {
			t.Errorf("manifest: tool %q exit %d, want TLC failing", r.Manifest.Tool, r.Manifest.ExitCode)
		}
		out, err := conform.ParseTLCOutput(bytes.NewReader(readFile(t, r, "stdout.txt")))
		if err != nil {
			t.Fatal(err)
		}
		wantErr := []string{"Invariant " + m.Breaks() + " is violated.", "Action property " + m.Breaks() + " is violated."}
		if len(out.Errors) == 0 || !slices.Contains(wantErr, out.Errors[0]) || "Error: "+out.Errors[0] != r.Manifest.Verdict {
			t.Errorf("TLC errors %q (manifest %q), want %s violated", out.Errors, r.Manifest.Verdict, m.Breaks())
		}
		sp := program.MutantSpec(m)
		res, _ := explore(t, sp)
		if res.OK() {
			t.Fatalf("model/program %s: no violation", m)
		}
		v := res.Violations[0]
		if v.Name != m.Breaks() {
			t.Errorf("model/program %s: first violation %s, TLC's %s", m, v.Name, m.Breaks())
		}
		var steps []conform.TLCStep
		for _, s := range out.Trace {
			if s.Action != "Stuttering" && !strings.HasPrefix(s.Action, "Back to state") {
				steps = append(steps, s)
			}
		}
		if len(steps) != len(v.Trace) {
			t.Fatalf("TLC's counterexample has %d states, model/program's %d", len(steps), len(v.Trace))
		}
		var names []string
		for i, s := range v.Trace {
			st, err := conform.State(sp.Vars, sp.Valuation(s.State))
			if err != nil {
				t.Fatal(err)
			}
			if steps[i].Action != s.Action || !steps[i].State.Equal(st) {
				t.Errorf("step %d: TLC %s %s, model/program %s %s", i+1, steps[i].Action, conform.FormatState(steps[i].State), s.Action, conform.FormatState(st))
			}
			names = append(names, s.Action)
		}
		t.Logf("TLC: %s along %v, equal to model/program's counterexample (%s)", out.Errors[0], names, m)
	}
}

func stepNames(s []conform.FizzStep) []string {
	var out []string
	for _, x := range s {
		out = append(out, x.Action)
	}
	return out
}

func sameSteps(a, b []conform.FizzStep) bool {
	return slices.EqualFunc(a, b, func(x, y conform.FizzStep) bool {
		return x.Action == y.Action && x.State.Equal(y.State)
	})
}

func formatSteps(s []conform.FizzStep) string {
	var parts []string
	for _, x := range s {
		parts = append(parts, x.Action+" ("+conform.FormatState(x.State)+")")
	}
	return strings.Join(parts, " -> ")
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
