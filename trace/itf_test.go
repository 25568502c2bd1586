package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// quintDoc is an ITF document as `quint run --mbt` writes it, with every
// value kind: plain and #bigint integers (one beyond int64), strings,
// booleans, sequences, #tup, #set, #map, records, a Quint variant (a record
// with tag and value), and #unserializable.
const quintDoc = `{
  "#meta": {"format": "ITF", "source": "bank.qnt", "status": "ok", "timestamp": 1701944461444},
  "vars": ["n", "big", "s", "b", "seq", "tup", "set", "map", "rec", "opt", "fn", "mbt::actionTaken", "mbt::nondetPicks"],
  "states": [
    {"#meta": {"index": 0}, "n": {"#bigint": "0"}, "big": {"#bigint": "-123456789012345678901234567890"},
     "s": "a", "b": false, "seq": [], "tup": {"#tup": [1, "x"]}, "set": {"#set": []},
     "map": {"#map": []}, "rec": {"f": 1, "g": {"#set": [true]}}, "opt": {"tag": "None", "value": {"#tup": []}},
     "fn": {"#unserializable": "LAMBDA x: x + 1"},
     "mbt::actionTaken": "init", "mbt::nondetPicks": {"v": {"tag": "None", "value": {"#tup": []}}}},
    {"#meta": {"index": 1}, "n": 7, "big": {"#bigint": "99999999999999999999999"},
     "s": "b", "b": true, "seq": [[1, 2], {"#set": [3]}], "tup": {"#tup": [2, "y"]}, "set": {"#set": [{"#bigint": "1"}, 2]},
     "map": {"#map": [[{"#tup": [1, 2]}, {"#set": []}], ["k", {"#map": [[1, 2]]}]]}, "rec": {"f": 2, "g": {"#set": []}},
     "opt": {"tag": "Some", "value": {"#bigint": "40"}}, "fn": {"#unserializable": "LAMBDA x: x + 2"},
     "mbt::actionTaken": "Deposit", "mbt::nondetPicks": {"v": {"tag": "Some", "value": {"#bigint": "40"}}}}
  ]
}`

func TestReadITFQuint(t *testing.T) {
	events, err := ReadITF(strings.NewReader(quintDoc), "bank-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(events) != 2 {
		t.Fatalf("got %d events, want 2", len(events))
	}
	e0, e1 := events[0], events[1]
	for _, c := range []struct {
		name      string
		got, want any
	}{
		{"instance", e0.Instance, "bank-1"},
		{"e0 action", e0.Action, InitAction},
		{"e0 seq", e0.Seq, uint64(0)},
		{"e0 quint init name", e0.Detail[ITFActionTaken], "init"},
		{"e1 action", e1.Action, "Deposit"},
		{"e1 seq", e1.Seq, uint64(1)},
		{"e1 n", e1.State["n"], json.Number("7")},
		{"e0 n", e0.State["n"], map[string]any{"#bigint": "0"}},
		{"e1 big", e1.State["big"], map[string]any{"#bigint": "99999999999999999999999"}},
		{"e0 fn", e0.State["fn"], map[string]any{"#unserializable": "LAMBDA x: x + 1"}},
		{"e1 picks", e1.Detail[ITFNondetPicks], map[string]any{"v": map[string]any{"tag": "Some", "value": map[string]any{"#bigint": "40"}}}},
		{"e1 vars", len(e1.State), 11},
	} {
		if diff := cmp.Diff(c.want, c.got); diff != "" {
			t.Errorf("%s: -want +got\n%s", c.name, diff)
		}
	}
	if _, ok := e1.State[ITFActionTaken]; ok {
		t.Errorf("mbt::actionTaken kept as a state variable")
	}
}

