package bundled_test

import (
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/cli"
	"github.com/tracecheck/tracecheck/internal/bundled"
	"github.com/tracecheck/tracecheck/trace"
)

// A response live at teardown: its pipeline's end (TTSClosed, detail
// closed) projects onto TTS.tla's Close from the worker running when the
// detail says teardown ended it before it returned (running), and from
// the worker returned when it does not (a trace without the detail:
// unchanged).
func TestTTSCloseOfARunningPipeline(t *testing.T) {
	var tts cli.Projection
	for _, p := range bundled.SessionProjections() {
		if p.Spec == "tts" {
			tts = p
		}
	}
	for _, c := range []struct {
		running bool
		want    string
	}{
		{true, "Close Return Reap"},
		{false, "Return Close Reap"},
	} {
		audio := map[string]any{"sent": float64(1), "cut": true, "dropped": float64(0), "buffered": float64(0), "ended": true,
			"returned": true, "closed": true}
		if c.running {
			audio["running"] = true
		}
		events := []trace.Event{
			{Instance: "s", Seq: 0, Action: trace.InitAction, State: map[string]any{"conn": 0, "vad": 0, "resp": 0, "compaction": 0}},
			{Instance: "s", Seq: 1, Action: "RespStart", State: map[string]any{"resp": 1}, Detail: map[string]any{"response": float64(1)}},
			{Instance: "s", Seq: 2, Action: "TTSClosed", State: map[string]any{"resp": 1}, Stutter: true,
				Detail: map[string]any{"response": float64(1), "torn": true, "audio": audio}},
		}
		pr := tts.New()
		var got []string
		for _, e := range events {
			for _, out := range pr.Project(cli.Source{Event: e}) {
				if out.Action != trace.InitAction {
					got = append(got, out.Action)
				}
			}
		}
		if s := strings.Join(got, " "); !strings.HasSuffix(s, c.want) {
			t.Errorf("running %v: projected %q, want it to end with %q", c.running, s, c.want)
		}
	}
}
