// Package formal holds what the bundled specs' TLC and FizzBee reports
// (formal-verification/reports, or fresh ones from make formal) must show
// against the Go transcriptions: verdicts, counts, whole graphs and
// counterexamples, state for state. The conformance tests and the gate
// (tracecheck verify) both run these checks.
package formal

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/tracecheck/tracecheck/conform"
	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/model/program"
	"github.com/tracecheck/tracecheck/model/session"
)

// ErrDisagrees reports a tool report that does not show what the Go
// transcription computes.
var ErrDisagrees = errors.New("the tool's report disagrees with the transcription")

// Check is what one report must show.
type Check struct {
	// Name is the report's directory under formal-verification/reports.
	Name string
	// Verify checks the loaded report and returns one line saying what
	// agreed, or an error wrapping ErrDisagrees (or the reading error).
	Verify func(r *conform.Report) (string, error)
}

// Checks lists every bundled report and what it must show: the bundled
// specs' (Program.tla, session.fizz and their mutants), then the
// per-machine specs' (machineChecks, machines.go).
var Checks = slices.Concat([]Check{
	{"tlc-program", tlcProgram},
	{"tlc-program-publish-from-staging", tlcMutant(program.PublishFromStaging)},
	{"tlc-program-failed-to-published", tlcMutant(program.FailedToPublished)},
	{"tlc-program-leave-published", tlcMutant(program.LeavePublished)},
	{"tlc-program-interrupt-after-published", tlcMutant(program.InterruptAfterPublished)},
	{"fizzbee-session", fizzSession},
	{"fizzbee-session-no-compaction-teardown", fizzMutant(session.Options{NoCompactionTeardown: true}, "Init", session.Teardown)},
	{"fizzbee-session-no-vad-teardown", fizzMutant(session.Options{NoVadTeardown: true}, "Init", session.Teardown)},
	{"fizzbee-session-no-resp-teardown", fizzMutant(session.Options{NoRespTeardown: true}, "Init", session.Teardown)},
	{"fizzbee-session-child-starts-after-teardown", fizzMutant(session.Options{ChildStartsAfterTeardown: true}, "Init", session.Teardown, session.RespStart)},
}, machineChecks)

// Load reads the report in dir and verifies it against the specs under
// root (conform.ErrNoReport if it is absent, conform.ErrStale if a spec
// changed since).
func Load(dir, root string) (*conform.Report, error) {
	r, err := conform.LoadReport(dir)
	if err != nil {
		return nil, err
	}
	if err := r.Verify(root); err != nil {
		return nil, err
	}
	return r, nil
}

// errs collects disagreements.
type errs []string

func (e *errs) add(format string, args ...any) { *e = append(*e, fmt.Sprintf(format, args...)) }

func (e errs) err(report string) error {
	if len(e) == 0 {
		return nil
	}
	return fmt.Errorf("%s: %w:\n  %s", report, ErrDisagrees, strings.Join(e, "\n  "))
}

func read(r *conform.Report, name string) ([]byte, error) {
	b, err := os.ReadFile(r.Path(name))
	if err != nil {
		return nil, fmt.Errorf("report %s: %w", r.Manifest.Report, err)
	}
	return b, nil
}

func explore[S comparable](sp *model.Spec[S]) (*model.Result[S], *conform.Graph, error) {
	res, err := model.Explore(context.Background(), sp, model.Options{})
	if err != nil {
		return nil, nil, err
	}
	g, err := conform.FromModel(sp, &res.Graph)
	if err != nil {
		return nil, nil, err
	}
	return res, g, nil
}

// TLCGraph parses the report's TLC state graph dump.
func TLCGraph(r *conform.Report) (*conform.Graph, error) {
	b, err := read(r, "states.dot")
	if err != nil {
		return nil, err
	}
	return conform.ParseTLCDot(bytes.NewReader(b))
}

// FizzGraph parses the report's FizzBee state graph dump.
func FizzGraph(r *conform.Report) (*conform.Graph, error) {
	nodes, err := read(r, "nodes_000000_of_000000.pb")
	if err != nil {
		return nil, err
	}
	links, err := read(r, "adjacency_lists_000000_of_000000.pb")
	if err != nil {
		return nil, err
	}
	return conform.ParseFizzGraph(nodes, links)
}

// tlcOutput checks the report's manifest (TLC; exit 0 when failing is
// false, non-zero when it is true) and parses TLC's stdout.
func tlcOutput(r *conform.Report, e *errs, failing bool) (*conform.TLCReport, error) {
	if r.Manifest.Tool != "TLC" || (r.Manifest.ExitCode != 0) != failing {
		want := "exit 0"
		if failing {
			want = "failing"
		}
		e.add("manifest: tool %q exit %d, want TLC %s", r.Manifest.Tool, r.Manifest.ExitCode, want)
	}
	b, err := read(r, "stdout.txt")
	if err != nil {
		return nil, err
	}
	return conform.ParseTLCOutput(bytes.NewReader(b))
}