func TestReadITFErrors(t *testing.T) {
	state := func(body string) string { return `{"vars":["x"],"states":[` + body + `]}` }
	for _, c := range []struct {
		name string
		doc  string
		want error
	}{
		{"empty", ``, ErrITF},
		{"array", `[1]`, ErrITF},
		{"null", `null`, ErrITF},
		{"no states", `{"vars":["x"]}`, ErrITF},
		{"trailing data", state(`{"x":1}`) + `{}`, ErrITF},
		{"state not object", state(`3`), ErrITF},
		{"null state", state(`null`), ErrITF},
		{"meta not object", state(`{"#meta":1,"x":1}`), ErrITF},
		{"loop out of range", `{"vars":[],"states":[{}],"loop":3}`, ErrITF},
		{"fraction", state(`{"x":1.5}`), ErrITFValue},
		{"null value", state(`{"x":null}`), ErrITFValue},
		{"bigint not digits", state(`{"x":{"#bigint":"12a"}}`), ErrITFValue},
		{"bigint plus", state(`{"x":{"#bigint":"+1"}}`), ErrITFValue},
		{"bigint number", state(`{"x":{"#bigint":12}}`), ErrITFValue},
		{"bigint empty", state(`{"x":{"#bigint":"-"}}`), ErrITFValue},
		{"unknown hash key", state(`{"x":{"#bag":[]}}`), ErrITFValue},
		{"hash key beside others", state(`{"x":{"#set":[],"y":1}}`), ErrITFValue},
		{"set not array", state(`{"x":{"#set":1}}`), ErrITFValue},
		{"tup bad element", state(`{"x":{"#tup":[null]}}`), ErrITFValue},
		{"map entry not pair", state(`{"x":{"#map":[[1]]}}`), ErrITFValue},
		{"map not array", state(`{"x":{"#map":{}}}`), ErrITFValue},
		{"unserializable not string", state(`{"x":{"#unserializable":1}}`), ErrITFValue},
		{"nested record bad", state(`{"x":{"r":{"s":2.5}}}`), ErrITFValue},
		{"no action", state(`{"x":1},{"x":2}`), ErrITFNoAction},
		{"action not string", state(`{"x":1},{"x":2,"mbt::actionTaken":3}`), ErrITF},
		{"seq backwards", state(`{"#meta":{"seq":5},"x":1},{"#meta":{"seq":5},"x":2,"mbt::actionTaken":"A"}`), ErrITF},
		{"seq negative", state(`{"#meta":{"seq":-1},"x":1}`), ErrITF},
		{"bad time", state(`{"#meta":{"time":"yesterday"},"x":1}`), ErrITF},
		{"bad detail", state(`{"#meta":{"detail":[]},"x":1}`), ErrITF},
		{"args not an array", state(`{"#meta":{"args":{"r":1}},"x":1}`), ErrITF},
		{"args with a bad value", state(`{"#meta":{"args":["r1",1.5]},"x":1}`), ErrITFValue},
	} {
		t.Run(c.name, func(t *testing.T) {
			events, err := ReadITF(strings.NewReader(c.doc), "i")
			if !errors.Is(err, c.want) {
				t.Fatalf("got events %v, error %v; want an error wrapping %q", events, err, c.want)
			}
		})
	}
}

func TestReadITFInstance(t *testing.T) {
	doc := `{"vars":["x"],"states":[{"x":1}]}`
	if _, err := ReadITF(strings.NewReader(doc), ""); !errors.Is(err, ErrITF) {
		t.Errorf("no instance anywhere: got %v, want ErrITF", err)
	}
	own := `{"#meta":{"instance":"own"},"vars":["x"],"states":[{"x":1}]}`
	events, err := ReadITF(strings.NewReader(own), "given")
	if err != nil || events[0].Instance != "own" {
		t.Errorf("got %v, %v; want the document's own instance", events, err)
	}
}

