package check

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/tracecheck/tracecheck/model"
)

// Verdict is the outcome of checking one instance. The zero Verdict is not
// a verdict: an unchecked instance is never reported as valid.
type Verdict uint8

// The three verdicts, ordered from best to worst.
const (
	// Valid: every event is a step of the spec and the instance ends in a
	// state where the spec may stop.
	Valid Verdict = iota + 1
	// Incomplete: no event broke the spec, but the instance ends where the
	// spec does not stop (a killed run's journal), inside an open
	// composite step, or on a truncated line. Uncertain, never valid.
	Incomplete
	// Violation: an event is not a step of the spec; see the Divergence.
	Violation
)

var verdictNames = [...]string{Valid: "valid", Incomplete: "incomplete", Violation: "violation"}

// String returns "valid", "incomplete" or "violation".
func (v Verdict) String() string { return enumName(verdictNames[:], int(v), "Verdict") }

// enumName returns names[i], the name of the i-th value of an enum that
// starts at 1, or "typ(i)" if it has no such value.
func enumName(names []string, i int, typ string) string {
	if i > 0 && i < len(names) {
		return names[i]
	}
	return fmt.Sprintf("%s(%d)", typ, i)
}

// MarshalText renders the verdict as its String.
func (v Verdict) MarshalText() ([]byte, error) { return []byte(v.String()), nil }

// InstanceResult is the verdict on one instance (a run or a session).
type InstanceResult struct {
	Instance string  `json:"instance"`
	Verdict  Verdict `json:"verdict"`
	// Events counts the instance's events, including any after a violation.
	Events    int `json:"events"`
	FirstLine int `json:"first_line"`
	LastLine  int `json:"last_line"`
	// Reason explains an incomplete or violating verdict in one line.
	Reason string `json:"reason,omitempty"`
	// Divergence is set for a violation.
	Divergence *Divergence `json:"divergence,omitempty"`
	// Final holds the candidate states at the end (Spec.Format), unless
	// the instance violated the spec.
	Final []string `json:"final,omitempty"`
	// FinalValues holds the same states as values, in the order of the
	// spec's Vars (Spec.Valuation), for programs that inspect them.
	// Final and FinalValues may share memory with other results (of
	// instances that end in the same state): read them, do not modify
	// them.
	FinalValues [][]model.Value `json:"-"`
}

// Truncation records a last line without its newline: cut off
// mid-write, so not checked.
type Truncation struct {
	File string `json:"file"`
	Line int    `json:"line"`
	// Doc is set when the input is ITF (docs/itf.md): the document,
	// counted from 1, that records the truncation of the trace it was
	// exported from (its "#meta" "truncated"); Line is then the line where
	// that document starts.
	Doc int `json:"doc,omitempty"`
	// Instance is the cut-off event's instance if the partial line names
	// it; otherwise every instance is incomplete.
	Instance string `json:"instance,omitempty"`
	// Whole says that the line holds a whole event and lacks only its
	// newline: it is not checked either (docs/trace-format.md,
	// "Truncation").
	Whole bool `json:"whole_event,omitempty"`
}

// reason is the reason an instance the truncation makes incomplete gives.
func (t *Truncation) reason() string {
	at := where(t.File, t.Doc, t.Line)
	switch {
	case t.Doc > 0:
		return fmt.Sprintf("the ITF document at %s records that its trace was cut off mid-line (#meta.truncated)", at)
	case t.Whole:
		return fmt.Sprintf("the trace ends at %s on a whole event without its newline, which is not checked (a writer stopped before the line's end)", at)
	}
	return fmt.Sprintf("the trace is truncated at %s (a partial last line)", at)
}

// note is the truncation's line in a text report.
func (t *Truncation) note() string {
	who := "every instance"
	if t.Instance != "" {
		who = "instance " + clipID(t.Instance)
	}
	at := where(t.File, t.Doc, t.Line)
	switch {
	case t.Doc > 0:
		return fmt.Sprintf("truncated: the ITF document at %s records that the trace it was exported from ended on a partial line (#meta.truncated); %s is incomplete", at, who)
	case t.Whole:
		return fmt.Sprintf("truncated: %s has no newline: it holds a whole event, but a line without its newline is not checked (the writer stopped before the line's end); %s is incomplete", at, who)
	}
	return fmt.Sprintf("truncated: %s has no newline (the writer stopped mid-line); %s is incomplete", at, who)
}