// fizzOutput checks the report's manifest (FizzBee, exit 0: it exits 0 on
// FAILED too) and parses FizzBee's stdout.
func fizzOutput(r *conform.Report, e *errs) (*conform.FizzReport, error) {
	if r.Manifest.Tool != "FizzBee" || r.Manifest.ExitCode != 0 {
		e.add("manifest: tool %q exit %d, want FizzBee exit 0", r.Manifest.Tool, r.Manifest.ExitCode)
	}
	b, err := read(r, "stdout.txt")
	if err != nil {
		return nil, err
	}
	return conform.ParseFizzOutput(bytes.NewReader(b))
}

func tlcProgram(r *conform.Report) (string, error) {
	var e errs
	out, err := tlcOutput(r, &e, false)
	if err != nil {
		return "", err
	}
	if out.Version != r.Manifest.ToolVersion || !strings.HasPrefix(out.Version, "TLC2 Version ") {
		e.add("TLC version %q, manifest says %q", out.Version, r.Manifest.ToolVersion)
	}
	if !out.NoError || len(out.Errors) > 0 {
		e.add("TLC did not print \"No error has been found\" (errors: %q)", out.Errors)
	}
	if out.Distinct != 9 || out.Left != 0 {
		e.add("TLC: %d distinct states, %d left on queue; want 9 and 0", out.Distinct, out.Left)
	}
	tool, err := TLCGraph(r)
	if err != nil {
		return "", err
	}
	states, edges := tool.Counts()
	if states != 9 || edges != 15 || len(tool.Edges) != 15 || len(tool.Init) != 1 {
		e.add("TLC dot: %d states, %d distinct edges (%d lines), %d initial; want 9, 15, 15, 1",
			states, edges, len(tool.Edges), len(tool.Init))
	}
	res, mg, err := explore(program.Spec())
	if err != nil {
		return "", err
	}
	if d := conform.Compare(mg, tool); !d.Empty() {
		e.add("model/program does not have TLC's state graph:\n%s", d)
	}
	if res.States() != out.Distinct || res.Depth != out.Depth || !res.OK() {
		e.add("model/program: %d states, depth %d, ok %v; TLC: %d distinct, depth %d, no error",
			res.States(), res.Depth, res.OK(), out.Distinct, out.Depth)
	}
	return fmt.Sprintf("TLC %s: %d distinct states, %d edges, depth %d: equal to model/program", out.Version, states, edges, out.Depth),
		e.err(r.Manifest.Report)
}

func fizzSession(r *conform.Report) (string, error) {
	var e errs
	out, err := fizzOutput(r, &e)
	if err != nil {
		return "", err
	}
	if out.Verdict != "PASSED" || out.VerdictLine != r.Manifest.Verdict {
		e.add("FizzBee verdict %q (manifest %q), want PASSED", out.VerdictLine, r.Manifest.Verdict)
	}
	if out.UniqueStates != 9 {
		e.add("FizzBee: %d unique states, want 9", out.UniqueStates)
	}
	tool, err := FizzGraph(r)
	if err != nil {
		return "", err
	}
	states, edges := tool.Counts()
	selfLoops := 0
	for _, ed := range tool.Edges {
		if ed.From == ed.To {
			selfLoops++
			if ed.Action != session.RespStart {
				e.add("FizzBee self-loop %s, want only RespStart", ed.Action)
			}
		}
	}
	if states != 9 || edges != 36 || len(tool.Edges) != 36 || selfLoops != 4 || len(tool.Stutters) != 1 {
		e.add("FizzBee graph: %d states, %d edges (%d links), %d self-loops, %d end stutters; want 9, 36, 36, 4, 1",
			states, edges, len(tool.Edges), selfLoops, len(tool.Stutters))
	}
	res, mg, err := explore(session.Spec(session.Options{}))
	if err != nil {
		return "", err
	}
	if d := conform.Compare(mg, tool); !d.Empty() {
		e.add("model/session does not have FizzBee's state graph:\n%s", d)
	}
	if res.States() != 9 || res.Transitions() != 36 || len(res.Graph.Stutters) != 1 || !res.OK() {
		e.add("model/session: %d states, %d transitions, %d stutters, ok %v; want 9, 36, 1, true",
			res.States(), res.Transitions(), len(res.Graph.Stutters), res.OK())
	}
	return fmt.Sprintf("FizzBee %s: %d unique states, %d edges (%d RespStart self-loops) + %d end stutter: equal to model/session",
		out.VerdictLine, out.UniqueStates, edges, selfLoops, len(tool.Stutters)), e.err(r.Manifest.Report)
}