// sampleEvents has every event field and every value kind, arguments
// included.
func sampleEvents() []Event {
	at := time.Date(2026, 11, 29, 15, 0, 0, 123456789, time.UTC)
	return []Event{
		{V: 1, Instance: "run-7", Seq: 0, Action: InitAction, State: map[string]any{
			"phase": "Ready", "verified": false, "n": json.Number("42"), "neg": json.Number("-3"),
			"big": map[string]any{"#bigint": "-99999999999999999999"},
			"tup": map[string]any{"#tup": []any{json.Number("1"), "a"}},
			"set": map[string]any{"#set": []any{true, false}},
			"map": map[string]any{"#map": []any{[]any{"k", []any{json.Number("1")}}}},
			"rec": map[string]any{"f": map[string]any{"g": []any{}}},
			"fn":  map[string]any{"#unserializable": "LAMBDA x: x"},
		}},
		{V: 1, Instance: "run-7", Seq: 3, Action: "ExecutePython", State: map[string]any{"phase": "Running"},
			Time: at, Detail: map[string]any{"pid": json.Number("4242"), "err": "", "mbt::nondetPicks": map[string]any{}}},
		{V: 1, Instance: "run-7", Seq: 4, Action: "fsync", Stutter: true, State: map[string]any{}},
		{V: 1, Instance: "run-7", Seq: 9, Action: "Teardown", Part: PartBegin, State: map[string]any{"conn": json.Number("1")}},
		{V: 1, Instance: "run-7", Seq: 10, Action: "Teardown", Part: PartEnd, State: map[string]any{"vad": json.Number("2")}},
		{V: 1, Instance: "run-7", Seq: 11, Action: "RMPrepare", Args: []any{"r1", json.Number("2"), map[string]any{"#set": []any{true}},
			[]any{"a", map[string]any{"#bigint": "-99999999999999999999"}}, map[string]any{"f": map[string]any{"#tup": []any{}}}},
			Part: PartBegin, State: map[string]any{}},
	}
}

// ndjsonRoundTrip writes events as NDJSON with Writer and reads them back
// with numbers kept exact.
func ndjsonRoundTrip(t *testing.T, events []Event) []Event {
	t.Helper()
	var buf bytes.Buffer
	w := NewWriter(&buf)
	for _, e := range events {
		if err := w.Emit(e); err != nil {
			t.Fatal(err)
		}
	}
	dec := json.NewDecoder(&buf)
	dec.UseNumber()
	var out []Event
	for dec.More() {
		var e Event
		if err := dec.Decode(&e); err != nil {
			t.Fatal(err)
		}
		out = append(out, e)
	}
	return out
}

func TestRoundTripNDJSONToITF(t *testing.T) {
	events := ndjsonRoundTrip(t, sampleEvents())
	var buf bytes.Buffer
	if err := WriteITF(&buf, events); err != nil {
		t.Fatal(err)
	}
	if !IsITF(bufio.NewReader(bytes.NewReader(buf.Bytes()))) {
		t.Errorf("IsITF is false on WriteITF's output")
	}
	back, err := ReadITF(&buf, "ignored: the document names its instance")
	if err != nil {
		t.Fatalf("%v\n%s", err, buf.String())
	}
	back = ndjsonRoundTrip(t, back)
	if diff := cmp.Diff(events, back); diff != "" {
		t.Errorf("NDJSON -> ITF -> NDJSON changed the events: -want +got\n%s", diff)
	}
}

func TestRoundTripITFToNDJSON(t *testing.T) {
	doc, err := ParseITF(strings.NewReader(quintDoc))
	if err != nil {
		t.Fatal(err)
	}
	events, err := doc.Events("bank-1")
	if err != nil {
		t.Fatal(err)
	}
	again, err := EventsToITF(ndjsonRoundTrip(t, events))
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := again.Write(&buf); err != nil {
		t.Fatal(err)
	}
	back, err := ParseITF(&buf) // what a reader of the written file sees
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(doc.Vars, back.Vars, sortStrings); diff != "" {
		t.Errorf("vars: -want +got\n%s", diff)
	}
	if len(back.States) != len(doc.States) {
		t.Fatalf("got %d states, want %d", len(back.States), len(doc.States))
	}
	for i := range doc.States {
		want, got := without(doc.States[i], "#meta"), without(back.States[i], "#meta")
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("state %d: -want +got\n%s", i, diff)
		}
		if idx := back.States[i]["#meta"].(map[string]any)["index"]; idx != json.Number(doc.States[i]["#meta"].(map[string]any)["index"].(json.Number)) {
			t.Errorf("state %d: #meta index %v", i, idx)
		}
	}
}

