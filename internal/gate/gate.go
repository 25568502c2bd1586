// Package gate is tracecheck verify: the whole gate on the bundled specs
// and implementations, in stages, each with a verdict, figures and time.
//
// The stages: explore both transcriptions and their spec mutants;
// conformance of the transcriptions with the retained TLC and FizzBee
// reports (and with fresh ones when TLA2TOOLS and FIZZ are set, in full
// mode); the replay corpus; the checkpoint publisher on real Python; the
// session coordinators under a realistic workload; validation and
// transition coverage of every trace the stages wrote; and, when asked,
// the named code mutants. Run writes the run directory: the traces,
// summary.json and report.html (package htmlreport).
package gate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tracecheck/tracecheck/htmlreport"
)

// Mode is how much the gate does.
type Mode uint8

// The modes.
const (
	// Quick is for pre-commit: every stage, with small workloads.
	Quick Mode = iota + 1
	// Default is what make verify runs (under three minutes).
	Default
	// Full is for nightly runs: larger workloads, and TLC and FizzBee run
	// live when TLA2TOOLS and FIZZ are set.
	Full
)

var modeNames = [...]string{Quick: "quick", Default: "default", Full: "full"}

// String returns "quick", "default" or "full".
func (m Mode) String() string {
	if int(m) < len(modeNames) && m > 0 {
		return modeNames[m]
	}
	return fmt.Sprintf("Mode(%d)", m)
}

// pick returns the value for the mode.
func (m Mode) pick(quick, def, full int) int {
	switch m {
	case Quick:
		return quick
	case Full:
		return full
	}
	return def
}

// Verdict is a stage's outcome.
type Verdict string

// The verdicts.
const (
	Pass Verdict = "PASS"
	Fail Verdict = "FAIL"
	Skip Verdict = "SKIP"
)

// Options configure [Run].
type Options struct {
	// Root is the repository root (spec/, traces/, formal-verification/,
	// examples/). Default ".".
	Root string
	// Dir is the run directory; it must not exist yet, or be empty.
	Dir string
	// Mode defaults to Default.
	Mode Mode
	// Mutants runs the named code mutants (needs the go command and the
	// source tree).
	Mutants bool
	// Python runs the publisher's programs. Default "python3".
	Python string
	// Exe is the tracecheck binary, for stages that run it as a process
	// (the crash campaign). Default: os.Executable().
	Exe string
	// Seed seeds the randomised stages (0: from the clock); the summary
	// records it so a run can be replayed.
	Seed int64
	// Progress receives a line as each stage starts and ends.
	Progress io.Writer
	// Getenv reads TLA2TOOLS, FIZZ and the like. Default os.Getenv.
	Getenv func(string) string
	// Command is the command line, for the report.
	Command string
}

// Stage is one stage's result.
type Stage struct {
	Name    string        `json:"name"`
	Verdict Verdict       `json:"verdict"`
	Figures string        `json:"figures"`
	Elapsed time.Duration `json:"elapsed_ns"`
	// Failures say what failed, one per entry.
	Failures []string `json:"failures,omitempty"`
	// Detail is longer output, for the report.
	Detail string `json:"-"`
}

// Result is the whole run.
type Result struct {
	Verdict Verdict       `json:"verdict"`
	Mode    string        `json:"mode"`
	Seed    int64         `json:"seed"`
	Started time.Time     `json:"started"`
	Elapsed time.Duration `json:"elapsed_ns"`
	Stages  []Stage       `json:"stages"`
	// Coverage is each spec's transitions exercised, and how many there are.
	Coverage map[string][2]int `json:"coverage"`
	// Report is the HTML report's path; Summary the JSON summary's.
	Report  string `json:"report"`
	Summary string `json:"summary"`
}

