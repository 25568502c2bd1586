package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/conform"
	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/trace"
)

const checkSynopsis = `[--model SPEC] [--mutant NAME] [--graph DUMP] [--json] [--junit FILE] [-q] [--last K] [--live] [--projections] [--bound NAME=DURATION]... [--max-line N] [--max-itf N] FILE|DIR...|-

Validates each trace (NDJSON, docs/trace-format.md, or an ITF document,
docs/itf.md; "-" reads standard input; a directory stands for the *.ndjson
and *.itf.json files under it) against a registered spec, the way
TLC trace validation does: per instance it keeps every spec state
consistent with the events so far, and checks each event's action, state,
invariants and action properties.

Each instance gets a verdict: valid (ends where the spec may stop),
violation (at its first offending event, with a divergence report: file:line,
the candidate states and enabled actions before it, why the action did not
fit, a -want +got diff and the last K matched events; a value that no
reachable state gives its variable, a misspelled "Stageing" say, is
reported as outside the variable's domain, with the values it takes), or
incomplete (ends
where the spec does not stop, inside a composite step, or on a truncated
line; never reported as valid).

--graph checks against a state graph the real TLC or FizzBee computed
instead, with no Go transcription: a TLC DOT dump (tlc -dump
dot,actionlabels FILE) or a FizzBee dump directory (nodes_*.pb,
adjacency_lists_*.pb). Its states and labelled edges are exactly the
tool's; an action with arguments (Request("a")) is matched by its name.
Reports then give candidates, enabled actions and a state diff, but no
guard in the spec's words.

Specs: SPECS. Without --model the spec is the one the trace's header
names, else it is inferred from the trace: the first event whose action
(or else whose variables) only one spec has decides (else the first spec).
--mutant NAME checks against the spec's mutant NAME instead (MUTANTS); the
reports name its model SPEC-mutant-NAME. --model SPEC-mutant-NAME is a
deprecated spelling of --model SPEC --mutant NAME.

Output is streamed, so that memory and output do not grow with the
instances already judged: an instance's line is printed as soon as its
verdict is known. A violation is printed at once (its event count and
lines as of the violating event); an instance that finished valid (every
candidate a state where the spec may stop and can only stutter) is printed
and dropped once 10,000 more events have passed (an event of it after that
is checked as a new instance's, so anything but Init is a violation); every
other instance is printed at the end of its file, in order of first
appearance. A file of one instance that did not violate the spec (a
publisher's journal) then gets a line saying how it ends, with what the
spec's registration says of the instance (the bundled program: the
checkpoint its journal's Init receipt names), so that VALID on a failed
run reads as "this run failed, as the spec allows":
  RUN (checkpoint NAME): ends in phase = "Failed" /\ verified = FALSE /\ published = FALSE
The verdict is about the trace, not about the run. Each file's summary
line comes last:
  FILE: VERDICT (model M, N events, K instances: V valid, I incomplete, X violation)
-q lists no valid instance and only the first 10 violating or incomplete
ones of each file, then how many more there were. An input error stops the
check of its file: what was printed stays, no summary line is printed, and
the error is one line on standard error.

--json writes one JSON object, streamed the same way (the instances of a
report in the order their verdicts were known, its verdict and counts
after them):
  {"reports": [{"file", "model",
     "instances": [{"instance", "verdict", "events", "first_line", "last_line",
       "reason"?, "final"?: [state],
       "divergence"?: {"file", "line", "instance", "seq", "action", "args"?: [text], "event",
         "kind": "guard"|"state"|"invariant"|"property"|"init"|"stutter"|"composite"|"args"|"domain"|"timing",
         "reason", "candidates": [{"state", "enabled": [action], "why": [text]}],
         "diff"?, "fits"?: [action], "recent"?: [{"line", "event"}]}}],
     "verdict": "valid"|"violation"|"incomplete"|"input error", "events",
     "valid", "incomplete", "violation", "not_listed"?,
     "ends"?: {"instance", "about"?, "final": [state]},
     "truncated"?: {"file", "line", "instance"?},
     "exercised"?: [{"from", "action", "to", "count"}],
     "ambiguous_steps"?, "error"?: "file:line: what"}],
   "errors"?: ["file:line: what"],
   "verdict": "valid"|"violation"|"incomplete"|"input error"}
With -q, "instances" holds only the first 10 violating or incomplete
instances and "not_listed" counts the others. A report cut short by an
input error has "error" and the verdict "input error"; a file that could
not be opened has no report, only its line in "errors".

One trace, every spec: --projections also checks each trace against
the specs its spec projects onto (a composition spec's trace projected
onto each of its machines' specs: the bundled session onto connection,
turn, response, compaction and tts; docs/trace-format.md), after the
trace's own report: per projected spec its instances (violations in
full, their events naming the trace's line they come from in
"detail":{"source":...}) and a summary line
  FILE (projected onto SPEC): VERDICT (model SPEC, N events, K instances: ...)
A projected violation makes the exit code 1 as any violation.

Timing: a spec may register timing properties (the bundled session's:
teardown within its join timeout, no audio after a response's end,
barge-in latency); they are checked on every trace of the spec whose
events carry a "time", reported as violations of kind "timing" with the
figures, and their figures (max and p99 teardown, barge-in latency) follow
the report:
  FILE (timing): VERDICT (N instances timed, V violation)
--bound NAME=DURATION sets their bounds (BOUNDS). A trace without times
reports nothing more (with --projections, a line saying so).
With --junit, each projected spec, and the timing when it timed an
instance, gets a <testsuite> of its own ("FILE (projected onto SPEC)",
"FILE (timing)").
With --json, a report has "projections" (with --projections: per spec
its verdict, counts, non-valid instances and exercised transitions) and
"monitors" (when an instance was timed: verdict, violations, figures).

--junit FILE also writes the verdicts as JUnit XML, for CI systems: one
<testsuite> per trace file, one <testcase> per instance (every instance,
even with -q), a violating or incomplete instance a <failure> whose text
is its report (the divergence report, the replay command), an input error
an <error>.

With --live (for a pipe) each violation is preceded by a line
"FILE: VIOLATION (live)" and output is flushed after every line; valid
instances are not listed, only counted.

Inputs: a FILE must be a regular file (a named pipe or device is refused
at once, never waited on: read a pipe as standard input with -); a line
longer than --max-line (default 1 MiB) and an ITF document larger than
--max-itf (default 256 MiB) are input errors, read no further than the
bound.

Exit codes: 0 every instance valid; 1 a violation; 4 incomplete (and no
violation); 3 input error (unreadable file, malformed line, unknown action
or variable, value of the wrong type, sequence number not increasing,
empty file, line too long, ITF document too large: one line on stderr
naming file:line); 2 usage. With several files the most severe wins: 3,
then 1, then 4.`

