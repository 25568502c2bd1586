package trace

import (
	"bytes"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// FuzzReadITF: ReadITF never panics, and whatever it accepts survives
// EventsToITF and ReadITF again unchanged (the ITF -> events -> ITF ->
// events round trip).
//
//	go test -run '^$' -fuzz '^FuzzReadITF$' -fuzztime 1m ./trace/
func FuzzReadITF(f *testing.F) {
	f.Add([]byte(quintDoc))
	f.Add([]byte(`{"vars":["x"],"states":[{"x":1},{"x":{"#set":[1,{"#bigint":"-9"}]},"mbt::actionTaken":"A"}]}`))
	f.Add([]byte(`{"#meta":{"instance":"i"},"vars":[],"states":[{"#meta":{"seq":3,"part":"begin","stutter":true,"time":"2026-01-01T00:00:00Z","detail":{"a":[]}}}]}`))
	f.Add([]byte(`{"vars":["x"],"states":[{"x":{"#map":[[{"#tup":[]},{"#unserializable":"f"}]]}}],"loop":0}`))
	f.Add([]byte(`{"states":[]}`))
	f.Add([]byte("\x00\xff{"))
	f.Fuzz(func(t *testing.T, data []byte) {
		events, err := ReadITF(bytes.NewReader(data), "fuzz")
		if err != nil {
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("multi-line error: %q", err)
			}
			return
		}
		var buf bytes.Buffer
		if err := WriteITF(&buf, events); err != nil {
			t.Fatalf("WriteITF refused what ReadITF accepted: %v", err)
		}
		back, err := ReadITF(&buf, "other")
		if err != nil {
			t.Fatalf("ReadITF refused what WriteITF wrote: %v\n%s", err, buf.String())
		}
		if diff := cmp.Diff(normalizeBig(events), normalizeBig(back)); diff != "" {
			t.Errorf("round trip changed the events: -want +got\n%s", diff)
		}
	})
}

// normalizeBig applies WriteITF's one rewrite (plain integers beyond 2^53
// become #bigint) to both sides of a comparison.
func normalizeBig(events []Event) []Event {
	out := make([]Event, len(events))
	for i, e := range events {
		e.State = toITFValue(e.State).(map[string]any)
		out[i] = e
	}
	return out
}