var sortStrings = cmp.Transformer("sort", func(s []string) map[string]bool {
	m := map[string]bool{}
	for _, x := range s {
		m[x] = true
	}
	return m
})

func without(m map[string]any, key string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if k != key {
			out[k] = v
		}
	}
	return out
}

func TestEventsToITFBigPlainInts(t *testing.T) {
	for _, c := range []struct {
		in   any
		want any
	}{
		{json.Number("9007199254740991"), json.Number("9007199254740991")},
		{json.Number("9007199254740992"), map[string]any{"#bigint": "9007199254740992"}},
		{json.Number("-9007199254740992"), map[string]any{"#bigint": "-9007199254740992"}},
		{json.Number("123456789012345678901234567890"), map[string]any{"#bigint": "123456789012345678901234567890"}},
		{int64(1) << 60, map[string]any{"#bigint": "1152921504606846976"}},
		{[]any{json.Number("18446744073709551615")}, []any{map[string]any{"#bigint": "18446744073709551615"}}},
		{json.Number("7"), json.Number("7")},
	} {
		doc, err := EventsToITF([]Event{{Instance: "i", Action: InitAction, State: map[string]any{"x": c.in}}})
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(c.want, doc.States[0]["x"]); diff != "" {
			t.Errorf("%v: -want +got\n%s", c.in, diff)
		}
	}
}

func TestEventsToITFErrors(t *testing.T) {
	two := []Event{{Instance: "a", Action: InitAction}, {Instance: "b", Action: InitAction}}
	if _, err := EventsToITF(two); !errors.Is(err, ErrITFInstances) {
		t.Errorf("two instances: got %v", err)
	}
	reserved := []Event{{Instance: "a", Action: InitAction, State: map[string]any{ITFActionTaken: "x"}}}
	if _, err := EventsToITF(reserved); !errors.Is(err, ErrITF) {
		t.Errorf("reserved variable: got %v", err)
	}
}