// quietMax is how many violating or incomplete instances -q lists per file.
const quietMax = 10

// traceFlags are the flags check, replay and coverage share.
type traceFlags struct {
	model   *string
	mutant  *string
	graph   *string
	maxLine *int
	maxITF  *int64
}

func (a *app) addTraceFlags(fs *flag.FlagSet) traceFlags {
	return traceFlags{
		model:   fs.String("model", "", UsageModel+strings.ReplaceAll(a.specNames(), "|", ", ")+" (default: from the trace's header, else inferred)"),
		mutant:  fs.String("mutant", "", UsageMutant+a.mutantNames()),
		graph:   fs.String("graph", "", "check against the state graph TLC or FizzBee computed, with no transcription: a TLC DOT dump (-dump dot,actionlabels) or a FizzBee dump `directory`"),
		maxLine: fs.Int("max-line", trace.DefaultMaxLine, UsageMaxLine),
		maxITF:  fs.Int64("max-itf", trace.DefaultMaxITF, UsageMaxITF),
	}
}

// traceArgs parses the arguments of a command that reads traces (check,
// replay, coverage): its flags, the trace flags, and files, of which
// count must accept how many there are (else want is printed). It
// returns the files, or an exit code >= 0 when the command must stop.
func (a *app) traceArgs(fs *flag.FlagSet, tf traceFlags, args []string, stderr io.Writer, want string, count func(int) bool) ([]string, int) {
	files, code := Parse(fs, args)
	if code >= 0 {
		return nil, code
	}
	if !a.validate(tf, fs.Name(), stderr) {
		return nil, ExitUsage
	}
	if *tf.graph != "" {
		g, err := conform.LoadGraph(*tf.graph)
		if err == nil {
			var sp *model.Spec[int]
			if sp, err = conform.Spec(g, "graph:"+filepath.Base(*tf.graph)); err == nil {
				m := Of(sp)
				a.graph = &namedModel{name: sp.Name, spec: &Spec{Name: sp.Name, Model: m}, model: m}
			}
		}
		if err != nil {
			fmt.Fprintf(stderr, "tracecheck %s: --graph: %v\n", fs.Name(), err)
			return nil, ExitInput
		}
	}
	if !count(len(files)) {
		fmt.Fprintf(stderr, "tracecheck %s: %s\n", fs.Name(), want)
		fs.Usage()
		return nil, ExitUsage
	}
	return files, -1
}

