package trace_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tracecheck/tracecheck/trace"
)

// argsLine is an event of a parameterised action, its arguments where
// they are written.
func argsLine(args string) string {
	return `{"v":1,"instance":"t1","seq":1,"action":"RMPrepare",` + args + `"state":{"x":1}}`
}

// An event's "args" is a JSON array of values, kept raw in Raw.Args and
// decoded in Event.Args; an empty array is no arguments. Anything else is
// a field error, as is a repeated "args" and arguments to a stutter event.
func TestDecoderArgs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		line    string
		raw     string // Raw.Args; "" for nil
		args    []any
		err     error
		errText string
	}{
		{name: "one string", line: argsLine(`"args":["r1"],`), raw: `["r1"]`, args: []any{"r1"}},
		{name: "every kind", line: argsLine(`"args": [ "r1", -2, true, [1], {"#set":[1]}, {"#bigint":"99999999999999999999"}, {"f":"g"} ] ,`),
			raw:  `[ "r1", -2, true, [1], {"#set":[1]}, {"#bigint":"99999999999999999999"}, {"f":"g"} ]`,
			args: []any{"r1", json.Number("-2"), true, []any{json.Number("1")}, map[string]any{"#set": []any{json.Number("1")}}, map[string]any{"#bigint": "99999999999999999999"}, map[string]any{"f": "g"}}},
		{name: "last field", line: `{"v":1,"instance":"t1","seq":1,"action":"A","state":{},"args":["\u0072\"1"]}`, raw: `["\u0072\"1"]`, args: []any{`r"1`}},
		{name: "before the action", line: `{"args":[1],"v":1,"instance":"t1","seq":1,"action":"A","state":{}}`, raw: `[1]`, args: []any{json.Number("1")}},
		{name: "empty: no arguments", line: argsLine(`"args":[],`)},
		{name: "empty with spaces", line: argsLine(`"args":[ ` + "\t" + `],`)},
		{name: "empty on a stutter event", line: `{"v":1,"instance":"t1","seq":1,"action":"x","stutter":true,"args":[],"state":{}}`},
		{name: "an object", line: argsLine(`"args":{"r":"r1"},`), err: trace.ErrField, errText: `args is not an array: {"r":"r1"}`},
		{name: "a string", line: argsLine(`"args":"r1",`), err: trace.ErrField, errText: `args is not an array: "r1"`},
		{name: "null", line: argsLine(`"args":null,`), err: trace.ErrField, errText: "args is not an array: null"},
		{name: "a number", line: argsLine(`"args":1,`), err: trace.ErrField, errText: "args is not an array: 1"},
		{name: "trailing comma", line: argsLine(`"args":["r1",],`), err: trace.ErrSyntax},
		{name: "unterminated", line: argsLine(`"args":["r1",`), err: trace.ErrSyntax},
		{name: "repeated", line: argsLine(`"args":["r1"],"args":["r1"],`), err: trace.ErrField, errText: `field "args" repeated`},
		{name: "on a stutter event", line: `{"v":1,"instance":"t1","seq":1,"action":"x","stutter":true,"args":["r1"],"state":{}}`,
			err: trace.ErrField, errText: "a stutter event takes no arguments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// After an event with arguments, so that a reused Raw that
			// kept them would show.
			in := argsLine(`"args":["before"],`) + "\n" + tc.line + "\n"
			d := trace.NewDecoder(strings.NewReader(in), "a.ndjson")
			if _, err := d.Next(); err != nil {
				t.Fatal(err)
			}
			r, err := d.Next()
			if tc.err != nil {
				if !errors.Is(err, tc.err) || !strings.HasPrefix(err.Error(), "a.ndjson:2: ") || !strings.Contains(err.Error(), tc.errText) {
					t.Fatalf("error %v, want %v with %q", err, tc.err, tc.errText)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(r.Args) != tc.raw || (r.Args == nil) != (tc.raw == "") {
				t.Errorf("Raw.Args %q, want %q", r.Args, tc.raw)
			}
			e, err := r.Event()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.args, e.Args); diff != "" {
				t.Errorf("Event.Args: -want +got\n%s", diff)
			}
		})
	}
}

// The writer writes arguments after the action, and none when there are
// none (nil or empty); what it writes decodes to the same event, and
// writes again to the same line.
func TestWriterArgs(t *testing.T) {
	for _, tc := range []struct {
		args []any
		want string
	}{
		{[]any{"r1"}, `"action":"RMPrepare","args":["r1"],"state":{}`},
		{[]any{"r1", 2, map[string]any{"#set": []any{true}}}, `"args":["r1",2,{"#set":[true]}]`},
		{nil, `"action":"RMPrepare","state":{}`},
		{[]any{}, `"action":"RMPrepare","state":{}`},
	} {
		var buf bytes.Buffer
		w := trace.NewWriter(&buf)
		if err := w.Emit(trace.Event{Instance: "t", Seq: 1, Action: "RMPrepare", Args: tc.args, State: map[string]any{}}); err != nil {
			t.Fatal(err)
		}
		line := buf.String()
		if !strings.Contains(line, tc.want) {
			t.Errorf("wrote %s, want it to hold %s", line, tc.want)
		}
		e, err := trace.NewDecoder(strings.NewReader(line), "w").Decode()
		if err != nil {
			t.Fatal(err)
		}
		var again bytes.Buffer
		if err := trace.NewWriter(&again).Emit(e); err != nil {
			t.Fatal(err)
		}
		if again.String() != line {
			t.Errorf("written again:\n%s\nfirst:\n%s", again.String(), line)
		}
		if (e.Args == nil) != (len(tc.args) == 0) {
			t.Errorf("decoded Args %#v for %#v", e.Args, tc.args)
		}
	}
}

// ITF keeps an event's arguments in its state's "#meta": exported and read
// back, the NDJSON has them again (an empty list is none).
func TestITFArgs(t *testing.T) {
	events := []trace.Event{
		{V: 1, Instance: "t", Seq: 0, Action: trace.InitAction, State: map[string]any{"x": json.Number("0")}},
		{V: 1, Instance: "t", Seq: 1, Action: "Set", Args: []any{"r1", json.Number("3")}, State: map[string]any{"x": json.Number("3")}},
	}
	doc, err := trace.EventsToITF(events)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{"r1", json.Number("3")}, doc.States[1]["#meta"].(map[string]any)["args"]); diff != "" {
		t.Errorf("#meta args: -want +got\n%s", diff)
	}
	if _, ok := doc.States[0]["#meta"].(map[string]any)["args"]; ok {
		t.Errorf("#meta args on an event without arguments")
	}
	var buf bytes.Buffer
	if err := doc.Write(&buf); err != nil {
		t.Fatal(err)
	}
	out, itf, err := trace.AsNDJSON(&buf, "t")
	if err != nil || !itf {
		t.Fatal(itf, err)
	}
	nd, _ := io.ReadAll(out)
	if !strings.Contains(string(nd), `"action":"Set","args":["r1",3],`) {
		t.Errorf("NDJSON of the ITF:\n%s", nd)
	}
	back, err := trace.ReadITF(strings.NewReader(`{"vars":["x"],"states":[{"x":1},{"#meta":{"args":[]},"x":2,"mbt::actionTaken":"A"}]}`), "i")
	if err != nil || back[1].Args != nil {
		t.Fatalf("empty #meta args: %#v, %v", back, err)
	}
}
