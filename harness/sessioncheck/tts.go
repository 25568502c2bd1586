package sessioncheck

import (
	"fmt"

	"github.com/tracecheck/tracecheck/trace"
)

// TTSClosedBeforeTeardown checks M5's relationship to M3, which
// session.fizz leaves inside resp ("resp terminated => tts closed"): in
// each instance, every response that a RespStart event started has a
// TTSClosed stutter event before the instance's Teardown, and exactly one
// (a pipeline is joined once). It returns one line per response whose
// pipeline was not seen closed before Teardown, and one per TTSClosed
// event after Teardown or for a response already closed.
func TTSClosedBeforeTeardown(events []trace.Event) []string {
	type inst struct {
		open   []uint64 // started responses not yet seen closed, in order
		closed map[uint64]bool
		torn   bool
	}
	insts := map[string]*inst{}
	var bad []string
	num := func(e trace.Event) uint64 {
		switch v := e.Detail["response"].(type) {
		case uint64:
			return v
		case float64:
			return uint64(v)
		}
		return 0
	}
	for _, e := range events {
		in := insts[e.Instance]
		if in == nil {
			in = &inst{}
			insts[e.Instance] = in
		}
		switch {
		case e.Action == "RespStart" && !e.Stutter:
			in.open = append(in.open, num(e))
		case e.Action == "TTSClosed" && e.Stutter:
			id := num(e)
			switch {
			case in.closed[id]:
				bad = append(bad, fmt.Sprintf("%s#%d: response %d's TTS pipeline closed twice", e.Instance, e.Seq, id))
			case in.torn:
				bad = append(bad, fmt.Sprintf("%s#%d: response %d's TTS pipeline closed after Teardown", e.Instance, e.Seq, id))
			}
			if in.closed == nil {
				in.closed = map[uint64]bool{}
			}
			in.closed[id] = true
			for i, o := range in.open {
				if o == id {
					in.open = append(in.open[:i], in.open[i+1:]...)
					break
				}
			}
		case e.Action == "Teardown" && !in.torn:
			in.torn = true
			for _, id := range in.open {
				bad = append(bad, fmt.Sprintf("%s#%d: Teardown while response %d's TTS pipeline is not closed", e.Instance, e.Seq, id))
			}
		}
	}
	return bad
}