func (a *app) validate(f traceFlags, cmd string, stderr io.Writer) bool {
	if *f.model != "" && *f.graph != "" {
		fmt.Fprintf(stderr, "tracecheck %s: --model and --graph do not go together\n", cmd)
		return false
	}
	if *f.mutant != "" && *f.graph != "" {
		fmt.Fprintf(stderr, "tracecheck %s: --mutant and --graph do not go together\n", cmd)
		return false
	}
	if *f.mutant != "" {
		name := *f.model
		if name == "" {
			if name = a.mutantSpec(*f.mutant); name == "" {
				fmt.Fprintf(stderr, "tracecheck %s: unknown mutant %q (have %s)\n", cmd, *f.mutant, a.mutantNames())
				return false
			}
		}
		if _, _, ok := a.spec(name, *f.mutant, stderr); !ok {
			return false
		}
		*f.model = name + mutantSep + *f.mutant
	} else if *f.graph != "" {
		// The graph is the model.
	} else if *f.model != "" {
		m, ok := a.model(*f.model)
		if !ok {
			fmt.Fprintf(stderr, "tracecheck %s: unknown model %q (want %s)\n", cmd, *f.model, a.modelList())
			return false
		}
		if m.mutant != "" {
			fmt.Fprintf(stderr, "tracecheck %s: --model %s is deprecated: use --model %s --mutant %s\n", cmd, *f.model, m.spec.Name, m.mutant)
		}
	} else if len(a.models) == 0 {
		fmt.Fprintf(stderr, "tracecheck %s: no spec is registered\n", cmd)
		return false
	}
	if *f.maxLine < 0 {
		fmt.Fprintf(stderr, "tracecheck %s: --max-line must not be negative\n", cmd)
		return false
	}
	if *f.maxITF <= 0 {
		fmt.Fprintf(stderr, "tracecheck %s: --max-itf must be positive\n", cmd)
		return false
	}
	return true
}

// errNotRegular: a trace named as a file is not a regular file.
var errNotRegular = errors.New("not a regular file")

// openFile opens a trace file for reading without ever blocking: it opens
// with O_NONBLOCK (opening a named pipe that has no writer would wait for
// one) and refuses anything but a regular file.
func openFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if m := st.Mode(); !m.IsRegular() {
		f.Close()
		what := "a directory"
		switch {
		case m&fs.ModeNamedPipe != 0:
			what = "a named pipe"
		case m&fs.ModeSocket != 0:
			what = "a socket"
		case m&fs.ModeDevice != 0:
			what = "a device"
		case !m.IsDir():
			what = "not a file"
		}
		return nil, fmt.Errorf("%s: %w (%s): read a pipe from standard input with -", path, errNotRegular, what)
	}
	return f, nil
}

