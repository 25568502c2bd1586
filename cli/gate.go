package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/tracecheck/tracecheck/chart"
	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/conform"
	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/mutate"
)

// GateConfig says what a team's gate runs: the verify command that
// [GateCommand] builds for the specs a program registers. Its stages run
// in this order, each with a verdict, figures and the time taken:
//
//   - explore: every spec explored exhaustively (its invariants and action
//     properties hold, no deadlock, as explore reports), and every spec
//     [Mutant] caught (its exploration violates the property it Breaks);
//   - conformance: for each [GateConformance], the transcription's state
//     graph equals the one the real tool dumped, edge for edge;
//   - commands: the team's own [GateStep]s (its tests, its system's
//     scenario runner), each passing on exit 0;
//   - traces: every [GateTraces] file checked with its expected verdict,
//     and the transition coverage of the valid ones held to each
//     [GateCoverage] minimum;
//   - mutants (with --mutants): every named code mutant killed by its
//     tests (package mutate).
//
// The commands stage runs before the traces stage, so that a step may
// write traces into the run directory ("{dir}") for the traces stage to
// check.
type GateConfig struct {
	// Name is the command's name. Default "verify".
	Name string
	// Program names the program in the commands that reproduce a failure
	// (e.g. "twophase-check explore twophase"). Default: the base name of
	// os.Args[0].
	Program string
	// Specs are the specs the program registers (Config.Specs): the same
	// values, so that the gate checks what the other commands check.
	Specs []Spec
	// Conformance lists the retained tool outputs each transcription must
	// equal.
	Conformance []GateConformance
	// Steps are the team's own stages (the commands stage).
	Steps []GateStep
	// Traces are the trace files the traces stage checks.
	Traces []GateTraces
	// Coverage holds the valid traces of a spec to a minimum transition
	// coverage.
	Coverage []GateCoverage
	// Mutants are the team's named code mutants (as in [MutateConfig]):
	// with --mutants each must be killed by its tests.
	Mutants []mutate.Mutant
	// MutantTimeout bounds one test run of a mutant. Default 10 minutes.
	MutantTimeout time.Duration
}

// GateConformance names a retained tool output a spec's transcription must
// equal: its whole labelled state graph, state for state and edge for
// edge. TLC's edge labels with arguments (RMPrepare("r1")) are compared
// by their action (RMPrepare), as conform.ActionOf gives it.
type GateConformance struct {
	// Spec is the registered spec's name.
	Spec string
	// Graph is the tool's dump, relative to the root: a TLC `-dump
	// dot,actionlabels` file, or a FizzBee directory holding its nodes and
	// adjacency-list files (conform.LoadGraph). A missing dump fails the
	// stage.
	Graph string
	// Report, if set, is the directory of the run's manifest.json
	// (conform.Report), relative to the root: the stage fails if a spec
	// file or an output changed since the tool ran (a stale report).
	Report string
	// Regenerate is the command that produces the dump again, quoted in
	// the failure (e.g. "TLA2TOOLS=... bash formal/run.sh").
	Regenerate string
}

// GateStep is one of the team's own stages: a command run in the root, or
// a Go function. "{dir}" in Argv and Env is replaced by the run directory.
type GateStep struct {
	// Name names the step in progress lines and failures.
	Name string
	// Argv is the command and its arguments (e.g. go test ./...), run in
	// the root; it passes on exit 0. Set Argv or Run, not both.
	Argv []string
	// Env holds extra KEY=VALUE entries for Argv's environment.
	Env []string
	// Run, if set, is the step as a function of the program itself (a
	// workload of the team's system that writes traces under dir); it
	// passes when it returns nil. What it writes to log is its output.
	Run func(ctx context.Context, dir string, log io.Writer) error
	// Timeout bounds the step. Default 10 minutes.
	Timeout time.Duration
	// Slow steps are skipped by --quick.
	Slow bool
}

// GateTraces is a set of trace files the traces stage checks, each with
// the same expected verdict.
type GateTraces struct {
	// Name names the set in figures and failures.
	Name string
	// Spec is the registered spec the traces are checked against; "" lets
	// each trace's header (or its events) say, as check does.
	Spec string
	// Files are glob patterns (filepath.Match), relative to the root;
	// "{dir}" is the run directory. A pattern that matches no file fails
	// the stage.
	Files []string
	// Want is the verdict every file must get: check.Valid (the default,
	// 0), or check.Violation for a corpus of known-bad traces (each file
	// must then hold a violation), or check.Incomplete.
	Want check.Verdict
}

// GateCoverage holds the traces of a spec that the traces stage found
// valid to a minimum coverage of its state graph.
type GateCoverage struct {
	// Spec is the registered spec's name.
	Spec string
	// Min is the fraction (0 to 1) of the spec's transitions the valid
	// traces must exercise; the transitions counted are every edge of the
	// explored graph but terminal self-loops (a state's stuttering when it
	// has no other way out). 1 requires them all. 0 requires none.
	Min float64
	// Actions requires every action of the spec to be exercised at least
	// once.
	Actions bool
}

// The gate's stages, in order.
const (
	StageExplore     = "explore"
	StageConformance = "conformance"
	StageCommands    = "commands"
	StageTraces      = "traces"
	StageMutants     = "mutants"
)