// run is the state the stages share.
type run struct {
	opt     Options
	seed    int64
	mu      sync.Mutex
	traces  map[string][]traceFile // spec name -> trace files to check and cover
	charts  []htmlreport.Chart
	divs    []htmlreport.Divergence
	kills   []htmlreport.Kill
	links   []htmlreport.Link
	covered map[string][2]int
}

// traceFile is a trace a stage wrote, for the coverage stage to check.
type traceFile struct {
	path string
	// incompleteOK allows incomplete instances (a run killed on purpose
	// and not recovered); a violation always fails the gate.
	incompleteOK bool
}

// addTrace records a trace file of spec for the coverage stage: every
// instance in it must be valid (or, with incompleteOK, incomplete).
func (r *run) addTrace(spec, path string, incompleteOK bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.traces[spec] = append(r.traces[spec], traceFile{path, incompleteOK})
}

// path returns a path under the run directory, creating its parent.
func (r *run) path(elem ...string) (string, error) {
	p := filepath.Join(append([]string{r.opt.Dir}, elem...)...)
	return p, os.MkdirAll(filepath.Dir(p), 0o755)
}

// stage is what a stage function fills in.
type stage struct {
	Stage
}

// fail records a failure.
func (s *stage) fail(format string, args ...any) {
	s.Failures = append(s.Failures, fmt.Sprintf(format, args...))
}

// figure appends to the stage's figures.
func (s *stage) figure(format string, args ...any) {
	if s.Figures != "" {
		s.Figures += "; "
	}
	s.Figures += fmt.Sprintf(format, args...)
}

// stageFunc runs one stage; a returned error fails it (the gate goes on
// with the next stage).
type stageFunc struct {
	name string
	run  func(ctx context.Context, r *run, s *stage) error
	// skip says why the stage does not run in this configuration ("" if it
	// does).
	skip func(r *run) string
}

// stageList is the stages Run runs (tests replace it).
var stageList = stages

// stages lists the gate's stages, in order.
func stages() []stageFunc {
	return []stageFunc{
		{name: "explore", run: exploreStage},
		{name: "conformance", run: conformanceStage},
		{name: "corpus", run: corpusStage},
		{name: "publisher", run: publisherStage},
		{name: "sessions", run: sessionsStage},
		{name: "traces and coverage", run: coverageStage},
		{name: "code mutants", run: mutantsStage, skip: func(r *run) string {
			if !r.opt.Mutants {
				return "not asked for (--mutants)"
			}
			return ""
		}},
	}
}

// ErrRunDir reports a run directory that cannot be used.
var ErrRunDir = errors.New("run directory")