func TestIsITF(t *testing.T) {
	for _, c := range []struct {
		in   string
		want bool
	}{
		{`{"#meta":{"a":[1,2]},"vars":[],"states":[]}`, true},
		{"  \n{\"states\": []}", true},
		{`{"vars":["x"],"states":[]}`, true},
		{`{"v":1,"instance":"r","seq":0,"action":"Init","state":{}}` + "\n", false},
		{`{"unknown":{"states":1},"states":[]}`, true},
		{``, false},
		{`[1,2]`, false},
		{"\x00\x01binary", false},
		{`{"state":{"states":[]}}`, false},
	} {
		if got := IsITF(bufio.NewReader(strings.NewReader(c.in))); got != c.want {
			t.Errorf("IsITF(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestSplitInstances(t *testing.T) {
	in := []Event{{Instance: "b", Seq: 1}, {Instance: "a", Seq: 1}, {Instance: "b", Seq: 2}}
	names, by := SplitInstances(in)
	if diff := cmp.Diff([]string{"b", "a"}, names); diff != "" {
		t.Errorf("names: %s", diff)
	}
	if len(by["b"]) != 2 || by["b"][1].Seq != 2 || len(by["a"]) != 1 {
		t.Errorf("groups: %v", by)
	}
}

func TestAsNDJSON(t *testing.T) {
	ndjson := `{"v":1,"instance":"r","seq":0,"action":"Init","state":{}}` + "\n"
	out, itf, err := AsNDJSON(strings.NewReader(ndjson), "x")
	if err != nil || itf {
		t.Fatalf("NDJSON input: itf %v, err %v", itf, err)
	}
	if b, _ := io.ReadAll(out); string(b) != ndjson {
		t.Errorf("NDJSON input changed: %q", b)
	}

	doc, err := EventsToITF(sampleEvents())
	if err != nil {
		t.Fatal(err)
	}
	doc.Meta[ITFMetaTruncated] = "run.ndjson:6"
	var buf bytes.Buffer
	if err := doc.Write(&buf); err != nil {
		t.Fatal(err)
	}
	out, itf, err = AsNDJSON(&buf, "x")
	if err != nil || !itf {
		t.Fatalf("ITF input: itf %v, err %v", itf, err)
	}
	dec := NewDecoder(out, "t.itf.json")
	var got []Event
	for {
		e, err := dec.Decode()
		if err == io.EOF {
			t.Fatal("no truncation reported for a document recorded as truncated")
		}
		if errors.Is(err, ErrTruncated) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, e)
	}
	if diff := cmp.Diff(ndjsonRoundTrip(t, sampleEvents()), got); diff != "" {
		t.Errorf("events: -want +got\n%s", diff)
	}

	if _, _, err := AsNDJSON(strings.NewReader(`{"states":[{"x":null}]}`), "x"); !errors.Is(err, ErrITFValue) {
		t.Errorf("bad ITF value: got %v", err)
	}
}

// onceReader returns its data on the first Read and fails the test if read
// again: a live pipe whose writer has not written more yet.
type onceReader struct {
	t    *testing.T
	data string
	read bool
}

func (r *onceReader) Read(p []byte) (int, error) {
	if r.read {
		r.t.Fatalf("IsITF read beyond %q: it would block on a live pipe", r.data)
	}
	r.read = true
	return copy(p, r.data), nil
}

func TestIsITFDoesNotReadAhead(t *testing.T) {
	for _, c := range []struct {
		data string
		want bool
	}{
		{`{"v":1,"instance":"r"`, false},
		{`{"#meta":{"format":"ITF"`, true},
		{`{"states":[`, true},
		{"\n  {\"seq\"", false},
	} {
		if got := IsITF(bufio.NewReader(&onceReader{t: t, data: c.data})); got != c.want {
			t.Errorf("IsITF(%q) = %v, want %v", c.data, got, c.want)
		}
	}
}

func TestAsNDJSONStream(t *testing.T) {
	stream := `{"vars":["x"],"states":[{"x":1}]}` + "\n" +
		`{"#meta":{"instance":"own"},"vars":["x"],"states":[{"x":2}]}` +
		`{"vars":["x"],"states":[{"x":3}]}`
	out, itf, err := AsNDJSON(strings.NewReader(stream), "f")
	if err != nil || !itf {
		t.Fatalf("itf %v, %v", itf, err)
	}
	dec := NewDecoder(out, "s")
	var got []string
	for {
		e, err := dec.Decode()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprint(e.Instance, "=", e.State["x"]))
	}
	if diff := cmp.Diff([]string{"f=1", "own=2", "f#2=3"}, got); diff != "" {
		t.Errorf("-want +got\n%s", diff)
	}
	// An error in a later document comes when the NDJSON is read that far.
	out, _, err = AsNDJSON(strings.NewReader(`{"states":[{}]} {"states":`), "f")
	if err != nil {
		t.Fatalf("first document: %v", err)
	}
	if b, err := io.ReadAll(out); !errors.Is(err, ErrITF) || !strings.Contains(string(b), `"instance":"f"`) {
		t.Errorf("cut-off second document: read %q, %v", b, err)
	}
}

// An ITF document larger than the bound is an error wrapping ErrTooLarge
// that names the bound, and the reader stops reading there; a document
// of exactly the bound is read; the bound applies to each document of a
// stream, not to the stream.
func TestITFTooLarge(t *testing.T) {
	doc := `{"vars":["x"],"states":[{"x":1},{"x":2,"mbt::actionTaken":"Step"}]}`
	n := int64(len(doc))
	if _, err := ParseITFSize(strings.NewReader(doc), n); err != nil {
		t.Errorf("a document of exactly the bound: %v", err)
	}
	_, err := ParseITFSize(strings.NewReader(doc), n-1)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), fmt.Sprintf("larger than the bound of %d bytes", n-1)) {
		t.Errorf("a byte over the bound: %v", err)
	}
	if _, err := ReadITF(strings.NewReader(doc), "x"); err != nil {
		t.Errorf("default bound: %v", err)
	}

	// An endless document: reading stops at the bound.
	endless := &countingReader{r: io.MultiReader(strings.NewReader(`{"states":[`), &spaces{})}
	if _, err := ParseITFSize(endless, 1<<20); !errors.Is(err, ErrTooLarge) {
		t.Errorf("endless document: %v", err)
	}
	if endless.n > 1<<20+1 {
		t.Errorf("read %d bytes for a bound of %d", endless.n, 1<<20)
	}
	endless = &countingReader{r: io.MultiReader(strings.NewReader(`{"states":[`), &spaces{})}
	if _, _, err := AsNDJSONSize(endless, "x", 1<<20); !errors.Is(err, ErrTooLarge) || errors.Is(err, ErrITF) {
		t.Errorf("AsNDJSON, endless first document: %v", err)
	}
	if endless.n > 1<<20+64<<10 { // the bound, and the sniffing buffer
		t.Errorf("AsNDJSON read %d bytes for a bound of %d", endless.n, 1<<20)
	}

	for _, tc := range []struct {
		name    string
		stream  string
		max     int64
		atOpen  bool // the error comes from AsNDJSON, else from reading
		wantErr bool
	}{
		{"each document fits, the stream does not", doc + "\n" + doc + "\n" + doc, n, false, false},
		{"first too large", doc + doc, n - 1, true, true},
		{"second too large", doc + strings.Replace(doc, `"x":2`, `"x":22`, 1), n, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, itf, err := AsNDJSONSize(strings.NewReader(tc.stream), "x", tc.max)
			if tc.atOpen {
				if !errors.Is(err, ErrTooLarge) || itf != true {
					t.Fatalf("AsNDJSONSize: itf %v, %v", itf, err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			_, err = io.ReadAll(out)
			if tc.wantErr != errors.Is(err, ErrTooLarge) || (!tc.wantErr && err != nil) {
				t.Errorf("reading: %v", err)
			}
		})
	}
}

// MaxReader passes through up to max bytes and fails after, but not at an
// input of exactly max bytes.
func TestMaxReader(t *testing.T) {
	for _, tc := range []struct {
		in      string
		max     int64
		wantErr bool
	}{
		{"", 0, false},
		{"abc", 3, false},
		{"abcd", 3, true},
		{"abc", 10, false},
	} {
		got, err := io.ReadAll(MaxReader(strings.NewReader(tc.in), tc.max, "the input"))
		if tc.wantErr {
			if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "the input is larger than the bound of") || string(got) != tc.in[:tc.max] {
				t.Errorf("%q max %d: %q, %v", tc.in, tc.max, got, err)
			}
		} else if err != nil || string(got) != tc.in {
			t.Errorf("%q max %d: %q, %v", tc.in, tc.max, got, err)
		}
	}
}

