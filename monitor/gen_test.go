package monitor

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/model/session"
)

// A generated session: its event lines, in order, as an emitter writes
// them (without the newline).
type genSession struct {
	name  string
	lines [][]byte
}

var sessionSpec = session.Spec(session.Options{})

// genSessions generates n sessions of spec/session.fizz named
// prefix0..prefix(n-1): most valid (ended by Teardown), some left open
// (incomplete), some with a violation, a few with an input error, with
// stutter events and composite Teardowns.
func genSessions(seed uint64, n int, prefix string) []genSession {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	out := make([]genSession, n)
	for i := range out {
		out[i] = genSession{name: fmt.Sprintf("%s%d", prefix, i)}
		out[i].lines = genOne(r, out[i].name)
	}
	return out
}

func genOne(r *rand.Rand, name string) [][]byte {
	var lines [][]byte
	seq := uint64(0)
	emit := func(action, state string, extra string) {
		lines = append(lines, fmt.Appendf(nil, `{"v":1,"instance":%q,"seq":%d,"action":%q,"state":{%s}%s}`, name, seq, action, state, extra))
		seq += uint64(1 + r.IntN(2)) // gaps are allowed
	}
	emit("Init", `"conn":0,"vad":0,"resp":0,"compaction":0`, "")
	s := sessionSpec.Init()[0]
	steps := 1 + r.IntN(10)
	for k := 0; k < steps; k++ {
		switch x := r.IntN(100); {
		case x < 3: // a violation: an action whose guard fails, or a wrong value
			if s.Vad != 1 {
				emit("VadStop", `"vad":0`, "")
			} else {
				emit("VadStart", `"vad":1`, "")
			}
			continue
		case x < 5: // an input error
			switch r.IntN(4) {
			case 0:
				emit("Bogus", `"vad":1`, "")
			case 1:
				emit("VadStart", `"vad":"one"`, "")
			case 2:
				lines = append(lines, fmt.Appendf(nil, `{"v":1,"instance":%q,"seq":%d,"action":`, name, seq))
			case 3:
				seq = 0
				emit("VadStart", `"vad":1`, "")
			}
			continue
		case x < 12:
			emit("TTSClosed", "", `,"stutter":true`)
			continue
		}
		en := sessionSpec.Enabled(s)
		en = slices.DeleteFunc(en, func(a string) bool { return a == session.Teardown })
		if len(en) == 0 {
			break
		}
		a, _ := sessionSpec.Action(en[r.IntN(len(en))])
		var next []session.State
		a.Successors(s, func(t session.State) { next = append(next, t) })
		t := next[r.IntN(len(next))]
		emit(a.Name, changed(s, t, r.IntN(4) == 0), "")
		s = t
	}
	switch x := r.IntN(100); {
	case x < 60:
		emit("Teardown", `"conn":1,"vad":2,"resp":2,"compaction":2`, "")
	case x < 75:
		emit("Teardown", `"conn":1`, `,"part":"begin"`)
		emit("Teardown", `"vad":2`, `,"part":"step"`)
		if r.IntN(4) > 0 {
			emit("Teardown", `"resp":2,"compaction":2`, `,"part":"end"`)
		}
	}
	return lines
}

// changed renders the variables t changed from s (all of them if full).
func changed(s, t session.State, full bool) string {
	var b bytes.Buffer
	add := func(name string, a, c int8) {
		if a != c || full {
			if b.Len() > 0 {
				b.WriteByte(',')
			}
			fmt.Fprintf(&b, "%q:%d", name, c)
		}
	}
	add("conn", s.Conn, t.Conn)
	add("vad", s.Vad, t.Vad)
	add("resp", s.Resp, t.Resp)
	add("compaction", s.Compaction, t.Compaction)
	return b.String()
}

// offline is the verdict `tracecheck check` gives an instance's events,
// checked alone as a file named file (the check command's options:
// Forget, results streamed): the first final result, a violation as soon
// as it happens, an input error where it stops the check, else the result
// at the end.
func offline(g genSession, file string) Verdict {
	var buf bytes.Buffer
	for _, l := range g.lines {
		buf.Write(l)
		buf.WriteByte('\n')
	}
	var got []check.InstanceResult
	_, err := check.Check(context.Background(), sessionSpec, bytes.NewReader(buf.Bytes()), file,
		check.Options{Forget: true, OnResult: func(r check.InstanceResult) { got = append(got, r) }})
	v := Verdict{Spec: "session", Instance: g.name}
	switch {
	case len(got) > 0 && got[0].Verdict == check.Violation:
		v.Verdict, v.Result = VerdictViolation, resultOf(got[0])
	case err != nil && errors.Is(err, check.ErrInput):
		v.Verdict, v.Reason = VerdictInputError, err.Error()
	case err != nil:
		v.Verdict, v.Reason = "error", err.Error()
	case len(got) == 1:
		v.Verdict, v.Result = got[0].Verdict.String(), resultOf(got[0])
	default:
		v.Verdict, v.Reason = "error", fmt.Sprintf("%d results", len(got))
	}
	if v.Result != nil {
		v.Reason = v.Result.Reason
	}
	return v
}

// comparable is what of a verdict must equal the offline one.
type comparableVerdict struct {
	Verdict, Reason string
	Result          *Result
}

func comparableOf(v Verdict) comparableVerdict {
	return comparableVerdict{Verdict: v.Verdict, Reason: v.Reason, Result: v.Result}
}