var gateStages = []string{StageExplore, StageConformance, StageCommands, StageTraces, StageMutants}

// GateOptions say how [RunGate] runs: the flags of the verify command.
type GateOptions struct {
	// Root is the directory paths are relative to and steps run in.
	// Default ".".
	Root string
	// Dir is the run directory, for the files the gate writes (the steps'
	// output, summary.json, and what steps write there). It must be new or
	// empty. Default: a new temporary directory, kept.
	Dir string
	// Quick skips the steps marked Slow and the mutants.
	Quick bool
	// Mutants runs the code mutants.
	Mutants bool
	// Stages, if set, runs only the named stages; the others are skipped.
	Stages []string
	// Progress receives a line as each stage starts and ends.
	Progress io.Writer
}

// GateResult is what a gate run found: the summary --json prints and
// summary.json holds.
type GateResult struct {
	// Verdict is "PASS" or "FAIL".
	Verdict string `json:"verdict"`
	Quick   bool   `json:"quick"`
	Root    string `json:"root"`
	Dir     string `json:"dir"`
	// Summary is summary.json's path.
	Summary string        `json:"summary"`
	Started time.Time     `json:"started"`
	Elapsed time.Duration `json:"elapsed_ns"`
	Stages  []GateStage   `json:"stages"`
	// Coverage maps each spec held to a minimum to [transitions
	// exercised, transitions counted].
	Coverage map[string][2]int `json:"coverage"`
}

// GateStage is one stage's outcome.
type GateStage struct {
	Name string `json:"name"`
	// Verdict is "PASS", "FAIL" or "SKIP".
	Verdict string        `json:"verdict"`
	Figures string        `json:"figures"`
	Elapsed time.Duration `json:"elapsed_ns"`
	// Failures say what failed, each with the command that reproduces it.
	Failures []string `json:"failures,omitempty"`
}

// The gate's verdicts.
const (
	gatePass = "PASS"
	gateFail = "FAIL"
	gateSkip = "SKIP"
)

// ErrGateConfig reports a GateConfig or GateOptions that cannot describe a
// gate (an unknown spec, a step without a command); the verify command
// exits with [ExitUsage] on it.
var ErrGateConfig = errors.New("gate configuration")

// ErrGateRun reports a gate that could not run (its run directory is not
// empty, or cannot be made); the verify command exits with [ExitInput].
var ErrGateRun = errors.New("gate cannot run")

const gateSynopsis = `[--quick] [--mutants] [--json] [--root DIR] [--dir DIR] [--stages LIST]

Runs the gate on this program's specs and system, stage by stage: explore
(every spec's invariants hold and no deadlock; every spec mutant breaks
the property it names), conformance (each transcription's state graph
equals the retained TLC or FizzBee dump, edge for edge), commands (the
team's own steps, each passing on exit 0), traces (every trace file gets
its expected verdict, and the valid ones cover the spec's transitions to
the configured minimum), mutants (with --mutants: every named code mutant
killed by its tests). Each stage prints a progress line on stderr as it
starts and ends; at the end a table (stage, verdict, time, figures) goes
to stdout, then every failure with the command that reproduces it.
--json prints the summary as JSON instead: {"verdict", "quick", "root",
"dir", "summary", "started", "elapsed_ns", "stages": [{"name", "verdict",
"figures", "elapsed_ns", "failures"}], "coverage": {SPEC: [exercised,
counted]}}. The run directory (--dir, new or empty; default a new
temporary directory) keeps each step's output and summary.json. Paths are
relative to --root, and steps run there. --quick skips slow steps and
mutants. Interrupting it (SIGINT) cancels the running stage.

Exit codes: 0 every stage passed; 1 a stage failed; 2 usage; 3 the gate
could not run (the run directory is not empty or cannot be made).`

// GateCommand returns the verify command for cfg: a team's own binary
// adds it to Config.Commands to gate its CI on its specs, its retained
// tool output, its traces, its own tests and its code mutants, as
// tracecheck verify does for the bundled systems.
func GateCommand(cfg GateConfig) Command {
	name := cfg.Name
	if name == "" {
		name = "verify"
	}
	return Command{Name: name, Summary: "run the gate: explore, conformance, the team's commands, traces and coverage, code mutants",
		Run: func(args []string, stdout, stderr io.Writer) int { return runGate(cfg, name, args, stdout, stderr) }}
}