// Transition is one model transition a trace exercised, with each state
// rendered by Spec.Format.
type Transition struct {
	From   string `json:"from"`
	Action string `json:"action"`
	To     string `json:"to"`
	Count  int    `json:"count"`
}

func (t Transition) less(u Transition) bool {
	if t.From != u.From {
		return t.From < u.From
	}
	if t.Action != u.Action {
		return t.Action < u.Action
	}
	return t.To < u.To
}

// Report is the result of checking one trace.
type Report struct {
	File   string `json:"file"`
	Model  string `json:"model"`
	Events int    `json:"events"`
	// Instances are in order of first appearance.
	Instances []InstanceResult `json:"instances"`
	Truncated *Truncation      `json:"truncated,omitempty"`
	// Exercised are the transitions matched unambiguously (exactly one
	// (from, action, to) fitted the event); Ambiguous counts the steps
	// that several transitions fitted, which coverage does not count.
	Exercised []Transition `json:"exercised,omitempty"`
	Ambiguous int          `json:"ambiguous_steps,omitempty"`
	// Forgotten counts the valid instances dropped when they finished
	// (Options.Forget) without being reported (Options.OnResult); they are
	// not in Instances.
	Forgotten int `json:"forgotten_valid,omitempty"`
	// Streamed counts, by verdict, the instances whose results went to
	// Options.OnResult; they are not in Instances.
	Streamed Tally `json:"streamed,omitzero"`
}

// Tally counts instances by verdict.
type Tally struct {
	Valid      int `json:"valid"`
	Incomplete int `json:"incomplete"`
	Violation  int `json:"violation"`
}

// Of returns the count of verdict v.
func (t Tally) Of(v Verdict) int {
	switch v {
	case Valid:
		return t.Valid
	case Incomplete:
		return t.Incomplete
	case Violation:
		return t.Violation
	}
	return 0
}

// Total returns the number of instances counted.
func (t Tally) Total() int { return t.Valid + t.Incomplete + t.Violation }

func (t *Tally) add(v Verdict) {
	switch v {
	case Valid:
		t.Valid++
	case Incomplete:
		t.Incomplete++
	case Violation:
		t.Violation++
	}
}

// Worst returns the worst verdict counted, or 0 if none.
func (t Tally) Worst() Verdict {
	switch {
	case t.Violation > 0:
		return Violation
	case t.Incomplete > 0:
		return Incomplete
	case t.Valid > 0:
		return Valid
	}
	return 0
}

// Verdict returns the worst verdict of any instance (listed or streamed):
// violation, then incomplete, then valid. A truncated trace is at best
// incomplete, and a trace with no instance is incomplete.
func (r *Report) Verdict() Verdict {
	v := Valid
	if r.Truncated != nil || r.Total()+r.Forgotten == 0 {
		v = Incomplete
	}
	v = max(v, r.Streamed.Worst())
	for _, in := range r.Instances {
		v = max(v, in.Verdict)
	}
	return v
}

// Count returns how many instances have verdict v: those listed and those
// streamed (Options.OnResult), not those forgotten.
func (r *Report) Count(v Verdict) int {
	n := r.Streamed.Of(v)
	for _, in := range r.Instances {
		if in.Verdict == v {
			n++
		}
	}
	return n
}

// Total returns the number of instances listed or streamed.
func (r *Report) Total() int { return len(r.Instances) + r.Streamed.Total() }

// MarshalJSON encodes the report with its overall "verdict" first.
func (r *Report) MarshalJSON() ([]byte, error) {
	type plain Report
	return json.Marshal(struct {
		Verdict Verdict `json:"verdict"`
		*plain
	}{r.Verdict(), (*plain)(r)})
}

// WriteJSON writes the report as one indented JSON object with a top-level
// "verdict".
func (r *Report) WriteJSON(w io.Writer) error { return writeJSON(w, r) }

// writeJSON writes v as indented JSON.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// WriteText writes the report for a person: one line per instance, and for
// each violation the full divergence report.
func (r *Report) WriteText(w io.Writer) error { return r.writeText(w, true) }

// WriteProblems is [Report.WriteText] without the valid instances: the
// summary line and what is incomplete or violated.
func (r *Report) WriteProblems(w io.Writer) error { return r.writeText(w, false) }