// spaces is endless whitespace.
type spaces struct{}

func (spaces) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = ' '
	}
	return len(p), nil
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// ITFPos names, for each NDJSON line AsNDJSON writes, the document and
// the line of the input where the state's object starts, whatever the
// layout: states on one line or spread over several, blank lines and
// several documents on a line, strings that hold brackets, quotes and
// newlines, and "states" spelt as encoding/json reads it.
func TestITFPos(t *testing.T) {
	at := func(doc, line int) ITFPos { return ITFPos{Doc: doc, Line: line} }
	for _, c := range []struct {
		name  string
		input string
		want  []ITFPos // line n of the NDJSON at want[n-1]
	}{
		{"one line", `{"states":[{"x":1},{"x":2,"mbt::actionTaken":"A"}]}`, []ITFPos{at(1, 1), at(1, 1)}},
		{"indented", "{\n  \"vars\": [\"x\"],\n  \"states\": [\n    {\n      \"x\": 1\n    },\n    {\n      \"x\": 2,\n      \"mbt::actionTaken\": \"A\"\n    }\n  ]\n}\n",
			[]ITFPos{at(1, 4), at(1, 7)}},
		{"blank lines, documents after one another", "\n\n" + `{"states":[{"x":1}]}` + "\n\n\n" + `{"states":[` + "\n" + `{"x":2}]} {"states":[{"x":3},` + "\n\n" + `{"x":4,"mbt::actionTaken":"A"}]}` + "\n",
			[]ITFPos{at(1, 3), at(2, 7), at(3, 7), at(3, 9)}},
		{"strings with brackets, quotes and escaped newlines", `{"#meta":{"note":"[{\"states\": [1]}\n"},"vars":["x"],"states":[` + "\n" +
			`{"x":"a]}\\\"[{"},` + "\n" + `{"x":{"#set":[[1],{"k":"}"}]},"mbt::actionTaken":"A"}]}`, []ITFPos{at(1, 2), at(1, 3)}},
		{"states in another case, read as encoding/json does", `{"states":[{"x":1}],` + "\n" + `"States":[` + "\n" + `{"x":2}]}`, []ITFPos{at(1, 3)}},
		{"escaped name", "{\"st\\u0061tes\":[\n{\"x\":1}]}", []ITFPos{at(1, 2)}},
		{"a document longer than the read buffer, escapes and brackets in a string across its chunks",
			`{"states":[{"x":"` + strings.Repeat(`\"}]{[\\`, 30000) + `"},` + "\n" + `{"x":2,"mbt::actionTaken":"A"}]}` + "\n" + `{"states":[{"x":3}]}`,
			[]ITFPos{at(1, 1), at(1, 2), at(2, 3)}},
		{"truncated document", "{\"#meta\":{\"truncated\":\"r.ndjson:3\"},\n\"states\":[\n{\"x\":1}]}", []ITFPos{at(1, 3), at(1, 1)}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, itf, err := AsNDJSON(strings.NewReader(c.input), "i")
			if err != nil || !itf {
				t.Fatalf("itf %v, %v", itf, err)
			}
			src := out.(ITFSource)
			b, err := io.ReadAll(out)
			if err != nil {
				t.Fatal(err)
			}
			lines := strings.SplitAfter(string(b), "\n")
			if lines[len(lines)-1] == "" {
				lines = lines[:len(lines)-1]
			}
			if len(lines) != len(c.want) {
				t.Fatalf("%d NDJSON lines, want %d:\n%s", len(lines), len(c.want), b)
			}
			var got []ITFPos
			for n := 1; n <= len(lines); n++ {
				p, ok := src.ITFPos(n)
				if !ok {
					t.Errorf("line %d: no position", n)
				}
				got = append(got, p)
			}
			if diff := cmp.Diff(c.want, got); diff != "" {
				t.Errorf("positions -want +got\n%s", diff)
			}
			for _, n := range []int{0, len(lines) + 1} {
				if p, ok := src.ITFPos(n); ok {
					t.Errorf("line %d: %+v, want none", n, p)
				}
			}
		})
	}
}