func runGate(cfg GateConfig, name string, args []string, stdout, stderr io.Writer) int {
	fs := NewFlagSet(name, gateSynopsis, stderr)
	quick := fs.Bool("quick", false, "skip the slow steps and the mutants")
	mutants := fs.Bool("mutants", false, "also run the named code mutants (needs go and the source tree)")
	asJSON := fs.Bool("json", false, UsageJSON)
	root := fs.String("root", ".", UsageRoot+"; paths are relative to it and steps run in it")
	dir := fs.String("dir", "", "the run `directory`, new or empty (default: a new temporary directory)")
	only := fs.String("stages", "", "run only these stages, a comma-separated `list` of "+strings.Join(gateStages, ", "))
	pos, code := Parse(fs, args)
	if code >= 0 {
		return code
	}
	if len(pos) > 0 {
		fmt.Fprintf(stderr, "tracecheck %s: unexpected arguments %q\n", name, pos)
		fs.Usage()
		return ExitUsage
	}
	opt := GateOptions{Root: *root, Dir: *dir, Quick: *quick, Mutants: *mutants, Progress: safe(stderr)}
	if *only != "" {
		opt.Stages = strings.Split(*only, ",")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	res, err := RunGate(ctx, cfg, opt)
	switch {
	case errors.Is(err, ErrGateConfig):
		fmt.Fprintf(stderr, "tracecheck %s: %v\n", name, err)
		return ExitUsage
	case err != nil && res == nil:
		fmt.Fprintf(stderr, "tracecheck %s: %v\n", name, err)
		return ExitInput
	case err != nil:
		fmt.Fprintf(stderr, "tracecheck %s: %v\n", name, err) // the summary could not be written
	}
	if *asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(res); err != nil {
			fmt.Fprintf(stderr, "tracecheck %s: %v\n", name, err)
			return ExitInput
		}
	} else {
		WriteGateTable(safe(stdout), name, res)
	}
	if ctx.Err() != nil {
		fmt.Fprintf(stderr, "tracecheck %s: interrupted\n", name)
	}
	if res.Verdict != gatePass {
		return ExitViolation
	}
	return ExitOK
}

// WriteGateTable writes a gate's summary table (one row per stage: name,
// verdict, time, figures), the verdict and run directory, then every
// failure in full with the command that reproduces it.
func WriteGateTable(w io.Writer, name string, res *GateResult) {
	fmt.Fprintf(w, "%-12s %-7s %9s  %s\n", "stage", "verdict", "time", "figures")
	for _, s := range res.Stages {
		fmt.Fprintf(w, "%-12s %-7s %9s  %s\n", s.Name, s.Verdict, shortDuration(s.Elapsed), s.Figures)
	}
	fmt.Fprintf(w, "\n%s: %s in %s (run directory %s)\n", name, res.Verdict, res.Elapsed.Round(100*time.Millisecond), res.Dir)
	for _, s := range res.Stages {
		for _, f := range s.Failures {
			fmt.Fprintf(w, "\nFAIL %s: %s\n", s.Name, f)
		}
	}
}

// RunGate runs the gate cfg describes and writes summary.json in the run
// directory. A failing stage makes the result's Verdict "FAIL"; the error
// wraps [ErrGateConfig] for a configuration that names no real spec or
// step, [ErrGateRun] for a gate that could not run (no result then), or
// reports a summary.json that could not be written (with the result).
func RunGate(ctx context.Context, cfg GateConfig, opt GateOptions) (*GateResult, error) {
	g, err := newGate(cfg, opt)
	if err != nil {
		return nil, err
	}
	res := &GateResult{Verdict: gatePass, Quick: opt.Quick, Root: g.root, Dir: g.dir, Started: time.Now(), Coverage: map[string][2]int{}}
	g.res = res
	run := map[string]func(context.Context, *gateStage){
		StageExplore: g.explore, StageConformance: g.conformance, StageCommands: g.commands,
		StageTraces: g.traces, StageMutants: g.mutants,
	}
	for _, name := range gateStages {
		s := &gateStage{GateStage: GateStage{Name: name}}
		if why := g.skip(name); why != "" {
			s.Verdict, s.Figures = gateSkip, why
			fmt.Fprintf(g.progress, "%s: %-12s SKIP  %s\n", g.name, name, why)
			res.Stages = append(res.Stages, s.GateStage)
			continue
		}
		if ctx.Err() != nil {
			s.Verdict, s.Figures = gateFail, "not run: interrupted"
			s.fail("interrupted before the stage ran: %v", context.Cause(ctx))
			res.Verdict = gateFail
			res.Stages = append(res.Stages, s.GateStage)
			continue
		}
		fmt.Fprintf(g.progress, "%s: %-12s ...\n", g.name, name)
		start := time.Now()
		run[name](ctx, s)
		s.Elapsed = time.Since(start)
		switch {
		case len(s.Failures) > 0:
			s.Verdict, res.Verdict = gateFail, gateFail
		case s.Verdict == "":
			s.Verdict = gatePass
		}
		fmt.Fprintf(g.progress, "%s: %-12s %-5s %s (%s)\n", g.name, name, s.Verdict, s.Figures, shortDuration(s.Elapsed))
		for _, f := range s.Failures {
			fmt.Fprintf(g.progress, "%s:   %s\n", g.name, firstLineOf(f))
		}
		res.Stages = append(res.Stages, s.GateStage)
	}
	res.Elapsed = time.Since(res.Started)
	res.Summary = filepath.Join(g.dir, "summary.json")
	b, err := json.MarshalIndent(res, "", "  ")
	if err == nil {
		err = os.WriteFile(res.Summary, append(b, '\n'), 0o644)
	}
	if err != nil {
		return res, fmt.Errorf("gate: summary: %w", err)
	}
	return res, nil
}

