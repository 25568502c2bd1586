package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/tracecheck/tracecheck/harness/check"
	"github.com/tracecheck/tracecheck/trace"
)

// exitIncomplete is check's and replay's exit code for a trace that broke
// nothing but does not end where the spec may stop (or was truncated).
const exitIncomplete = 4

func init() {
	register("check", command{"validate NDJSON traces against a bundled spec: valid, violation or incomplete", runCheck})
}

const checkSynopsis = `[--model M] [--json] [-q] [--last K] [--live] FILE|DIR...|-

Validates each trace (NDJSON, docs/trace-format.md, or an ITF document,
docs/itf.md; "-" reads standard input; a directory stands for the *.ndjson
and *.itf.json files under it) against a bundled spec, the way
TLC trace validation does: per instance it keeps every spec state
consistent with the events so far, and checks each event's action, state,
invariants and action properties.

Each instance gets a verdict: valid (ends where the spec may stop),
violation (at its first offending event, with a divergence report: file:line,
the candidate states and enabled actions before it, why the action did not
fit, a -want +got diff and the last K matched events), or incomplete (ends
where the spec does not stop, inside a composite step, or on a truncated
line; never reported as valid).

Models: program, session, session-mutant-no-compaction-teardown,
session-mutant-no-vad-teardown, session-mutant-no-resp-teardown. Without
--model the model is inferred from the trace's action or variable names
(else program).

Output: text for people; --json writes one JSON object:
  {"verdict": "valid"|"violation"|"incomplete"|"input error",
   "reports": [{"verdict", "file", "model", "events",
     "instances": [{"instance", "verdict", "events", "first_line", "last_line",
       "reason"?, "final"?: [state],
       "divergence"?: {"file", "line", "instance", "seq", "action", "event",
         "kind": "guard"|"state"|"invariant"|"property"|"init"|"stutter"|"composite",
         "reason", "candidates": [{"state", "enabled": [action], "why": [text]}],
         "diff"?, "fits"?: [action], "recent"?: [{"line", "event"}]}}],
     "truncated"?: {"file", "line", "instance"?},
     "exercised"?: [{"from", "action", "to", "count"}],
     "ambiguous_steps"?, "forgotten_valid"?}],
   "errors"?: ["file:line: what"]}

With --live (for a pipe) each violation is printed as soon as it is seen,
and instances that finished valid are dropped 10,000 events later, so that
memory stays bounded by the live instances; the final report counts them
instead of listing them.

Exit codes: 0 every instance valid; 1 a violation; 4 incomplete (and no
violation); 3 input error (unreadable file, malformed line, unknown action
or variable, value of the wrong type, sequence number not increasing,
empty file, line too long: one line on stderr naming file:line); 2 usage.
With several files the most severe wins: 3, then 1, then 4.`

// traceFlags are the flags check, replay and coverage share.
type traceFlags struct {
	model   *string
	maxLine *int
}

func addTraceFlags(fs *flag.FlagSet) traceFlags {
	return traceFlags{
		model:   fs.String("model", "", "the `model` to check against: "+modelList()+" (default: inferred)"),
		maxLine: fs.Int("max-line", 0, "longest accepted line in `bytes` (default 1 MiB)"),
	}
}

func (f traceFlags) validate(cmd string, stderr io.Writer) bool {
	if *f.model != "" {
		if _, ok := traceModelFor(*f.model); !ok {
			fmt.Fprintf(stderr, "tracecheck %s: unknown model %q (want %s)\n", cmd, *f.model, modelList())
			return false
		}
	}
	if *f.maxLine < 0 {
		fmt.Fprintf(stderr, "tracecheck %s: --max-line must not be negative\n", cmd)
		return false
	}
	return true
}

// openTrace opens file ("-": stdin) and picks its model: the flag's, or
// one inferred from the head of the trace. An ITF document
// (docs/itf.md) is read whole and checked as NDJSON, one line a state,
// with the file's base name as its instance unless it names its own. On
// standard input only the first line is awaited before checking starts,
// so that a live monitor on a pipe reports as events arrive.
func openTrace(file, modelName string, stdin io.Reader) (io.Reader, string, traceModel, func(), error) {
	name := file
	closer := func() {}
	var r io.Reader
	var head []byte
	var err error
	if file == "-" {
		name = "stdin"
		r, head, err = openStream(stdin, name, "stdin")
	} else {
		f, ferr := os.Open(file)
		if ferr != nil {
			return nil, name, nil, closer, ferr
		}
		closer = func() { f.Close() }
		base := filepath.Base(file)
		if i := strings.IndexByte(base, '.'); i > 0 {
			base = base[:i]
		}
		if st, serr := f.Stat(); serr == nil && !st.Mode().IsRegular() {
			r, head, err = openStream(f, name, base) // a pipe: do not wait for 64 KiB
		} else {
			r, _, err = trace.AsNDJSON(f, base)
		}
	}
	if err != nil {
		return nil, name, nil, closer, fmt.Errorf("%s: ITF: %w", name, err)
	}
	if modelName == "" {
		if head == nil {
			br := bufio.NewReaderSize(r, 64<<10)
			head, _ = br.Peek(64 << 10) // short input is fine
			r = br
		}
		modelName = inferModel(head)
	}
	m, _ := traceModelFor(modelName)
	return r, name, m, closer, nil
}