// openTrace opens file ("-": stdin) and picks its model: the flag's, else
// the spec the trace's header names, else one inferred from the trace's
// first events. An ITF document (docs/itf.md) is converted to NDJSON, one
// line a state, with the file's base name as its instance unless it names
// its own; an NDJSON file is checked from the file itself, which the
// checker can then read again (for a divergence report's last events)
// instead of keeping copies of lines. On standard input only the first
// line is awaited before checking starts, so that a live monitor on a pipe
// reports as events arrive. maxLine bounds the line read for inference.
func (a *app) openTrace(file, modelName string, maxLine int, maxITF int64) (io.Reader, string, namedModel, func(), error) {
	name := file
	closer := func() {}
	var r io.Reader
	var head []byte
	var err error
	if maxLine <= 0 {
		maxLine = trace.DefaultMaxLine
	}
	if file == "-" {
		name = "stdin"
		r, head, err = openStream(a.stdin, name, "stdin", maxLine, maxITF)
	} else {
		f, ferr := openFile(file)
		if ferr != nil {
			return nil, name, namedModel{}, closer, ferr
		}
		closer = func() { f.Close() }
		r, head, err = openRegular(f, baseInstance(file), maxLine, maxITF)
	}
	if err != nil {
		closer()
		return nil, name, namedModel{}, func() {}, fmt.Errorf("%s: %w", name, err)
	}
	if modelName == "" && head == nil { // ITF: infer from its first states
		if src, ok := r.(trace.ITFSource); ok { // peeked in place: check names the ITF's lines
			head, _ = src.Peek(64 << 10) // short input is fine
		} else {
			br := bufio.NewReaderSize(r, 64<<10)
			head, _ = br.Peek(64 << 10)
			r = br
		}
	}
	m, err := a.pick(name, modelName, head)
	if err != nil {
		closer()
		return nil, name, namedModel{}, func() {}, err
	}
	// On a pipe only the first line has been read: its times are not
	// known yet.
	m.timed = file == "-" || bytes.Contains(head, []byte(`"time"`))
	return r, name, m, closer, nil
}

// How a trace's model was chosen.
const (
	byFlag     = "--model"
	byHeader   = "header"
	byInferred = "inferred"
)