// gate is one run of a gate.
type gate struct {
	cfg      GateConfig
	opt      GateOptions
	app      *app
	name     string
	prog     string
	root     string // absolute
	rootArg  string // as given, for reproduce commands
	dir      string // absolute
	progress io.Writer
	res      *GateResult
	// valid holds the reports of the traces found valid, by spec, for
	// coverage.
	valid map[string][]*check.Report
}

// gateStage is what a stage fills in.
type gateStage struct {
	GateStage
}

// fail records a failure.
func (s *gateStage) fail(format string, args ...any) {
	s.Failures = append(s.Failures, fmt.Sprintf(format, args...))
}

// figure appends to the stage's figures.
func (s *gateStage) figure(format string, args ...any) {
	if s.Figures != "" {
		s.Figures += "; "
	}
	s.Figures += fmt.Sprintf(format, args...)
}

func newGate(cfg GateConfig, opt GateOptions) (*gate, error) {
	a, err := newApp(Config{Specs: cfg.Specs})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrGateConfig, err)
	}
	g := &gate{cfg: cfg, opt: opt, app: a, name: cfg.Name, prog: cfg.Program, progress: opt.Progress, valid: map[string][]*check.Report{}}
	if g.name == "" {
		g.name = "verify"
	}
	if g.prog == "" {
		g.prog = filepath.Base(os.Args[0])
	}
	if g.progress == nil {
		g.progress = io.Discard
	}
	if err := g.validate(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrGateConfig, err)
	}
	g.rootArg = opt.Root
	if g.rootArg == "" {
		g.rootArg = "."
	}
	if g.root, err = filepath.Abs(g.rootArg); err != nil {
		return nil, fmt.Errorf("%w: root: %w", ErrGateRun, err)
	}
	if fi, err := os.Stat(g.root); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%w: root %s is not a directory", ErrGateRun, g.rootArg)
	}
	if opt.Dir == "" {
		if g.dir, err = os.MkdirTemp("", g.name+"-"); err != nil {
			return nil, fmt.Errorf("%w: run directory: %w", ErrGateRun, err)
		}
	} else {
		if g.dir, err = filepath.Abs(opt.Dir); err != nil {
			return nil, fmt.Errorf("%w: run directory: %w", ErrGateRun, err)
		}
		if ents, err := os.ReadDir(g.dir); err == nil && len(ents) > 0 {
			return nil, fmt.Errorf("%w: run directory %s is not empty", ErrGateRun, opt.Dir)
		}
		if err := os.MkdirAll(g.dir, 0o755); err != nil {
			return nil, fmt.Errorf("%w: run directory: %w", ErrGateRun, err)
		}
	}
	return g, nil
}

// validate checks that the configuration names registered specs, and that
// every step, trace set and coverage rule says what to do.
func (g *gate) validate() error {
	known := func(what, name string) error {
		if _, _, ok := g.app.spec(name, "", io.Discard); !ok {
			return fmt.Errorf("%s names spec %q, which is not registered (have %s)", what, name, strings.ReplaceAll(g.app.specNames(), "|", ", "))
		}
		return nil
	}
	for _, c := range g.cfg.Conformance {
		if err := known("a conformance entry", c.Spec); err != nil {
			return err
		}
		if c.Graph == "" {
			return fmt.Errorf("the conformance entry of %s names no graph", c.Spec)
		}
	}
	for i, s := range g.cfg.Steps {
		if s.Name == "" || (len(s.Argv) == 0) == (s.Run == nil) {
			return fmt.Errorf("step %d (%q) needs a name, and Argv or Run (one of them)", i, s.Name)
		}
	}
	for i, t := range g.cfg.Traces {
		if len(t.Files) == 0 {
			return fmt.Errorf("trace set %d (%q) names no files", i, t.Name)
		}
		if t.Spec != "" {
			if err := known(fmt.Sprintf("trace set %q", t.Name), t.Spec); err != nil {
				return err
			}
		}
		if t.Want > check.Violation {
			return fmt.Errorf("trace set %q wants verdict %d, not one of valid, incomplete, violation", t.Name, t.Want)
		}
	}
	for _, c := range g.cfg.Coverage {
		if err := known("a coverage rule", c.Spec); err != nil {
			return err
		}
		if c.Min < 0 || c.Min > 1 || math.IsNaN(c.Min) {
			return fmt.Errorf("the coverage rule of %s has minimum %v, not a fraction from 0 to 1", c.Spec, c.Min)
		}
	}
	for _, s := range g.opt.Stages {
		if !slices.Contains(gateStages, strings.TrimSpace(s)) {
			return fmt.Errorf("unknown stage %q (want %s)", s, strings.Join(gateStages, ", "))
		}
	}
	return nil
}

// skip says why a stage does not run ("" if it does).
func (g *gate) skip(name string) string {
	if len(g.opt.Stages) > 0 && !slices.ContainsFunc(g.opt.Stages, func(s string) bool { return strings.TrimSpace(s) == name }) {
		return "not selected (--stages)"
	}
	switch name {
	case StageConformance:
		if len(g.cfg.Conformance) == 0 {
			return "no retained tool output configured"
		}
	case StageCommands:
		if len(g.cfg.Steps) == 0 {
			return "no steps configured"
		}
	case StageTraces:
		if len(g.cfg.Traces) == 0 {
			return "no traces configured"
		}
	case StageMutants:
		switch {
		case len(g.cfg.Mutants) == 0:
			return "no code mutants configured"
		case g.opt.Quick:
			return "--quick"
		case !g.opt.Mutants:
			return "not asked for (--mutants)"
		}
	}
	return ""
}