// The positions of the last itfPosKept lines are kept, no more; and when
// a later document cannot be read, the line after the last names where
// it starts.
func TestITFPosKept(t *testing.T) {
	var doc strings.Builder
	doc.WriteString(`{"states":[` + "\n")
	const n = itfPosKept + 100
	for i := range n {
		if i > 0 {
			doc.WriteString(",\n")
		}
		fmt.Fprintf(&doc, `{"x":%d,"mbt::actionTaken":"A"}`, i)
	}
	doc.WriteString("]}\n\n" + `{"states": 7}`)
	out, _, err := AsNDJSON(strings.NewReader(doc.String()), "i")
	if err != nil {
		t.Fatal(err)
	}
	src := out.(ITFSource)
	if _, err := io.ReadAll(out); !errors.Is(err, ErrITF) {
		t.Fatalf("the malformed second document: %v", err)
	}
	for _, c := range []struct {
		line int
		want ITFPos
		ok   bool
	}{
		{1, ITFPos{}, false},
		{100, ITFPos{}, false},
		{101, ITFPos{1, 102}, true},
		{n, ITFPos{1, n + 1}, true},
		{n + 1, ITFPos{2, n + 3}, true}, // the document that could not be read
		{n + 2, ITFPos{}, false},
	} {
		if p, ok := src.ITFPos(c.line); p != c.want || ok != c.ok {
			t.Errorf("ITFPos(%d) = %+v, %v; want %+v, %v", c.line, p, ok, c.want, c.ok)
		}
	}
}