func (r *Report) writeText(w io.Writer, valid bool) error {
	var b strings.Builder
	r.writeSummary(&b)
	r.writeNotes(&b)
	for _, in := range r.Instances {
		if !valid && in.Verdict == Valid {
			continue
		}
		in.writeText(&b)
		writeReplay(&b, in, r.File, r.Model)
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeSummary writes the report's summary line.
func (r *Report) writeSummary(b *strings.Builder) {
	plural := "s"
	if r.Total() == 1 {
		plural = ""
	}
	fmt.Fprintf(b, "%s: %s (model %s, %d events, %d instance%s: %d valid, %d incomplete, %d violation)\n",
		r.File, strings.ToUpper(r.Verdict().String()), r.Model, r.Events, r.Total(), plural,
		r.Count(Valid), r.Count(Incomplete), r.Count(Violation))
}

// writeNotes writes the lines on forgotten instances and truncation.
func (r *Report) writeNotes(b *strings.Builder) {
	if r.Forgotten > 0 {
		fmt.Fprintf(b, "  %d more valid instances finished and were not kept (live monitoring)\n", r.Forgotten)
	}
	if t := r.Truncated; t != nil {
		fmt.Fprintf(b, "  %s\n", t.note())
	}
}

// writeReplay writes the replay command line for a violation of a named
// file. An instance id too long to print whole is left out of it. The
// model of a spec's mutant, SPEC-mutant-NAME as the command line names it,
// is selected there with --model SPEC --mutant NAME.
func writeReplay(b *strings.Builder, in InstanceResult, file, model string) {
	if in.Divergence == nil || file == "" || file == "-" || file == "stdin" {
		return
	}
	if spec, mutant, ok := strings.Cut(model, "-mutant-"); ok {
		model = spec + " --mutant " + mutant
	}
	if len(in.Instance) > maxShown {
		fmt.Fprintf(b, "    replay: tracecheck replay --model %s %s  (add --instance with the instance's id: it is too long to print here, check --json has it whole)\n", model, shellQuote(file))
		return
	}
	fmt.Fprintf(b, "    replay: tracecheck replay --model %s --instance %s %s\n", model, shellQuote(in.Instance), shellQuote(file))
}

// shellQuote quotes s for a POSIX shell when it needs it.
func shellQuote(s string) string {
	for _, c := range s {
		if !(c == '-' || c == '_' || c == '.' || c == '/' || c == ':' || c == '+' || c == '=' ||
			'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	if s == "" {
		return "''"
	}
	return s
}

// WriteText writes the instance's verdict line and, for a violation, its
// divergence report.
func (in InstanceResult) WriteText(w io.Writer) error {
	var b strings.Builder
	in.writeText(&b)
	_, err := io.WriteString(w, b.String())
	return err
}

func (in InstanceResult) writeText(b *strings.Builder) {
	var line [256]byte
	b.Write(in.appendLine(line[:0]))
	if d := in.Divergence; d != nil {
		d.writeText(b)
	}
}

// appendLine appends the instance's verdict line,
// "  NAME: VERDICT, N events (lines A-B)[: REASON]\n", to b.
func (in *InstanceResult) appendLine(b []byte) []byte {
	b = append(b, "  "...)
	if len(in.Instance) > maxShown {
		b = append(b, clipID(in.Instance)...)
	} else {
		b = append(b, in.Instance...)
	}
	b = append(b, ": "...)
	b = append(b, in.Verdict.String()...)
	b = append(b, ", "...)
	b = strconv.AppendInt(b, int64(in.Events), 10)
	b = append(b, " events (lines "...)
	b = strconv.AppendInt(b, int64(in.FirstLine), 10)
	b = append(b, '-')
	b = strconv.AppendInt(b, int64(in.LastLine), 10)
	b = append(b, ')')
	if in.Reason != "" && in.Divergence == nil {
		b = append(b, ": "...)
		b = append(b, in.Reason...)
	}
	return append(b, '\n')
}

// writeText writes the divergence report for a person; instance ids,
// actions and values longer than maxShown bytes are clipped.
func (d *Divergence) writeText(b *strings.Builder) {
	ind := "    "
	action := clipID(d.Action)
	if d.Args != nil {
		args := make([]string, len(d.Args))
		for i, a := range d.Args {
			args[i] = clipValue(a)
		}
		action += "(" + strings.Join(args, ", ") + ")"
	}
	fmt.Fprintf(b, "%s%s: instance %s, seq %d, action %s: %s\n", ind, where(d.File, d.Doc, d.Line), clipID(d.Instance), d.Seq, action, d.Reason)
	fmt.Fprintf(b, "%sevent: %s\n", ind, clipEvent(d.Event))
	if len(d.Candidates) > 0 {
		fmt.Fprintf(b, "%scandidate states before the event:\n", ind)
	}
	for i, c := range d.Candidates {
		fmt.Fprintf(b, "%s  %d. %s\n", ind, i+1, c.State)
		en := strings.Join(c.Enabled, ", ")
		if en == "" {
			en = "(none)"
		}
		fmt.Fprintf(b, "%s     enabled: %s\n", ind, en)
		for _, why := range c.Why {
			fmt.Fprintf(b, "%s     why: %s\n", ind, clipWhy(why))
		}
	}
	if len(d.Fits) > 0 {
		fmt.Fprintf(b, "%sthe event's state fits: %s\n", ind, strings.Join(d.Fits, ", "))
	}
	if d.Diff != "" {
		for _, l := range strings.Split(strings.TrimRight(d.Diff, "\n"), "\n") {
			fmt.Fprintf(b, "%s%s\n", ind, clipDiffLine(l))
		}
	}
	if len(d.Recent) > 0 {
		fmt.Fprintf(b, "%slast %d matched events:\n", ind, len(d.Recent))
		for _, e := range d.Recent {
			fmt.Fprintf(b, "%s  %s: %s\n", ind, where(d.File, e.Doc, e.Line), clipEvent(e.Event))
		}
	}
}

// TextStream writes a check's results as text while the check runs, the
// way `tracecheck check` prints them. Give its Result method to
// Options.OnResult: it writes each instance's line (and a violation's
// divergence report) as soon as the result is known. End writes what is
// left once the check is over: how many instances were not listed, the
// notes of [Report.WriteText] (forgotten instances, truncation) and, last,
// the report's summary line. Output is buffered; it is flushed after each
// violation (and with Live after every line), and by End and Flush.
type TextStream struct {
	// Valid lists the valid instances too; otherwise the summary only
	// counts them.
	Valid bool
	// Max bounds how many violating or incomplete instances are listed;
	// 0 lists them all. The others are counted in one line before the
	// summary.
	Max int
	// Live writes "FILE: VIOLATION (live)" before each violation and
	// flushes after every line.
	Live bool
	// NoReplay leaves out the replay command line of a violation: the
	// file named is not one replay can read (a projected trace).
	NoReplay bool

	w           *bufio.Writer
	file, model string
	listed      int
	hidden      Tally
	line        []byte
	err         error
}

// NewTextStream returns a TextStream writing to w the results of a check
// of file against model (for the replay command line of a violation).
func NewTextStream(w io.Writer, file, model string) *TextStream {
	return &TextStream{w: bufio.NewWriterSize(w, 64<<10), file: file, model: model}
}

// Result writes res, unless it is not to be listed; see [TextStream].
func (t *TextStream) Result(res InstanceResult) {
	if res.Verdict == Valid && !t.Valid {
		return
	}
	if res.Verdict != Valid {
		if t.Max > 0 && t.listed >= t.Max {
			t.hidden.add(res.Verdict)
			return
		}
		t.listed++
	}
	if res.Divergence == nil && !t.Live { // the usual line: no allocation
		t.line = res.appendLine(t.line[:0])
		if t.err == nil {
			_, t.err = t.w.Write(t.line)
		}
		return
	}
	var b strings.Builder
	if t.Live && res.Verdict == Violation {
		fmt.Fprintf(&b, "%s: VIOLATION (live)\n", t.file)
	}
	res.writeText(&b)
	if !t.NoReplay {
		writeReplay(&b, res, t.file, t.model)
	}
	t.write(b.String())
	if res.Verdict == Violation || t.Live {
		t.Flush()
	}
}

func (t *TextStream) write(s string) {
	if t.err == nil {
		_, t.err = t.w.WriteString(s)
	}
}

// Flush writes out what is buffered and returns the first write error.
func (t *TextStream) Flush() error {
	if t.err == nil {
		t.err = t.w.Flush()
	}
	return t.err
}

// End writes the end of rep, the report of the check whose results the
// stream wrote, its summary line last, and flushes. It returns the first
// write error.
func (t *TextStream) End(rep *Report) error {
	var b strings.Builder
	if n := t.hidden.Total(); n > 0 {
		fmt.Fprintf(&b, "  ... %d more not listed (%d violation, %d incomplete)\n", n, t.hidden.Violation, t.hidden.Incomplete)
	}
	rep.writeNotes(&b)
	rep.writeSummary(&b)
	t.write(b.String())
	return t.Flush()
}