// reproduce is the command line of the program that shows a failure.
func (g *gate) reproduce(args ...string) string {
	q := make([]string, len(args))
	for i, a := range args {
		q[i] = shellWord(a)
	}
	return "reproduce: " + g.prog + " " + strings.Join(q, " ")
}

// shellWord quotes s for a POSIX shell when it needs it.
func shellWord(s string) string {
	if s != "" && !strings.ContainsFunc(s, func(r rune) bool {
		return !(r == '-' || r == '_' || r == '.' || r == '/' || r == '=' || r == ':' || r == ',' || r == '+' ||
			'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	}) {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// exploreReport is what the gate reads of explore --json.
type exploreReport struct {
	States      int    `json:"states"`
	Transitions int    `json:"transitions"`
	Verdict     string `json:"verdict"`
	Violations  []struct {
		Kind string `json:"kind"`
		Name string `json:"name"`
	} `json:"violations"`
}

// exploreModel explores m as explore --json does.
func exploreModel(name string, m Model) (*exploreReport, int, error) {
	var out, errb bytes.Buffer
	code := m.explore(name, "", "json", &out, &errb)
	if code != ExitOK && code != ExitViolation {
		return nil, code, fmt.Errorf("explore %s: %s", name, strings.TrimSpace(errb.String()))
	}
	var r exploreReport
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		return nil, code, fmt.Errorf("explore %s: its JSON: %w", name, err)
	}
	return &r, code, nil
}

// explore is the explore stage.
func (g *gate) explore(ctx context.Context, s *gateStage) {
	caught, mutants := 0, 0
	for _, sp := range g.app.specs {
		if ctx.Err() != nil {
			s.fail("interrupted: %v", context.Cause(ctx))
			return
		}
		r, code, err := exploreModel(sp.Name, sp.Model)
		if err != nil {
			s.fail("%s: %v\n  %s", sp.Name, err, g.reproduce("explore", sp.Name))
			continue
		}
		if code != ExitOK || r.Verdict != "pass" {
			var what []string
			for _, v := range r.Violations {
				what = append(what, v.Kind+" "+v.Name)
			}
			s.fail("%s: %s violated\n  %s", sp.Name, strings.Join(what, ", "), g.reproduce("explore", sp.Name))
		}
		s.figure("%s: %d states, %d transitions", sp.Name, r.States, r.Transitions)
		for _, m := range sp.Mutants {
			mutants++
			r, _, err := exploreModel(sp.Name, m.Model)
			if err != nil {
				s.fail("%s mutant %s: %v\n  %s", sp.Name, m.Name, err, g.reproduce("explore", sp.Name, "--mutant", m.Name))
				continue
			}
			var got []string
			hit := false
			for _, v := range r.Violations {
				got = append(got, v.Name)
				hit = hit || m.Breaks == "" || v.Name == m.Breaks || strings.EqualFold(v.Kind, m.Breaks)
			}
			if !hit {
				want := m.Breaks
				if want == "" {
					want = "a property"
				}
				saw := "nothing is violated"
				if len(got) > 0 {
					saw = "only " + strings.Join(got, ", ") + " is violated"
				}
				s.fail("%s mutant %s is not caught: want %s violated, %s\n  %s", sp.Name, m.Name, want, saw, g.reproduce("explore", sp.Name, "--mutant", m.Name))
				continue
			}
			caught++
		}
	}
	if mutants > 0 {
		s.figure("%d/%d spec mutants caught", caught, mutants)
	}
}

// path resolves p (which may hold "{dir}") against the root.
func (g *gate) path(p string) string {
	p = strings.ReplaceAll(p, "{dir}", g.dir)
	if filepath.IsAbs(p) {
		return filepath.Clean(p)
	}
	return filepath.Join(g.root, p)
}

// shown is how failures name the path p: relative to the working
// directory when it lies under the root as given, else absolute.
func (g *gate) shown(p string) string {
	if rel, err := filepath.Rel(g.root, p); err == nil && !strings.HasPrefix(rel, "..") {
		return filepath.Join(g.rootArg, rel)
	}
	return p
}

// conformance is the conformance stage.
func (g *gate) conformance(ctx context.Context, s *gateStage) {
	for _, c := range g.cfg.Conformance {
		if ctx.Err() != nil {
			s.fail("interrupted: %v", context.Cause(ctx))
			return
		}
		regen := ""
		if c.Regenerate != "" {
			regen = "\n  regenerate it: " + c.Regenerate
		}
		path := g.path(c.Graph)
		if _, err := os.Stat(path); err != nil {
			s.fail("%s: no retained tool output at %s (%v): the transcription cannot be compared with the tool's graph%s",
				c.Spec, g.shown(path), err, regen)
			continue
		}
		if c.Report != "" {
			rep, err := conform.LoadReport(g.path(c.Report))
			if err == nil {
				err = rep.Verify(g.root)
			}
			if err != nil {
				s.fail("%s: %v%s", c.Spec, err, regen)
				continue
			}
		}
		tool, err := conform.LoadGraph(path)
		if err != nil {
			s.fail("%s: the retained tool output: %v%s", c.Spec, err, regen)
			continue
		}
		tool.Source = "TLC (" + g.shown(path) + ")"
		if fi, err := os.Stat(path); err == nil && fi.IsDir() {
			tool.Source = "FizzBee (" + g.shown(path) + ")"
		}
		for i := range tool.Edges {
			tool.Edges[i].Action = conform.ActionOf(tool.Edges[i].Action)
		}
		_, m, _ := g.app.spec(c.Spec, "", io.Discard)
		mine, err := transcriptionGraph(m)
		if err != nil {
			s.fail("%s: %v\n  %s", c.Spec, err, g.reproduce("chart", c.Spec, "--format", "dot"))
			continue
		}
		if d := conform.Compare(tool, mine); !d.Empty() {
			s.fail("%s: the transcription's state graph is not the one the tool computed:\n%s\n  %s (the transcription's graph, to compare with %s)",
				c.Spec, clipLines(d.String(), 40), g.reproduce("chart", c.Spec, "--format", "dot"), g.shown(path))
			continue
		}
		states, edges := mine.Counts()
		s.figure("%s: %d states, %d edges equal to %s's", c.Spec, states, edges, strings.SplitN(tool.Source, " ", 2)[0])
	}
}

// transcriptionGraph is m's explored state graph as a conform.Graph, read
// from chart's JSON (each value in TLA+ syntax, parsed back).
func transcriptionGraph(m Model) (*conform.Graph, error) {
	var out, errb bytes.Buffer
	if code := m.chart("json", &out, &errb); code != ExitOK {
		return nil, fmt.Errorf("exploring the transcription: %s", strings.TrimSpace(errb.String()))
	}
	var jg chart.JSONGraph
	if err := json.Unmarshal(out.Bytes(), &jg); err != nil {
		return nil, fmt.Errorf("the transcription's graph: %w", err)
	}
	g := &conform.Graph{Source: "the transcription", Init: jg.Init, Stutters: jg.Stutters}
	for i, st := range jg.States {
		vals := make([]model.Value, len(jg.Vars))
		for j, v := range jg.Vars {
			val, err := conform.ParseTLAValue(st[v])
			if err != nil {
				return nil, fmt.Errorf("state %d, variable %s: %w", i, v, err)
			}
			vals[j] = val
		}
		rec, err := conform.State(jg.Vars, vals)
		if err != nil {
			return nil, fmt.Errorf("state %d: %w", i, err)
		}
		g.States = append(g.States, rec)
	}
	for _, e := range jg.Edges {
		g.Edges = append(g.Edges, conform.Edge{From: e.From, To: e.To, Action: e.Action})
	}
	return g, nil
}

// clipLines keeps the first n lines of s.
func clipLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) <= n {
		return strings.Join(lines, "\n")
	}
	return strings.Join(lines[:n], "\n") + fmt.Sprintf("\n... and %d more lines", len(lines)-n)
}

// shortDuration rounds d for a table: to 10µs under 10ms, to the
// millisecond above.
func shortDuration(d time.Duration) time.Duration {
	if d < 10*time.Millisecond {
		return d.Round(10 * time.Microsecond)
	}
	return d.Round(time.Millisecond)
}

func firstLineOf(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}

// tail is an io.Writer that keeps the last max bytes written to it.
type tail struct {
	max int
	buf []byte
	n   int64
}

func (t *tail) Write(p []byte) (int, error) {
	t.n += int64(len(p))
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - t.max; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// lines returns the last n lines kept.
func (t *tail) lines(n int) string {
	ls := strings.Split(strings.TrimRight(string(t.buf), "\n"), "\n")
	if len(ls) > n {
		ls = ls[len(ls)-n:]
	}
	return "    " + strings.Join(ls, "\n    ")
}

// commands is the commands stage: the team's steps, in order.
func (g *gate) commands(ctx context.Context, s *gateStage) {
	ran, skipped := 0, 0
	for _, st := range g.cfg.Steps {
		if g.opt.Quick && st.Slow {
			skipped++
			fmt.Fprintf(g.progress, "%s:   step %s: skipped (slow, --quick)\n", g.name, st.Name)
			continue
		}
		if ctx.Err() != nil {
			s.fail("interrupted before step %s: %v", st.Name, context.Cause(ctx))
			return
		}
		ran++
		start := time.Now()
		err := g.step(ctx, st)
		fmt.Fprintf(g.progress, "%s:   step %s: %s (%s)\n", g.name, st.Name, map[bool]string{true: "ok", false: "FAILED"}[err == nil], time.Since(start).Round(time.Millisecond))
		if err != nil {
			s.fail("step %s: %v", st.Name, err)
		}
	}
	s.figure("%d/%d steps passed", ran-len(s.Failures), ran)
	if skipped > 0 {
		s.figure("%d slow skipped (--quick)", skipped)
	}
}

// step runs one step, its output kept in the run directory, and returns
// why it failed: the exit status, the tail of its output and how to run it
// again.
func (g *gate) step(ctx context.Context, st GateStep) error {
	timeout := st.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	logPath := filepath.Join(g.dir, "steps", strings.Map(func(r rune) rune {
		if r == '/' || r == os.PathSeparator || r == ' ' || r < ' ' {
			return '_'
		}
		return r
	}, st.Name)+".log")
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return fmt.Errorf("its log: %w", err)
	}
	f, err := os.Create(logPath)
	if err != nil {
		return fmt.Errorf("its log: %w", err)
	}
	defer f.Close()
	t := &tail{max: 16 << 10}
	out := io.MultiWriter(f, t)
	var how string
	if st.Run != nil {
		how = g.reproduce(g.name, "--root", g.rootArg, "--stages", StageCommands)
		err = runStepFunc(ctx, st, g.dir, out)
	} else {
		argv := make([]string, len(st.Argv))
		for i, a := range st.Argv {
			argv[i] = strings.ReplaceAll(a, "{dir}", g.dir)
		}
		env := make([]string, len(st.Env))
		for i, e := range st.Env {
			env[i] = strings.ReplaceAll(e, "{dir}", g.dir)
		}
		q := make([]string, len(argv))
		for i, a := range argv {
			q[i] = shellWord(a)
		}
		how = "reproduce: cd " + shellWord(g.rootArg) + " && " + strings.Join(append(slices.Clone(env), q...), " ")
		cmd := exec.CommandContext(ctx, argv[0], argv[1:]...)
		cmd.Dir, cmd.Stdout, cmd.Stderr = g.root, out, out
		cmd.Env = append(os.Environ(), env...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
		cmd.WaitDelay = 5 * time.Second
		err = cmd.Run()
	}
	if ctx.Err() == context.DeadlineExceeded {
		err = fmt.Errorf("timed out after %s", timeout)
	}
	if err == nil {
		return nil
	}
	shown := "no output"
	if t.n > 0 {
		shown = "the end of its output (all of it in " + g.shown(logPath) + "):\n" + t.lines(20)
	}
	return fmt.Errorf("%w; %s\n  %s", err, shown, how)
}

// runStepFunc runs a Go step, a panic reported as its failure.
func runStepFunc(ctx context.Context, st GateStep, dir string, out io.Writer) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("panic: %v", p)
		}
	}()
	return st.Run(ctx, dir, out)
}