// Run runs the gate and writes its run directory. The error is for a run
// that could not happen (a bad run directory); a failing gate is a Result
// whose Verdict is Fail.
func Run(ctx context.Context, opt Options) (*Result, error) {
	if opt.Root == "" {
		opt.Root = "."
	}
	if opt.Mode == 0 {
		opt.Mode = Default
	}
	if opt.Python == "" {
		opt.Python = "python3"
	}
	if opt.Getenv == nil {
		opt.Getenv = os.Getenv
	}
	if opt.Progress == nil {
		opt.Progress = io.Discard
	}
	if opt.Exe == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("gate: the tracecheck binary: %w", err)
		}
		opt.Exe = exe
	}
	if opt.Dir == "" {
		return nil, fmt.Errorf("%w: none given", ErrRunDir)
	}
	// Stages compare paths the publisher reports with their own: both
	// absolute.
	for _, p := range []*string{&opt.Dir, &opt.Root} {
		abs, err := filepath.Abs(*p)
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrRunDir, err)
		}
		*p = abs
	}
	if ents, err := os.ReadDir(opt.Dir); err == nil && len(ents) > 0 {
		return nil, fmt.Errorf("%w: %s is not empty", ErrRunDir, opt.Dir)
	}
	if err := os.MkdirAll(opt.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrRunDir, err)
	}
	r := &run{opt: opt, seed: opt.Seed, traces: map[string][]traceFile{}, covered: map[string][2]int{}}
	if r.seed == 0 {
		r.seed = time.Now().UnixNano()
	}
	res := &Result{Verdict: Pass, Mode: opt.Mode.String(), Seed: r.seed, Started: time.Now()}
	for _, sf := range stageList() {
		s := &stage{Stage: Stage{Name: sf.name}}
		if sf.skip != nil {
			if why := sf.skip(r); why != "" {
				s.Verdict, s.Figures = Skip, why
				res.Stages = append(res.Stages, s.Stage)
				fmt.Fprintf(opt.Progress, "gate: %-20s SKIP  %s\n", sf.name, why)
				continue
			}
		}
		fmt.Fprintf(opt.Progress, "gate: %-20s ...\n", sf.name)
		start := time.Now()
		err := sf.run(ctx, r, s)
		s.Elapsed = time.Since(start)
		if err != nil {
			s.fail("%v", err)
		}
		switch {
		case len(s.Failures) > 0:
			s.Verdict = Fail
			res.Verdict = Fail
		case s.Verdict == "":
			s.Verdict = Pass
		}
		fmt.Fprintf(opt.Progress, "gate: %-20s %-5s %s (%s)\n", sf.name, s.Verdict, s.Figures, s.Elapsed.Round(time.Millisecond))
		for _, f := range s.Failures {
			fmt.Fprintf(opt.Progress, "gate:   %s\n", firstLine(f))
		}
		res.Stages = append(res.Stages, s.Stage)
		if ctx.Err() != nil {
			res.Verdict = Fail
			break
		}
	}
	res.Elapsed = time.Since(res.Started)
	res.Coverage = r.covered
	if err := r.write(res); err != nil {
		return res, err
	}
	return res, nil
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " ..."
	}
	return s
}

// write writes summary.json and report.html.
func (r *run) write(res *Result) error {
	res.Summary = filepath.Join(r.opt.Dir, "summary.json")
	res.Report = filepath.Join(r.opt.Dir, "report.html")
	b, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(res.Summary, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("gate: %w", err)
	}
	rep := &htmlreport.Run{
		Title: "tracecheck verify", Command: r.opt.Command, Started: res.Started, Elapsed: res.Elapsed,
		Verdict: string(res.Verdict), Charts: r.charts, Divergences: r.divs, Kills: r.kills, Links: r.links,
	}
	for _, s := range res.Stages {
		detail := s.Detail
		if len(s.Failures) > 0 {
			detail = strings.Join(s.Failures, "\n") + "\n\n" + detail
		}
		rep.Stages = append(rep.Stages, htmlreport.Stage{Name: s.Name, Verdict: string(s.Verdict), Figures: s.Figures,
			Elapsed: s.Elapsed, Detail: strings.TrimSpace(detail)})
	}
	sort.SliceStable(rep.Charts, func(i, j int) bool { return rep.Charts[i].Spec < rep.Charts[j].Spec })
	f, err := os.Create(res.Report)
	if err != nil {
		return fmt.Errorf("gate: %w", err)
	}
	if err := htmlreport.Write(f, rep); err != nil {
		f.Close()
		return fmt.Errorf("gate: %w", err)
	}
	return f.Close()
}

// WriteTable writes the summary table: one row per stage, then the
// verdict and the report's path.
func WriteTable(w io.Writer, res *Result) {
	fmt.Fprintf(w, "\n%-20s %-7s %9s  %s\n", "stage", "verdict", "time", "figures")
	for _, s := range res.Stages {
		fmt.Fprintf(w, "%-20s %-7s %9s  %s\n", s.Name, s.Verdict, s.Elapsed.Round(time.Millisecond), s.Figures)
	}
	fmt.Fprintf(w, "\nverify: %s in %s (mode %s, seed %d)\nreport: %s\n", res.Verdict, res.Elapsed.Round(100*time.Millisecond), res.Mode, res.Seed, res.Report)
}