// pick chooses the model of the trace name whose first lines are head:
// modelName if given, else the spec its header names, else inference from
// its events. It says in m.warnings when the header disagrees with the
// choice or names another version of the spec.
func (a *app) pick(name, modelName string, head []byte) (namedModel, error) {
	h, hasHeader := headerIn(head)
	var m namedModel
	switch {
	case a.graph != nil:
		m = *a.graph
		m.how = byFlag
	case modelName != "":
		m, _ = a.model(modelName)
		m.how = byFlag
		if hasHeader && h.Spec != m.spec.Name {
			m.warnings = append(m.warnings, fmt.Sprintf("%s: the trace's header names spec %q; checking against %s as --model says", name, h.Spec, modelName))
		}
	case hasHeader:
		var ok bool
		if m, ok = a.model(h.Spec); !ok {
			return m, fmt.Errorf("%s: the trace's header names spec %q, which is not registered (have %s); name the model with --model", name, h.Spec, a.modelList())
		}
		m.how = byHeader
	default:
		m = a.infer(head)
		m.how = byInferred
	}
	if hasHeader && h.SpecSHA256 != "" && m.spec != nil && m.spec.SHA256 != "" && h.SpecSHA256 != m.spec.SHA256 && h.Spec == m.spec.Name {
		m.warnings = append(m.warnings, fmt.Sprintf("%s: the trace was written against another version of spec %s (its header's spec_sha256 %s, the registered spec's %s)",
			name, h.Spec, short(h.SpecSHA256), short(m.spec.SHA256)))
	}
	return m, nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// headerIn returns the first trace header among the lines of head.
func headerIn(head []byte) (trace.Header, bool) {
	for _, line := range bytes.Split(head, []byte("\n")) {
		if h, ok, err := trace.ParseHeader(bytes.TrimRight(line, "\r")); ok && err == nil {
			return h, true
		}
	}
	return trace.Header{}, false
}

// inputHint says, for an input error in a trace whose model was inferred,
// that the model was guessed.
func (m namedModel) inputHint(err error) error {
	if m.how == byInferred && errors.Is(err, check.ErrInput) {
		return fmt.Errorf("%w (the model %s was inferred from the trace's events; if it is not the trace's spec, name the right one with --model)", err, m.name)
	}
	return err
}

// openRegular returns the trace in the regular file f: the file itself,
// rewound, if it is NDJSON (head is its first 64 KiB, or its whole first
// line if that is longer, up to maxLine: for model inference), or the
// NDJSON form of an ITF document.
func openRegular(f *os.File, instance string, maxLine int, maxITF int64) (r io.Reader, head []byte, err error) {
	br := bufio.NewReaderSize(f, 64<<10)
	if trace.IsITF(br) {
		out, _, err := trace.AsNDJSONSize(br, instance, maxITF)
		if err != nil {
			return nil, nil, fmt.Errorf("ITF: %w", err)
		}
		return out, nil, nil
	}
	head, _ = br.Peek(64 << 10) // short input is fine
	head = bytes.Clone(head)
	if len(head) == 64<<10 && bytes.IndexByte(head, '\n') < 0 {
		head, _ = firstLine(br, maxLine) // a first event longer than the peek
	}
	if _, err := f.Seek(0, io.SeekStart); err != nil {
		return nil, nil, err
	}
	return f, head, nil
}

// firstLine reads br's first line, whole up to max bytes.
func firstLine(br *bufio.Reader, max int) ([]byte, error) {
	var line []byte
	for len(line) <= max {
		b, err := br.ReadSlice('\n')
		line = append(line, b...)
		if err != bufio.ErrBufferFull {
			return line, err
		}
	}
	return line, nil
}

// openStream prepares a pipe for checking while it is written: it waits
// for the first line only (and the next, if the first is a header). If the
// first line is no trace event nor header, the input may be an ITF
// document, which is converted as it is read. head is what was read, for
// model inference (nil for ITF).
func openStream(in io.Reader, name, instance string, maxLine int, maxITF int64) (r io.Reader, head []byte, err error) {
	br := bufio.NewReaderSize(in, 64<<10)
	first, _ := firstLine(br, maxLine)
	head = bytes.Clone(first)
	line := bytes.TrimRight(head, "\r\n")
	if _, isHeader, _ := trace.ParseHeader(line); isHeader {
		return io.MultiReader(bytes.NewReader(head), br), head, nil
	}
	r = io.MultiReader(bytes.NewReader(head), br)
	if _, perr := trace.ParseEvent(line, trace.Pos{File: name, Line: 1}); perr == nil {
		return r, head, nil
	}
	out, itf, err := trace.AsNDJSONSize(r, instance, maxITF)
	if err != nil {
		return nil, nil, fmt.Errorf("ITF: %w", err)
	}
	if itf {
		head = nil
	}
	return out, head, nil
}

func (a *app) runCheck(args []string, stdout, stderr io.Writer) int {
	fs := NewFlagSet("check", strings.NewReplacer("SPECS", strings.ReplaceAll(a.specNames(), "|", ", "), "MUTANTS", a.mutantNames(), "BOUNDS", a.boundNames()).Replace(checkSynopsis), stderr)
	tf := a.addTraceFlags(fs)
	asJSON := fs.Bool("json", false, UsageJSON)
	last := fs.Int("last", check.DefaultLast, "show the last `K` matched events in a divergence report")
	live := fs.Bool("live", false, "mark each violation as it is seen and flush every line; list no valid instance (text output only)")
	junit := fs.String("junit", "", "also write the verdicts as JUnit XML to `FILE`: one test suite per trace file, one test case per instance, a violation or incomplete instance a failure with its report")
	quiet := fs.Bool("q", false, fmt.Sprintf("list no valid instance and only the first %d violating or incomplete ones of each file", quietMax))
	projections := fs.Bool("projections", false, "also check each trace against the specs its spec projects onto (session: connection, turn, response, compaction, tts), with a report per spec")
	bounds := boundFlag{}
	fs.Var(bounds, "bound", "a bound of a timing property, `NAME=DURATION` (repeatable): "+a.boundNames())
	files, code := a.traceArgs(fs, tf, args, stderr, "no trace given (name files, or - for standard input)", func(n int) bool { return n > 0 })
	if code >= 0 {
		return code
	}
	if *last < 0 {
		fmt.Fprintln(stderr, "tracecheck check: --last must not be negative")
		return ExitUsage
	}
	if *live && *asJSON {
		fmt.Fprintln(stderr, "tracecheck check: --live and --json do not go together")
		return ExitUsage
	}
	files, err := expandDirs(files)
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck check: %v\n", err)
		return ExitInput
	}
	c := checkRun{app: a, opt: check.Options{Last: *last, MaxLine: *tf.maxLine, Forget: true},
		stdout: stdout, stderr: stderr, quiet: *quiet, live: *live, projections: *projections, bounds: bounds}
	if *last == 0 {
		c.opt.Last = -1
	}
	if *asJSON {
		c.js = newJSONStream(stdout)
	}
	c.junit = *junit != ""
	for _, file := range files {
		c.file(file, *tf.model, *tf.maxITF)
	}
	if c.junit {
		if err := writeJUnit(*junit, c.junitFiles, c.errs); err != nil {
			fmt.Fprintf(stderr, "tracecheck check: %v\n", err)
			return ExitInput
		}
	}
	if c.js != nil {
		if err := c.js.finish(c.worst, c.errs); err != nil {
			fmt.Fprintf(stderr, "tracecheck check: write output: %v\n", err)
			return ExitInput
		}
	}
	return c.worst
}