// traces is the traces stage: every set's files checked, then coverage.
func (g *gate) traces(ctx context.Context, s *gateStage) {
	for _, set := range g.cfg.Traces {
		want := set.Want
		if want == 0 {
			want = check.Valid
		}
		name := set.Name
		if name == "" {
			name = strings.Join(set.Files, " ")
		}
		var files []string
		for _, pat := range set.Files {
			m, err := filepath.Glob(g.path(pat))
			if err != nil {
				s.fail("trace set %s: pattern %q: %v", name, pat, err)
				continue
			}
			if len(m) == 0 {
				s.fail("trace set %s: %s matches no file (a gate that checks no trace proves nothing)", name, g.shown(g.path(pat)))
			}
			files = append(files, m...)
		}
		slices.Sort(files)
		files = slices.Compact(files)
		events, instances, ok := 0, 0, 0
		for _, f := range files {
			if ctx.Err() != nil {
				s.fail("interrupted: %v", context.Cause(ctx))
				return
			}
			rep, spec, err := g.checkFile(ctx, set.Spec, f)
			if err != nil {
				s.fail("trace set %s: %s: %v\n  %s", name, g.shown(f), err, g.reproduce("check", g.shown(f)))
				continue
			}
			instances += rep.Total()
			events += rep.Events
			if got := rep.Verdict(); got != want {
				s.fail("trace set %s: %s is %s, want %s%s\n  %s", name, g.shown(f), got, want, g.firstProblem(rep, want),
					g.reproduce("check", "--model", spec, g.shown(f)))
				continue
			}
			ok++
			if want == check.Valid {
				g.valid[spec] = append(g.valid[spec], rep)
			}
		}
		s.figure("%s: %d/%d files %s (%d instances, %d events)", name, ok, len(files), strings.ToLower(want.String()), instances, events)
	}
	for _, c := range g.cfg.Coverage {
		g.coverage(ctx, s, c)
	}
}

