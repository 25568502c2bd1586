package check

import (
	"encoding/json"
	"fmt"
	"io"
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

// String returns "valid", "incomplete" or "violation".
func (v Verdict) String() string {
	switch v {
	case Valid:
		return "valid"
	case Incomplete:
		return "incomplete"
	case Violation:
		return "violation"
	}
	return fmt.Sprintf("Verdict(%d)", uint8(v))
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
	FinalValues [][]model.Value `json:"-"`
}

// Truncation records a last line cut off mid-write.
type Truncation struct {
	File string `json:"file"`
	Line int    `json:"line"`
	// Instance is the cut-off event's instance if the partial line names
	// it; otherwise every instance is incomplete.
	Instance string `json:"instance,omitempty"`
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
	// (Options.Forget); they are not in Instances.
	Forgotten int `json:"forgotten_valid,omitempty"`
}

// Verdict returns the worst verdict of any instance: violation, then
// incomplete, then valid. A truncated trace is at best incomplete, and a
// trace with no instance is incomplete.
func (r *Report) Verdict() Verdict {
	v := Valid
	if r.Truncated != nil || len(r.Instances)+r.Forgotten == 0 {
		v = Incomplete
	}
	for _, in := range r.Instances {
		if in.Verdict > v {
			v = in.Verdict
		}
	}
	return v
}

// Count returns how many instances have verdict v.
func (r *Report) Count(v Verdict) int {
	n := 0
	for _, in := range r.Instances {
		if in.Verdict == v {
			n++
		}
	}
	return n
}

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
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteText writes the report for a person: one line per instance, and for
// each violation the full divergence report.
func (r *Report) WriteText(w io.Writer) error { return r.writeText(w, true) }

// WriteProblems is [Report.WriteText] without the valid instances: the
// summary line and what is incomplete or violated.
func (r *Report) WriteProblems(w io.Writer) error { return r.writeText(w, false) }

func (r *Report) writeText(w io.Writer, valid bool) error {
	var b strings.Builder
	plural := "s"
	if len(r.Instances) == 1 {
		plural = ""
	}
	fmt.Fprintf(&b, "%s: %s (model %s, %d events, %d instance%s: %d valid, %d incomplete, %d violation)\n",
		r.File, strings.ToUpper(r.Verdict().String()), r.Model, r.Events, len(r.Instances), plural,
		r.Count(Valid), r.Count(Incomplete), r.Count(Violation))
	if r.Forgotten > 0 {
		fmt.Fprintf(&b, "  %d more valid instances finished and were not kept (live monitoring)\n", r.Forgotten)
	}
	if t := r.Truncated; t != nil {
		who := "every instance"
		if t.Instance != "" {
			who = "instance " + t.Instance
		}
		fmt.Fprintf(&b, "  truncated: %s:%d has no newline (the writer stopped mid-line); %s is incomplete\n", t.File, t.Line, who)
	}
	for _, in := range r.Instances {
		if !valid && in.Verdict == Valid {
			continue
		}
		in.writeText(&b)
		if in.Divergence != nil && r.File != "" && r.File != "-" && r.File != "stdin" {
			fmt.Fprintf(&b, "    replay: tracecheck replay --model %s --instance %s %s\n", r.Model, shellQuote(in.Instance), shellQuote(r.File))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
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
	fmt.Fprintf(b, "  %s: %s, %d events (lines %d-%d)", in.Instance, in.Verdict, in.Events, in.FirstLine, in.LastLine)
	if in.Reason != "" && in.Divergence == nil {
		fmt.Fprintf(b, ": %s", in.Reason)
	}
	b.WriteString("\n")
	if d := in.Divergence; d != nil {
		d.writeText(b)
	}
}

func (d *Divergence) writeText(b *strings.Builder) {
	ind := "    "
	fmt.Fprintf(b, "%s%s:%d: instance %s, seq %d, action %s: %s\n", ind, d.File, d.Line, d.Instance, d.Seq, d.Action, d.Reason)
	fmt.Fprintf(b, "%sevent: %s\n", ind, d.Event)
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
			fmt.Fprintf(b, "%s     why: %s\n", ind, why)
		}
	}
	if len(d.Fits) > 0 {
		fmt.Fprintf(b, "%sthe event's state fits: %s\n", ind, strings.Join(d.Fits, ", "))
	}
	if d.Diff != "" {
		for _, l := range strings.Split(strings.TrimRight(d.Diff, "\n"), "\n") {
			fmt.Fprintf(b, "%s%s\n", ind, l)
		}
	}
	if len(d.Recent) > 0 {
		fmt.Fprintf(b, "%slast %d matched events:\n", ind, len(d.Recent))
		for _, e := range d.Recent {
			fmt.Fprintf(b, "%s  %s:%d: %s\n", ind, d.File, e.Line, e.Event)
		}
	}
}