// Peek looks ahead without reading: what is read afterwards is what it
// saw, and it says where the NDJSON ends.
func TestITFPeek(t *testing.T) {
	out, _, err := AsNDJSON(strings.NewReader(`{"states":[{"x":1},{"x":2,"mbt::actionTaken":"A"}]} {"states":[{"x":3}]}`), "i")
	if err != nil {
		t.Fatal(err)
	}
	src := out.(ITFSource)
	head, err := src.Peek(10)
	if string(head) != `{"v":1,"in` || err != nil {
		t.Errorf("Peek(10) = %q, %v", head, err)
	}
	all, err := src.Peek(1 << 20)
	if err != io.EOF || strings.Count(string(all), "\n") != 3 {
		t.Errorf("Peek beyond the end = %q, %v; want the 3 lines and io.EOF", all, err)
	}
	want := string(all)
	b, err := io.ReadAll(out)
	if string(b) != want || err != nil {
		t.Errorf("read after peeking: %q, %v; want %q", b, err, want)
	}
}

// A trace whose first event is a stutter event comes back from ITF as it
// was, not as an Init.
func TestITFStutterFirst(t *testing.T) {
	events := []Event{
		{V: Version, Instance: "r", Seq: 0, Action: "boot", Stutter: true, State: map[string]any{}},
		{V: Version, Instance: "r", Seq: 1, Action: InitAction, State: map[string]any{"x": json.Number("1")}},
	}
	var buf bytes.Buffer
	if err := WriteITF(&buf, events); err != nil {
		t.Fatal(err)
	}
	back, err := ReadITF(&buf, "")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(events, back); diff != "" {
		t.Errorf("events -want +got\n%s", diff)
	}
}

// A later document that cannot be read is an error from Read, and the
// line after the last names where that document starts.
func TestITFStreamErrors(t *testing.T) {
	first := `{"states":[{"x":1}]}` + "\n\n"
	for _, c := range []struct {
		name, next string
		max        int64
		want       error
		text       string
	}{
		{"not an object", `[{"states":[]}]`, 0, ErrITF, "document 2: malformed ITF document: want a JSON object, not '['"},
		{"cut off", `{"states":[{"x":`, 0, ErrITF, "document 2: malformed ITF document: unexpected EOF"},
		{"malformed", `{"states":[{"x" 1}]}`, 0, ErrITF, "document 2: malformed ITF document: invalid character"},
		{"white space beyond the bound", strings.Repeat(" ", 64) + `{"states":[]}`, 32, ErrTooLarge, "document 2: input too large"},
		{"too large", `{"states":[{"x":"` + strings.Repeat("y", 64) + `"}]}`, 32, ErrTooLarge, "document 2: input too large"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, _, err := AsNDJSONSize(strings.NewReader(first+c.next), "i", max(c.max, 64))
			if err != nil {
				t.Fatal(err)
			}
			if c.max > 0 { // the first document fits 64 bytes; the bound is for the next
				out.(*itfStream).max = c.max
			}
			src := out.(ITFSource)
			b, err := io.ReadAll(out)
			if !errors.Is(err, c.want) || !strings.HasPrefix(err.Error(), c.text) || strings.Count(string(b), "\n") != 1 {
				t.Errorf("read %q, %v; want one line, then %q (%v)", b, err, c.text, c.want)
			}
			if p, ok := src.ITFPos(2); !ok || p != (ITFPos{Doc: 2, Line: 3}) {
				t.Errorf("ITFPos(2) = %+v, %v; want document 2 at line 3", p, ok)
			}
		})
	}
}