// checkFile checks one trace file against spec (or the spec its head
// names) and returns the report and the spec's name.
func (g *gate) checkFile(ctx context.Context, spec, path string) (*check.Report, string, error) {
	f, err := g.open(path)
	if err != nil {
		return nil, "", err
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return nil, "", err
	} else if !fi.Mode().IsRegular() {
		return nil, "", fmt.Errorf("not a regular file")
	}
	var r io.Reader = f
	if spec == "" {
		head := make([]byte, 256<<10)
		n, err := io.ReadFull(f, head)
		if err != nil && err != io.ErrUnexpectedEOF && err != io.EOF {
			return nil, "", err
		}
		head = head[:n]
		spec = g.app.infer(head).name
		r = io.MultiReader(bytes.NewReader(head), f)
	}
	rep, err := CheckWith(ctx, g.cfg.Specs, spec, r, g.shown(path), check.Options{})
	if err != nil {
		return nil, spec, fmt.Errorf("checking against %s: %w", spec, err)
	}
	return rep, spec, nil
}

// open opens a trace file: one under the run directory (which the steps
// write) or the root through os.OpenInRoot, so that no symbolic link
// there leads out of it; any other path as it is.
func (g *gate) open(path string) (*os.File, error) {
	for _, base := range []string{g.dir, g.root} {
		if rel, err := filepath.Rel(base, path); err == nil && filepath.IsLocal(rel) {
			return os.OpenInRoot(base, rel)
		}
	}
	return os.Open(path)
}