// openStream prepares a pipe for checking while it is written: it waits
// for the first line only. If that line is no trace event, the input may be
// an ITF document, which is read whole. head is the first line, for model
// inference (nil for ITF).
func openStream(in io.Reader, name, instance string) (r io.Reader, head []byte, err error) {
	br := bufio.NewReaderSize(in, 64<<10)
	first, _ := br.ReadSlice('\n') // the first line, or up to 64 KiB of it
	head = bytes.Clone(first)
	r = io.MultiReader(bytes.NewReader(head), br)
	if _, perr := trace.ParseEvent(bytes.TrimRight(head, "\r\n"), trace.Pos{File: name, Line: 1}); perr == nil {
		return r, head, nil
	}
	out, itf, err := trace.AsNDJSON(r, instance)
	if err != nil {
		return nil, nil, err
	}
	if itf {
		head = nil
	}
	return out, head, nil
}

// stdin is the standard input the commands read "-" from; tests replace it.
var stdin io.Reader = os.Stdin

func runCheck(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("check", checkSynopsis, stderr)
	tf := addTraceFlags(fs)
	asJSON := fs.Bool("json", false, "write the reports as JSON")
	last := fs.Int("last", check.DefaultLast, "show the last `K` matched events in a divergence report")
	live := fs.Bool("live", false, "print each violation as soon as it is seen (text output only)")
	quiet := fs.Bool("q", false, "leave valid instances out of the text report")
	files, code := parseArgs(fs, args)
	if code >= 0 {
		return code
	}
	if !tf.validate("check", stderr) {
		return exitUsage
	}
	if len(files) == 0 {
		fmt.Fprintln(stderr, "tracecheck check: no trace given (name files, or - for standard input)")
		fs.Usage()
		return exitUsage
	}
	if *last < 0 {
		fmt.Fprintln(stderr, "tracecheck check: --last must not be negative")
		return exitUsage
	}
	if *live && *asJSON {
		fmt.Fprintln(stderr, "tracecheck check: --live and --json do not go together")
		return exitUsage
	}
	files, err := expandDirs(files)
	if err != nil {
		fmt.Fprintf(stderr, "tracecheck check: %v\n", err)
		return exitInput
	}
	opt := check.Options{Last: *last, MaxLine: *tf.maxLine}
	if *last == 0 {
		opt.Last = -1
	}
	ctx := context.Background()
	var reports []*check.Report
	var errs []string
	worst := exitOK
	for _, file := range files {
		r, name, m, closeFile, err := openTrace(file, *tf.model, stdin)
		if err != nil {
			fmt.Fprintf(stderr, "tracecheck check: %v\n", err)
			errs = append(errs, err.Error())
			worst = exitInput
			continue
		}
		o := opt
		if *live {
			o.Forget = true
			o.OnViolation = func(res check.InstanceResult) {
				fmt.Fprintf(stdout, "%s: VIOLATION (live)\n", name)
				res.WriteText(stdout)
			}
		}
		rep, err := m.check(ctx, r, name, o)
		closeFile()
		if err != nil {
			fmt.Fprintf(stderr, "tracecheck check: %v\n", err)
			errs = append(errs, err.Error())
			worst = exitInput
			continue
		}
		reports = append(reports, rep)
		if c := verdictCode(rep.Verdict()); severity(c) > severity(worst) {
			worst = c
		}
		switch {
		case *asJSON:
		case *quiet:
			rep.WriteProblems(stdout)
		default:
			rep.WriteText(stdout)
		}
	}
	if *asJSON {
		out := struct {
			Verdict string          `json:"verdict"`
			Reports []*check.Report `json:"reports"`
			Errors  []string        `json:"errors,omitempty"`
		}{codeVerdict(worst), reports, errs}
		if out.Reports == nil {
			out.Reports = []*check.Report{}
		}
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		if err := enc.Encode(out); err != nil {
			fmt.Fprintf(stderr, "tracecheck check: %v\n", err)
			return exitInput
		}
	}
	return worst
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
		return exitOK
	case check.Violation:
		return exitViolation
	}
	return exitIncomplete
}

func codeVerdict(code int) string {
	switch code {
	case exitOK:
		return check.Valid.String()
	case exitViolation:
		return check.Violation.String()
	case exitIncomplete:
		return check.Incomplete.String()
	}
	return "input error"
}

// severity orders exit codes: input error, violation, incomplete, ok.
func severity(code int) int {
	switch code {
	case exitInput:
		return 3
	case exitViolation:
		return 2
	case exitIncomplete:
		return 1
	}
	return 0
}
