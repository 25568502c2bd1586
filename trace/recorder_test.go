package trace_test

import (
	"bytes"
	"fmt"
	"math"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tracecheck/tracecheck/trace"
)

// TestRecorder emits each case's events to a Recorder and to a Writer: the
// Recorder keeps exactly the events the Writer wrote, as they were given,
// refuses what the Writer refuses with the same error, and its NDJSON is
// the Writer's bytes.
func TestRecorder(t *testing.T) {
	init0 := trace.Event{V: trace.Version, Instance: "s1", Seq: 0, Action: trace.InitAction,
		State: map[string]any{"conn": 0, "vad": 0, "resp": 0, "compaction": 0}}
	noV := trace.Event{Instance: "s1", Seq: 1, Action: "VadStart", State: map[string]any{"vad": 1}}
	nan := trace.Event{Instance: "s1", Seq: 2, Action: "VadStop", State: map[string]any{"vad": math.NaN()}}
	full := trace.Event{V: trace.Version, Instance: "s1", Seq: 3, Action: "Teardown", Part: trace.PartBegin,
		State: map[string]any{"conn": 1, "s": map[string]any{"#set": []any{1, 2}}},
		Time:  time.Date(2026, 11, 29, 15, 0, 0, 0, time.UTC), Detail: map[string]any{"cause": "close"}}
	stutter := trace.Event{V: trace.Version, Instance: "s1", Seq: 4, Action: "TTSClosed", Stutter: true, State: map[string]any{}}
	badDetail := trace.Event{V: trace.Version, Instance: "s2", Seq: 0, Action: trace.InitAction,
		State: map[string]any{}, Detail: map[string]any{"ch": make(chan int)}}

	tests := []struct {
		name    string
		emit    []trace.Event
		refused []bool // per event: Emit must fail
		want    []trace.Event
	}{
		{name: "nothing emitted"},
		{name: "one event", emit: []trace.Event{init0}, refused: []bool{false}, want: []trace.Event{init0}},
		{name: "kept as given, a zero V included", emit: []trace.Event{init0, noV}, refused: []bool{false, false},
			want: []trace.Event{init0, noV}},
		{name: "every field", emit: []trace.Event{full, stutter}, refused: []bool{false, false},
			want: []trace.Event{full, stutter}},
		{name: "a NaN is refused, the rest kept", emit: []trace.Event{init0, nan, noV}, refused: []bool{false, true, false},
			want: []trace.Event{init0, noV}},
		{name: "an unencodable detail is refused", emit: []trace.Event{badDetail, init0}, refused: []bool{true, false},
			want: []trace.Event{init0}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var rec trace.Recorder
			var buf bytes.Buffer
			w := trace.NewWriter(&buf)
			for i, e := range tt.emit {
				err, werr := rec.Emit(e), w.Emit(e)
				if (err != nil) != tt.refused[i] {
					t.Fatalf("Emit(event %d) = %v, want refused %v", i, err, tt.refused[i])
				}
				if fmt.Sprint(err) != fmt.Sprint(werr) {
					t.Errorf("Emit(event %d) = %v, the Writer's = %v", i, err, werr)
				}
			}
			if got := rec.Events(); len(got) != len(tt.want) || len(got) > 0 && !reflect.DeepEqual(got, tt.want) {
				t.Errorf("Events() = %+v, want %+v", got, tt.want)
			}
			if got := rec.NDJSON(); !bytes.Equal(got, buf.Bytes()) {
				t.Errorf("NDJSON() =\n%s\nthe Writer wrote\n%s", got, buf.Bytes())
			}
			if len(tt.want) == 0 {
				return // an empty stream is no trace to decode
			}
			evs, err := decodeAll(t, trace.NewDecoder(bytes.NewReader(rec.NDJSON()), "rec.ndjson"))
			if err != nil || len(evs) != len(tt.want) {
				t.Fatalf("NDJSON() decodes to %d events, %v; want %d", len(evs), err, len(tt.want))
			}
			for i, e := range evs {
				if e.V != trace.Version || e.Instance != tt.want[i].Instance || e.Seq != tt.want[i].Seq || e.Action != tt.want[i].Action {
					t.Errorf("line %d decodes to %+v, want %+v", i+1, e, tt.want[i])
				}
			}
		})
	}
}