// firstProblem is the text report of the first instance of rep whose
// verdict is not want, with the command that replays it.
func (g *gate) firstProblem(rep *check.Report, want check.Verdict) string {
	for _, in := range rep.Instances {
		if in.Verdict == want {
			continue
		}
		var b strings.Builder
		_ = in.WriteText(&b)
		return "; its first instance that is not:\n" + clipLines(strings.TrimRight(b.String(), "\n"), 30) +
			"\n  " + g.reproduce("replay", "--model", rep.Model, "--instance", in.Instance, rep.File)
	}
	return ""
}

// coverage holds the valid traces of one spec to its rule.
func (g *gate) coverage(ctx context.Context, s *gateStage, c GateCoverage) {
	_, m, _ := g.app.spec(c.Spec, "", io.Discard)
	reps := g.valid[c.Spec]
	cov, err := m.Coverage(ctx, reps)
	if err != nil {
		s.fail("coverage of %s: %v", c.Spec, err)
		return
	}
	var files []string
	for _, r := range reps {
		files = append(files, r.File)
	}
	how := g.reproduce(append([]string{"coverage", "--model", c.Spec}, files...)...)
	counted, exercised := 0, 0
	var missing []string
	took := map[string]bool{}
	for _, e := range cov.Edges {
		if e.Count > 0 {
			took[e.Action] = true
		}
		if terminalSelfLoop(cov.Edges, e) {
			continue
		}
		counted++
		if e.Count > 0 {
			exercised++
		} else {
			missing = append(missing, fmt.Sprintf("    %s --%s--> %s", e.From, e.Action, e.To))
		}
	}
	g.res.Coverage[c.Spec] = [2]int{exercised, counted}
	need := int(math.Ceil(c.Min * float64(counted)))
	s.figure("%s: %s transitions covered (minimum %d)", c.Spec, ratio(exercised, counted), need)
	if exercised < need {
		s.fail("coverage of %s: %d of %d transitions exercised by %d valid trace files, below the minimum %d (%.0f%%); the %d never exercised:\n%s\n  %s",
			c.Spec, exercised, counted, len(reps), need, 100*c.Min, len(missing), clipLines(strings.Join(missing, "\n"), 40), how)
	}
	if c.Actions {
		var never []string
		for _, a := range m.Actions() {
			if !took[a] {
				never = append(never, a)
			}
		}
		s.figure("%s: %d/%d actions", c.Spec, len(m.Actions())-len(never), len(m.Actions()))
		if len(never) > 0 {
			s.fail("coverage of %s: actions never exercised by the valid traces: %s\n  %s", c.Spec, strings.Join(never, ", "), how)
		}
	}
}

// terminalSelfLoop reports whether e is a self-loop of a state with no
// other way out.
func terminalSelfLoop(edges []check.Transition, e check.Transition) bool {
	if e.From != e.To {
		return false
	}
	for _, o := range edges {
		if o.From == e.From && o.To != e.From {
			return false
		}
	}
	return true
}

// ratio is "n/m (p%)".
func ratio(n, m int) string {
	if m == 0 {
		return fmt.Sprintf("%d/%d", n, m)
	}
	return fmt.Sprintf("%d/%d (%.0f%%)", n, m, 100*float64(n)/float64(m))
}

// mutants is the mutants stage: each code mutant must be killed.
func (g *gate) mutants(ctx context.Context, s *gateStage) {
	killed := 0
	for i, m := range g.cfg.Mutants {
		if ctx.Err() != nil {
			s.fail("interrupted: %v", context.Cause(ctx))
			return
		}
		r := mutate.Run(ctx, m, mutate.Options{Root: g.root, Timeout: g.cfg.MutantTimeout})
		how := g.reproduce("mutate", "--root", g.rootArg, m.Name)
		switch {
		case r.Error != "":
			s.fail("mutant %s could not run: %s\n  %s", m.Name, firstLineOf(r.Error), how)
		case !r.Killed:
			s.fail("mutant %s survived: %s; no test of %s failed with it\n  %s", m.Name, m.Doc, m.File, how)
		default:
			killed++
		}
		fmt.Fprintf(g.progress, "%s:   mutant %d/%d %s: %s (%s)\n", g.name, i+1, len(g.cfg.Mutants), m.Name, mutantOutcome(r), r.Duration.Round(time.Second))
	}
	s.figure("%d/%d code mutants killed", killed, len(g.cfg.Mutants))
}

// mutantOutcome says what became of a code mutant, in a word or two.
func mutantOutcome(r mutate.Result) string {
	switch {
	case r.Error != "":
		return "not run"
	case r.Killed:
		return "killed by " + r.Detector
	}
	return "SURVIVED"
}