// fizzMutant checks a FizzBee report of a session.fizz mutant: FizzBee
// finds ChildrenDieWithParent violated along trace, and its counterexample
// is model/session's (with opt), state for state.
func fizzMutant(opt session.Options, trace ...string) func(*conform.Report) (string, error) {
	return func(r *conform.Report) (string, error) {
		var e errs
		out, err := fizzOutput(r, &e)
		if err != nil {
			return "", err
		}
		if out.Verdict != "FAILED" || out.FailedInvariant != "ChildrenDieWithParent" || out.VerdictLine != r.Manifest.Verdict {
			e.add("FizzBee verdict %q (invariant %q), want FAILED ChildrenDieWithParent", out.VerdictLine, out.FailedInvariant)
		}
		eg, err := read(r, "error-graph.json")
		if err != nil {
			return "", err
		}
		errGraph, err := conform.ParseFizzErrorGraph(bytes.NewReader(eg))
		if err != nil {
			return "", err
		}
		if !sameSteps(out.Trace, errGraph) {
			e.add("FizzBee's printed trace %v differs from its error-graph.json %v", out.Trace, errGraph)
		}
		sp := session.Spec(opt)
		res, _, err := explore(sp)
		if err != nil {
			return "", err
		}
		var want []conform.FizzStep
		for _, v := range res.Violations {
			if v.Name != "ChildrenDieWithParent" {
				e.add("model mutant: unexpected violation %s", v.Name)
				continue
			}
			for _, s := range v.Trace {
				st, err := conform.State(sp.Vars, sp.Valuation(s.State))
				if err != nil {
					return "", err
				}
				want = append(want, conform.FizzStep{Action: s.Action, State: st})
			}
		}
		if got := stepNames(out.Trace); !slices.Equal(got, trace) {
			e.add("FizzBee trace %v, want %v", got, trace)
		}
		if !sameSteps(want, out.Trace) {
			e.add("FizzBee's counterexample differs from model/session's (%s):\nFizzBee: %s\nmodel:   %s",
				opt, formatSteps(out.Trace), formatSteps(want))
		}
		return fmt.Sprintf("FizzBee %s: trace %s, equal to model/session's counterexample", out.VerdictLine, formatSteps(out.Trace)),
			e.err(r.Manifest.Report)
	}
}

// tlcMutant checks a TLC report of a Program.tla mutant: TLC finds the
// mutant's property violated, and its counterexample is model/program's,
// state for state.
func tlcMutant(m program.Mutant) func(*conform.Report) (string, error) {
	return func(r *conform.Report) (string, error) {
		var e errs
		out, err := tlcOutput(r, &e, true)
		if err != nil {
			return "", err
		}
		wantErr := []string{"Invariant " + m.Breaks() + " is violated.", "Action property " + m.Breaks() + " is violated."}
		if len(out.Errors) == 0 || !slices.Contains(wantErr, out.Errors[0]) || "Error: "+out.Errors[0] != r.Manifest.Verdict {
			e.add("TLC errors %q (manifest %q), want %s violated", out.Errors, r.Manifest.Verdict, m.Breaks())
		}
		sp := program.MutantSpec(m)
		res, _, err := explore(sp)
		if err != nil {
			return "", err
		}
		if res.OK() {
			e.add("model/program %s: no violation", m)
			return "", e.err(r.Manifest.Report)
		}
		v := res.Violations[0]
		if v.Name != m.Breaks() {
			e.add("model/program %s: first violation %s, TLC's %s", m, v.Name, m.Breaks())
		}
		var steps []conform.TLCStep
		for _, s := range out.Trace {
			if s.Action != "Stuttering" && !strings.HasPrefix(s.Action, "Back to state") {
				steps = append(steps, s)
			}
		}
		if len(steps) != len(v.Trace) {
			e.add("TLC's counterexample has %d states, model/program's %d", len(steps), len(v.Trace))
			return "", e.err(r.Manifest.Report)
		}
		var names []string
		for i, s := range v.Trace {
			st, err := conform.State(sp.Vars, sp.Valuation(s.State))
			if err != nil {
				return "", err
			}
			if steps[i].Action != s.Action || !steps[i].State.Equal(st) {
				e.add("step %d: TLC %s %s, model/program %s %s", i+1, steps[i].Action, conform.FormatState(steps[i].State), s.Action, conform.FormatState(st))
			}
			names = append(names, s.Action)
		}
		first := ""
		if len(out.Errors) > 0 {
			first = out.Errors[0]
		}
		return fmt.Sprintf("TLC: %s along %v, equal to model/program's counterexample (%s)", first, names, m), e.err(r.Manifest.Report)
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

// Result is one report's outcome.
type Result struct {
	Name    string
	Summary string
	// Absent is set when the report is not there (it could not be
	// produced); Err is then conform.ErrNoReport.
	Absent bool
	Err    error
}

// All checks every report under dir (formal-verification/reports, or a
// live run's output) against the specs under root.
func All(dir, root string) []Result {
	var out []Result
	for _, c := range Checks {
		res := Result{Name: c.Name}
		r, err := Load(filepath.Join(dir, c.Name), root)
		switch {
		case errors.Is(err, conform.ErrNoReport):
			res.Absent, res.Err = true, err
		case err != nil:
			res.Err = err
		default:
			res.Summary, res.Err = c.Verify(r)
		}
		out = append(out, res)
	}
	return out
}