// What Events and NDJSON return is the caller's, and NDJSON holds each
// event as it was when emitted.
func TestRecorderCopies(t *testing.T) {
	var rec trace.Recorder
	state := map[string]any{"phase": "Ready"}
	if err := rec.Emit(trace.Event{Instance: "r", Action: trace.InitAction, State: state}); err != nil {
		t.Fatal(err)
	}
	evs := rec.Events()
	evs[0].Action = "Changed"
	grown := append(evs, trace.Event{Action: "Appended"})
	nd := rec.NDJSON()
	nd[0] = 'X'
	state["phase"] = "Running" // the emitter breaks the rule; the trace does not show it
	if err := rec.Emit(trace.Event{Instance: "r", Seq: 1, Action: "Next", State: map[string]any{}}); err != nil {
		t.Fatal(err)
	}

	if got := rec.Events(); len(got) != 2 || got[0].Action != trace.InitAction || got[1].Action != "Next" {
		t.Errorf("Events() after the caller changed its copy: %+v", got)
	}
	if grown[1].Action != "Appended" {
		t.Errorf("the recorder wrote into the caller's copy: %+v", grown)
	}
	want := `{"v":1,"instance":"r","seq":0,"action":"Init","state":{"phase":"Ready"}}` + "\n" +
		`{"v":1,"instance":"r","seq":1,"action":"Next","state":{}}` + "\n"
	if got := string(rec.NDJSON()); got != want {
		t.Errorf("NDJSON() = %q, want %q", got, want)
	}
}

// Many goroutines emit at once while others read: every event is recorded
// once, each goroutine's events in its order, and NDJSON's lines are the
// events in Events' order. Run with -race.
func TestRecorderConcurrent(t *testing.T) {
	const goroutines, each = 8, 200
	var rec trace.Recorder
	var emitters, readers sync.WaitGroup
	stop := make(chan struct{})
	for range 2 {
		readers.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				if n, lines := len(rec.Events()), bytes.Count(rec.NDJSON(), []byte("\n")); n > goroutines*each || lines > goroutines*each {
					t.Errorf("read %d events, %d lines: more than were emitted", n, lines)
					return
				}
			}
		})
	}
	for g := range goroutines {
		emitters.Go(func() {
			for i := range each {
				e := trace.Event{Instance: fmt.Sprintf("g%d", g), Seq: uint64(i), Action: "Step", State: map[string]any{"i": i}}
				if err := rec.Emit(e); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	emitters.Wait()
	close(stop)
	readers.Wait()

	evs := rec.Events()
	if len(evs) != goroutines*each {
		t.Fatalf("%d events recorded, want %d", len(evs), goroutines*each)
	}
	next := map[string]uint64{}
	for _, e := range evs {
		if e.Seq != next[e.Instance] {
			t.Fatalf("%s: seq %d recorded where %d was due", e.Instance, e.Seq, next[e.Instance])
		}
		next[e.Instance]++
	}
	lines := strings.Split(strings.TrimSuffix(string(rec.NDJSON()), "\n"), "\n")
	if len(lines) != len(evs) {
		t.Fatalf("%d lines, %d events", len(lines), len(evs))
	}
	for i, e := range evs {
		if want := fmt.Sprintf(`{"v":1,"instance":%q,"seq":%d,"action":"Step","state":{"i":%d}}`, e.Instance, e.Seq, e.State["i"]); lines[i] != want {
			t.Fatalf("line %d = %s, want %s (event %d)", i+1, lines[i], want, i)
		}
	}
}