// checkRun is one run of tracecheck check over its files.
type checkRun struct {
	app         *app
	opt         check.Options
	stdout      io.Writer
	stderr      io.Writer
	quiet, live bool
	js          *jsonStream // --json
	junit       bool        // --junit: collect junitFiles
	junitFiles  []*junitFile
	worst       int
	errs        []string
	projections bool                     // --projections
	bounds      map[string]time.Duration // --bound
}

func (c *checkRun) fail(err error) {
	fmt.Fprintf(c.stderr, "tracecheck check: %v\n", err)
	c.errs = append(c.errs, err.Error())
	c.worst = ExitInput
}

// file checks one file, streaming its results.
func (c *checkRun) file(file, model string, maxITF int64) {
	r, name, m, closeFile, err := c.app.openTrace(file, model, c.opt.MaxLine, maxITF)
	if err != nil {
		c.fail(err)
		return
	}
	defer closeFile()
	for _, w := range m.warnings {
		fmt.Fprintf(c.stderr, "tracecheck check: warning: %s\n", w)
	}
	o := c.opt
	var end func(*check.Report, error) error
	var rs *jsonReport
	var ts *check.TextStream
	if c.js != nil {
		rs = c.js.begin(name, m.name, c.quiet)
		o.OnResult = rs.result
		end = rs.end
	} else {
		ts = check.NewTextStream(c.stdout, name, m.name)
		ts.Valid = !c.quiet && !c.live
		ts.Live = c.live
		if c.quiet {
			ts.Max = quietMax
		}
		o.OnResult = ts.Result
		end = func(rep *check.Report, err error) error {
			if err != nil {
				return ts.Flush() // what was printed stays; no summary
			}
			return ts.End(rep)
		}
	}
	var one oneInstance
	onResult := o.OnResult
	var jf *junitFile
	if c.junit {
		jf = newJUnitFile(name, m.name)
		c.junitFiles = append(c.junitFiles, jf)
	}
	o.OnResult = func(res check.InstanceResult) {
		one.add(res)
		if jf != nil {
			jf.result(res)
		}
		onResult(res)
	}
	wait := c.project(&r, name, m)
	rep, err := m.check(context.Background(), r, name, o)
	if rep == nil { // only if the spec were unusable
		rep = &check.Report{File: name, Model: m.name}
	}
	proj, perr := wait()
	if rs != nil {
		rs.projected, rs.allProjections = proj, c.projections
	}
	if e := one.ending(err, file, m); e != nil {
		if rs != nil {
			rs.ends = e
		} else if ts.Flush() == nil {
			fmt.Fprintf(c.stdout, "  %s: ends in %s\n", e.label(), strings.Join(e.Final, " or "))
		}
	}
	werr := end(rep, err)
	if proj != nil && rs == nil && err == nil {
		if werr == nil {
			werr = proj.WriteText(c.stdout, name, c.projections)
		}
		if perr != nil {
			fmt.Fprintf(c.stderr, "tracecheck check: %s: projections: %v\n", name, perr)
		}
	}
	if proj != nil && err == nil {
		if v := verdictCode(proj.Worst()); severity(v) > severity(c.worst) {
			c.worst = v
		}
		if c.junit { // a test suite per projected spec, and one per monitor that timed
			for _, p := range proj.Reports {
				pf := newJUnitFile(name+" (projected onto "+p.Projection.Spec+")", p.Projection.Spec)
				pf.noReplay = true
				if p.Report != nil {
					for _, in := range p.Report.Instances {
						pf.result(in)
					}
				}
				if p.Err != nil {
					pf.inputError(p.Err)
				}
				c.junitFiles = append(c.junitFiles, pf)
			}
			for _, mo := range proj.Monitors {
				if mo.Timed == 0 {
					continue
				}
				mf := newJUnitFile(name+" ("+mo.Monitor.Name+")", m.name)
				mf.noReplay = true
				for _, v := range mo.Violations {
					mf.result(v)
				}
				c.junitFiles = append(c.junitFiles, mf)
			}
		}
	}
	if err != nil {
		if jf != nil {
			jf.inputError(m.inputHint(err))
		}
		c.fail(m.inputHint(err))
	} else if v := verdictCode(rep.Verdict()); severity(v) > severity(c.worst) {
		c.worst = v
	}
	if werr != nil {
		c.fail(fmt.Errorf("write output: %w", werr))
	}
}

