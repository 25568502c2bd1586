package tlccross

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/model/program"
	"github.com/tracecheck/tracecheck/trace"
)

// Verdict names, as verdicts.tsv spells them: tracecheck's three verdicts
// and an input error.
const (
	Valid      = "valid"
	Violation  = "violation"
	Incomplete = "incomplete"
	InputError = "input-error"
)

// ErrVerdicts: a line of verdicts.tsv is malformed.
var ErrVerdicts = errors.New("malformed verdicts file")

// Row is one line of verdicts.tsv: TLC's verdict on one instance of one
// trace, and the hashes of what TLC read.
type Row struct {
	Trace    string // path from the repository root, e.g. traces/program/x.ndjson
	Instance string // the instance; "-" when the trace could not be split
	TLCExit  int    // TLC's exit code
	Verdict  string // TLC's result mapped to Valid, Violation, Incomplete or InputError
	// TLCVersion is TLC's first output line.
	TLCVersion string
	// SHA-256 (hex) of spec/TraceProgram.tla, spec/TraceProgram.cfg,
	// spec/Program.tla and the trace file when TLC ran.
	SpecSHA256, ConfigSHA256, ProgramSHA256, TraceSHA256 string
}

// ReadVerdicts parses verdicts.tsv: tab-separated rows, '#' comments.
func ReadVerdicts(r io.Reader) ([]Row, error) {
	var rows []Row
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.TrimSpace(line) == "" || strings.HasPrefix(line, "#") {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 9 {
			return nil, fmt.Errorf("%w: line %d: %d fields, want 9", ErrVerdicts, n, len(f))
		}
		code, err := strconv.Atoi(f[2])
		if err != nil {
			return nil, fmt.Errorf("%w: line %d: exit code %q", ErrVerdicts, n, f[2])
		}
		switch f[3] {
		case Valid, Violation, Incomplete, InputError:
		default:
			return nil, fmt.Errorf("%w: line %d: verdict %q", ErrVerdicts, n, f[3])
		}
		rows = append(rows, Row{Trace: f[0], Instance: f[1], TLCExit: code, Verdict: f[3], TLCVersion: f[4],
			SpecSHA256: f[5], ConfigSHA256: f[6], ProgramSHA256: f[7], TraceSHA256: f[8]})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read verdicts: %w", err)
	}
	return rows, nil
}

// SplitInstances splits an NDJSON trace into one piece per instance, the
// way tlc-traces.sh does: lines copied verbatim, instances in order of
// first appearance. A partial last line (no '\n') ends the piece of the
// instance it names, or every piece if it names none, so that checking the
// piece reports the truncation. If a line is not a JSON object with a
// string "instance", the whole trace is one piece named "-".
func SplitInstances(data []byte) (order []string, pieces map[string][]byte) {
	lines := bytes.SplitAfter(data, []byte("\n"))
	var partial []byte
	if last := lines[len(lines)-1]; !bytes.HasSuffix(last, []byte("\n")) {
		partial, lines = last, lines[:len(lines)-1]
		if len(bytes.TrimSpace(partial)) == 0 {
			partial = nil
		}
	}
	pieces = map[string][]byte{}
	for _, line := range lines {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		inst, ok := instanceOf(line)
		if !ok {
			return []string{"-"}, map[string][]byte{"-": data}
		}
		if _, ok := pieces[inst]; !ok {
			order = append(order, inst)
		}
		pieces[inst] = append(pieces[inst], line...)
	}
	if len(order) == 0 {
		return []string{"-"}, map[string][]byte{"-": data}
	}
	if partial != nil {
		cut, named := trace.PeekInstance(partial)
		for _, inst := range order {
			if !named || cut == inst {
				pieces[inst] = append(pieces[inst], partial...)
			}
		}
	}
	return order, pieces
}

// instanceOf returns the "instance" string of a line that is a JSON object.
func instanceOf(line []byte) (string, bool) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		return "", false
	}
	var inst string
	if err := json.Unmarshal(obj["instance"], &inst); err != nil {
		return "", false
	}
	return inst, true
}

// Verdict is tracecheck's verdict on a trace against Program: Valid,
// Violation, Incomplete, or InputError when the checker refuses the input.
// Any other error (a cancelled ctx) is returned.
func Verdict(ctx context.Context, data []byte, name string) (string, error) {
	rep, err := check.Check(ctx, program.Spec(), bytes.NewReader(data), name, check.Options{Last: -1})
	switch {
	case errors.Is(err, check.ErrInput):
		return InputError, nil
	case err != nil:
		return "", err
	}
	return rep.Verdict().String(), nil
}

// TLCVerdict maps the result of a TLC run of spec/TraceProgram.tla (its
// exit code and output) to a verdict, as tlc-traces.sh does and
// spec/TraceProgram.tla documents: exit 0 is Valid; exit 12 with the
// invariant TraceComplete violated is Incomplete; exit 10 with the
// postcondition TraceMatched false, or exit 12/13 naming another invariant
// or property, is Violation; exit 10 from an assumption is InputError.
// Anything else is not a verdict: ok is false (TLC failed).
func TLCVerdict(exit int, output string) (verdict string, ok bool) {
	switch exit {
	case 0:
		return Valid, true
	case 10:
		switch {
		case strings.Contains(output, "Postcondition TraceMatched"):
			return Violation, true
		case tlcAssumption.MatchString(output):
			return InputError, true
		}
	case 12, 13:
		switch {
		case strings.Contains(output, "Invariant TraceComplete is violated"):
			return Incomplete, true
		case tlcProperty.MatchString(output):
			return Violation, true
		}
	}
	return "", false
}

var (
	tlcAssumption = regexp.MustCompile(`(?i)Evaluating assumption|Assumption .* is false`)
	tlcProperty   = regexp.MustCompile(`Invariant [A-Za-z]+ is violated|property [A-Za-z]+ (was|is) violated`)
)
