package monitor

import (
	"bytes"
	"fmt"
	"io"
	"time"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/trace"
)

// The values of Verdict.Verdict: check's three verdicts, and the input
// error that `tracecheck check` reports for a malformed event (exit code 3).
const (
	VerdictValid      = "valid"
	VerdictIncomplete = "incomplete"
	VerdictViolation  = "violation"
	VerdictInputError = "input-error"
)

// The values of Verdict.Cause: what ended the instance's stream.
const (
	// CauseViolation: an event violated the spec; judged at once.
	CauseViolation = "violation"
	// CauseInput: a malformed event (bad JSON, unknown action or variable,
	// a value of the wrong kind, a sequence number that does not increase,
	// a message over the size bound); judged at once.
	CauseInput = "input"
	// CauseLost: events of the instance were lost on the way (its emitter
	// dropped them, or one came after its successor); judged at once,
	// incomplete: the monitor cannot vouch for a trace with holes.
	CauseLost = "lost"
	// CauseMisrouted: an event of the instance was published on the subject
	// of another partition than its own (an emitter with another partition
	// count or hash); judged at once, an input error.
	CauseMisrouted = "misrouted"
	// CauseIdle: no event of the instance for Config.Idle: its stream
	// ended, and its verdict is what `tracecheck check` says at the end of
	// a trace (valid, or incomplete).
	CauseIdle = "idle"
)

// Verdict is the one verdict an instance gets, as the monitor stores it
// (JSON) in VerdictBucket under VerdictKey(spec, instance) and publishes it
// on VerdictSubject(spec).
type Verdict struct {
	Spec     string `json:"spec"`
	Instance string `json:"instance"`
	// Verdict is VerdictValid, VerdictIncomplete, VerdictViolation or
	// VerdictInputError.
	Verdict string `json:"verdict"`
	// Cause says what ended the instance (CauseIdle, ...).
	Cause string `json:"cause"`
	// Reason explains a verdict other than valid in one line (for an input
	// error, the checker's error, SUBJECT:N: what).
	Reason string `json:"reason,omitempty"`
	// Events counts the instance's events the monitor took (after a
	// violation they are counted, not checked, until the verdict is
	// written).
	Events int `json:"events"`
	// Partition is the instance's partition; FirstSeq and LastSeq the
	// stream sequences of its first and last event taken.
	Partition int    `json:"partition"`
	FirstSeq  uint64 `json:"first_stream_seq"`
	LastSeq   uint64 `json:"last_stream_seq"`
	// Monitor is the ID of the monitor that judged it; Time when.
	Monitor string    `json:"monitor"`
	Time    time.Time `json:"judged_at"`
	// Result is the checker's result (with the divergence report of a
	// violation); nil for an input error or lost events. Positions in it
	// are SUBJECT:N, the instance's N-th event.
	Result *Result `json:"result,omitempty"`
}

// Result is the checker's check.InstanceResult in a form JSON reads back:
// the verdict as its string.
type Result struct {
	Instance   string            `json:"instance"`
	Verdict    string            `json:"verdict"`
	Events     int               `json:"events"`
	FirstLine  int               `json:"first_line"`
	LastLine   int               `json:"last_line"`
	Reason     string            `json:"reason,omitempty"`
	Divergence *check.Divergence `json:"divergence,omitempty"`
	Final      []string          `json:"final,omitempty"`
}

// resultOf converts the checker's result.
func resultOf(r check.InstanceResult) *Result {
	return &Result{Instance: r.Instance, Verdict: r.Verdict.String(), Events: r.Events, FirstLine: r.FirstLine,
		LastLine: r.LastLine, Reason: r.Reason, Divergence: r.Divergence, Final: r.Final}
}

// InstanceResult returns r as the checker's result (without FinalValues).
func (r *Result) InstanceResult() check.InstanceResult {
	var v check.Verdict
	for _, c := range []check.Verdict{check.Valid, check.Incomplete, check.Violation} {
		if c.String() == r.Verdict {
			v = c
		}
	}
	return check.InstanceResult{Instance: r.Instance, Verdict: v, Events: r.Events, FirstLine: r.FirstLine,
		LastLine: r.LastLine, Reason: r.Reason, Divergence: r.Divergence, Final: r.Final}
}

// WriteText writes the verdict as `tracecheck check` writes an instance:
// one line, then a violation's divergence report.
func (v *Verdict) WriteText(w io.Writer) error {
	if v.Result != nil && v.Verdict != VerdictInputError {
		var b bytes.Buffer
		if err := v.Result.InstanceResult().WriteText(&b); err != nil {
			return err
		}
		text := b.Bytes()
		indent := len(text) - len(bytes.TrimLeft(text, " "))
		_, err := fmt.Fprintf(w, "%s%s/%s", text[:indent], v.Spec, text[indent:])
		return err
	}
	_, err := fmt.Fprintf(w, "  %s/%s: %s, %d events: %s\n", v.Spec, trace.Printable(v.Instance), v.Verdict, v.Events, v.Reason)
	return err
}