// oneInstance keeps the first instance result of a file, to say how a
// file of one instance (a publisher's journal) ends: a verdict about the
// trace is not one about the run, and "VALID" on a failed run must read
// as "this run failed, as the spec allows".
type oneInstance struct {
	n     int
	first check.InstanceResult
}

func (o *oneInstance) add(res check.InstanceResult) {
	if o.n == 0 {
		o.first = res
	}
	o.n++
}

// fileEnding is how a file of one instance ends: check's line "ID
// (ABOUT): ends in STATE" and --json's "ends".
type fileEnding struct {
	Instance string `json:"instance"`
	// About is what the spec's Describe says of the instance, e.g.
	// "checkpoint m".
	About string   `json:"about,omitempty"`
	Final []string `json:"final"`
}

func (e *fileEnding) label() string {
	if e.About == "" {
		return e.Instance
	}
	return e.Instance + " (" + e.About + ")"
}

// ending returns how the file (checked without the input error err)
// ends, if it holds one instance that did not violate the spec; nil
// otherwise.
func (o *oneInstance) ending(err error, file string, m namedModel) *fileEnding {
	if err != nil || o.n != 1 || len(o.first.Final) == 0 {
		return nil
	}
	e := &fileEnding{Instance: o.first.Instance, Final: o.first.Final}
	if m.spec != nil && m.spec.Describe != nil && file != "-" {
		if init, ok := initEvent(file, e.Instance); ok {
			e.About = m.spec.Describe(init)
		}
	}
	return e
}

// initEvent returns the Init event of instance among the first 64 KiB of
// the NDJSON trace file (opened without blocking, as check opens it).
func initEvent(file, instance string) (trace.Event, bool) {
	f, err := openFile(file)
	if err != nil {
		return trace.Event{}, false
	}
	defer f.Close()
	head, _ := io.ReadAll(io.LimitReader(f, 64<<10))
	for i, line := range bytes.Split(head, []byte("\n")) {
		line = bytes.TrimRight(line, "\r")
		if _, isHeader, _ := trace.ParseHeader(line); isHeader || len(line) == 0 {
			continue
		}
		raw, err := trace.ParseEvent(line, trace.Pos{File: file, Line: i + 1})
		if err != nil {
			return trace.Event{}, false
		}
		if e, err := raw.Event(); err == nil && e.Action == trace.InitAction && e.Instance == instance {
			return e, true
		}
	}
	return trace.Event{}, false
}

// jsonStream writes check --json's object as the checks run.
type jsonStream struct {
	w       *bufio.Writer
	reports int
	err     error
}

func newJSONStream(w io.Writer) *jsonStream {
	s := &jsonStream{w: bufio.NewWriterSize(w, 64<<10)}
	s.write(`{` + "\n" + `  "reports": [`)
	return s
}

func (s *jsonStream) write(text string) {
	if s.err == nil {
		_, s.err = s.w.WriteString(text)
	}
}

func (s *jsonStream) flush() {
	if s.err == nil {
		s.err = s.w.Flush()
	}
}

// field writes `,\n<indent>"key": value` with value as indented JSON.
func (s *jsonStream) field(indent, key string, v any) {
	b, err := json.MarshalIndent(v, indent, "  ")
	if err != nil {
		b, _ = json.Marshal(err.Error())
	}
	k, _ := json.Marshal(key)
	s.write(",\n" + indent + string(k) + ": " + string(b))
}

// jsonReport is one report of a jsonStream, open while its file is
// checked.
type jsonReport struct {
	s         *jsonStream
	quiet     bool
	listed    int
	notListed int
	ends      *fileEnding // a file of one instance: how it ends
	// projected is what the spec's projections and monitors found;
	// allProjections says that --projections asked for them.
	projected      *Projected
	allProjections bool
}

const jsonIndent = "    " // a report's indentation

func (s *jsonStream) begin(file, model string, quiet bool) *jsonReport {
	if s.reports > 0 {
		s.write(",")
	}
	s.reports++
	f, _ := json.Marshal(file)
	m, _ := json.Marshal(model)
	s.write("\n" + jsonIndent + "{\n" + jsonIndent + `  "file": ` + string(f) + ",\n" + jsonIndent + `  "model": ` + string(m) +
		",\n" + jsonIndent + `  "instances": [`)
	return &jsonReport{s: s, quiet: quiet}
}

// result writes one instance; for Options.OnResult.
func (r *jsonReport) result(res check.InstanceResult) {
	if r.quiet && (res.Verdict == check.Valid || r.listed >= quietMax) {
		r.notListed++
		return
	}
	b, err := json.MarshalIndent(res, jsonIndent+"    ", "  ")
	if err != nil {
		b, _ = json.Marshal(err.Error())
	}
	if r.listed > 0 {
		r.s.write(",")
	}
	r.listed++
	r.s.write("\n" + jsonIndent + "    " + string(b))
	if res.Verdict == check.Violation {
		r.s.flush()
	}
}

// end closes the report: rep is the check's report, err its input error.
func (r *jsonReport) end(rep *check.Report, err error) error {
	s := r.s
	if r.listed > 0 {
		s.write("\n" + jsonIndent + "  ")
	}
	s.write("]")
	in := jsonIndent + "  "
	verdict := rep.Verdict().String()
	if err != nil {
		verdict = codeVerdict(ExitInput)
	}
	s.field(in, "verdict", verdict)
	s.field(in, "events", rep.Events)
	s.field(in, "valid", rep.Count(check.Valid))
	s.field(in, "incomplete", rep.Count(check.Incomplete))
	s.field(in, "violation", rep.Count(check.Violation))
	if r.notListed > 0 {
		s.field(in, "not_listed", r.notListed)
	}
	if r.ends != nil {
		s.field(in, "ends", r.ends)
	}
	if rep.Truncated != nil {
		s.field(in, "truncated", rep.Truncated)
	}
	if len(rep.Exercised) > 0 {
		s.field(in, "exercised", rep.Exercised)
	}
	if rep.Ambiguous > 0 {
		s.field(in, "ambiguous_steps", rep.Ambiguous)
	}
	if r.projected != nil && err == nil {
		r.projected.writeJSON(s, in, r.allProjections)
	}
	if err != nil {
		s.field(in, "error", err.Error())
	}
	s.write("\n" + jsonIndent + "}")
	s.flush()
	return s.err
}

// finish ends the object with the errors and the overall verdict.
func (s *jsonStream) finish(worst int, errs []string) error {
	if s.reports > 0 {
		s.write("\n  ")
	}
	s.write("]")
	if len(errs) > 0 {
		s.field("  ", "errors", errs)
	}
	s.field("  ", "verdict", codeVerdict(worst))
	s.write("\n}\n")
	s.flush()
	return s.err
}

// expandDirs replaces each directory among files by the traces under it
// (*.ndjson, *.itf.json), in lexical order.
func expandDirs(files []string) ([]string, error) {
	var out []string
	for _, f := range files {
		st, err := os.Stat(f)
		if f == "-" || err != nil || !st.IsDir() {
			out = append(out, f) // errors are reported when the file is opened
			continue
		}
		var found []string
		err = filepath.WalkDir(f, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if !d.IsDir() && (strings.HasSuffix(p, ".ndjson") || strings.HasSuffix(p, ".itf.json")) {
				found = append(found, p)
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		if len(found) == 0 {
			return nil, fmt.Errorf("%s: no traces (*.ndjson, *.itf.json) in the directory", f)
		}
		sort.Strings(found)
		out = append(out, found...)
	}
	return out, nil
}

func verdictCode(v check.Verdict) int {
	switch v {
	case check.Valid:
		return ExitOK
	case check.Violation:
		return ExitViolation
	}
	return ExitIncomplete
}

func codeVerdict(code int) string {
	switch code {
	case ExitOK:
		return check.Valid.String()
	case ExitViolation:
		return check.Violation.String()
	case ExitIncomplete:
		return check.Incomplete.String()
	}
	return "input error"
}

// severity orders exit codes: input error, violation, incomplete, ok.
func severity(code int) int {
	switch code {
	case ExitInput:
		return 3
	case ExitViolation:
		return 2
	case ExitIncomplete:
		return 1
	}
	return 0
}
