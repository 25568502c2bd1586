package trace_test

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/trace"
)

const okLine = `{"v":1,"instance":"run-1","seq":0,"action":"Init","state":{"phase":"Ready"}}`

// decodeAll reads every event and returns them with the first error other
// than io.EOF.
func decodeAll(t *testing.T, d *trace.Decoder) ([]trace.Event, error) {
	t.Helper()
	var evs []trace.Event
	for {
		r, err := d.Next()
		if err == io.EOF {
			return evs, nil
		}
		if err != nil {
			return evs, err
		}
		e, err := r.Event()
		if err != nil {
			return evs, err
		}
		evs = append(evs, e)
	}
}

func TestDecoderGood(t *testing.T) {
	in := okLine + "\n" +
		"\n" + // blank lines are skipped
		`{"v":1,"instance":"r\u00e9\"x","seq":7,"action":"Step","state":{"s":{"#set":[1,2]},"r":{"a":[true,"x"]}},"part":"begin","time":"2026-11-29T15:00:00Z","detail":{"pid":4}}` + "\r\n" +
		`  {"stutter":true,"state":{},"action":"tts.chunk","seq":8,"instance":"r","v":1}  ` + "\n"
	evs, err := decodeAll(t, trace.NewDecoder(strings.NewReader(in), "t.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 3 {
		t.Fatalf("got %d events, want 3", len(evs))
	}
	if evs[1].Instance != `ré"x` || evs[1].Seq != 7 || evs[1].Part != trace.PartBegin || evs[1].Time.IsZero() {
		t.Errorf("event 2 = %+v", evs[1])
	}
	if _, ok := evs[1].State["s"].(map[string]any)["#set"]; !ok {
		t.Errorf("state.s = %#v", evs[1].State["s"])
	}
	if !evs[2].Stutter || evs[2].Action != "tts.chunk" {
		t.Errorf("event 3 = %+v", evs[2])
	}
}

// A 100 MB line, produced lazily so the test itself stays small.
type repeat struct{ n int64 }

func (r *repeat) Read(p []byte) (int, error) {
	if r.n <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > r.n {
		p = p[:r.n]
	}
	for i := range p {
		p[i] = 'a'
	}
	r.n -= int64(len(p))
	return len(p), nil
}

// Every bad input of issue 3 item 7 that the decoder sees: a one-line
// error naming file:line, the right sentinel, no panic.
func TestDecoderBadInput(t *testing.T) {
	hundredMB := func() io.Reader {
		return io.MultiReader(strings.NewReader(okLine+"\n"+`{"v":1,"instance":"`), &repeat{100 << 20}, strings.NewReader("\"}\n"))
	}
	tests := []struct {
		name     string
		in       func() io.Reader
		wantLine int
		want     error
		wantText string
	}{
		{"empty file", func() io.Reader { return strings.NewReader("") }, 1, trace.ErrEmpty, "empty"},
		{"only blank lines", func() io.Reader { return strings.NewReader("\n  \n") }, 3, trace.ErrEmpty, "empty"},
		{"malformed JSON", func() io.Reader { return strings.NewReader(okLine + "\n" + `{"v":1,"instance":"a",` + "\n") }, 2, trace.ErrSyntax, "column"},
		{"not an object", func() io.Reader { return strings.NewReader("[1,2]\n") }, 1, trace.ErrSyntax, "object"},
		{"trailing text", func() io.Reader { return strings.NewReader(okLine + " x\n") }, 1, trace.ErrSyntax, "after"},
		{"missing fields", func() io.Reader { return strings.NewReader(`{"v":1,"instance":"a"}` + "\n") }, 1, trace.ErrField, `missing "seq", "action", "state"`},
		{"wrong version", func() io.Reader { return strings.NewReader(strings.Replace(okLine, `"v":1`, `"v":2`, 1) + "\n") }, 1, trace.ErrVersion, "v is 2"},
		{"seq not a number", func() io.Reader { return strings.NewReader(strings.Replace(okLine, `"seq":0`, `"seq":"0"`, 1) + "\n") }, 1, trace.ErrField, "seq"},
		{"negative seq", func() io.Reader { return strings.NewReader(strings.Replace(okLine, `"seq":0`, `"seq":-1`, 1) + "\n") }, 1, trace.ErrField, "seq"},
		{"state not an object", func() io.Reader {
			return strings.NewReader(strings.Replace(okLine, `{"phase":"Ready"}`, `3`, 1) + "\n")
		}, 1, trace.ErrField, "state"},
		{"unknown field", func() io.Reader {
			return strings.NewReader(strings.Replace(okLine, `"v":1`, `"v":1,"stuter":true`, 1) + "\n")
		}, 1, trace.ErrField, "stuter"},
		{"repeated field", func() io.Reader {
			return strings.NewReader(strings.Replace(okLine, `"v":1`, `"v":1,"seq":3`, 1) + "\n")
		}, 1, trace.ErrField, "repeated"},
		{"repeated variable", func() io.Reader {
			return strings.NewReader(strings.Replace(okLine, `{"phase":"Ready"}`, `{"phase":"Ready","phase":"Ready"}`, 1) + "\n")
		}, 1, trace.ErrField, "repeated"},
		{"bad part", func() io.Reader {
			return strings.NewReader(strings.Replace(okLine, `"v":1`, `"v":1,"part":"middle"`, 1) + "\n")
		}, 1, trace.ErrField, "middle"},
		{"stutter in composite", func() io.Reader {
			return strings.NewReader(strings.Replace(okLine, `"v":1`, `"v":1,"part":"step","stutter":true`, 1) + "\n")
		}, 1, trace.ErrField, "composite"},
		{"bad time", func() io.Reader {
			return strings.NewReader(strings.Replace(okLine, `"v":1`, `"v":1,"time":"yesterday"`, 1) + "\n")
		}, 1, trace.ErrField, "time"},
		{"empty instance", func() io.Reader { return strings.NewReader(strings.Replace(okLine, `"run-1"`, `""`, 1) + "\n") }, 1, trace.ErrField, "instance"},
		{"binary garbage", func() io.Reader {
			return bytes.NewReader([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x01\x00"))
		}, 1, trace.ErrBinary, "binary data"},
		{"NUL bytes", func() io.Reader { return bytes.NewReader([]byte("\x00\x00\x00\n")) }, 1, trace.ErrBinary, "0x00"},
		{"invalid UTF-8 in a string", func() io.Reader { return strings.NewReader(strings.Replace(okLine, "Ready", "Re\xffdy", 1) + "\n") }, 1, trace.ErrBinary, "UTF-8"},
		{"deep nesting", func() io.Reader {
			return strings.NewReader(strings.Replace(okLine, `"Ready"`, strings.Repeat("[", 10000), 1) + "\n")
		}, 1, trace.ErrSyntax, "nested"},
		{"100 MB line", hundredMB, 2, trace.ErrLineTooLong, "1048576"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := decodeAll(t, trace.NewDecoder(tc.in(), "bad.ndjson"))
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, tc.want) {
				t.Errorf("error %q is not %v", err, tc.want)
			}
			var pe *trace.PosError
			if !errors.As(err, &pe) || pe.Pos.Line != tc.wantLine || pe.Pos.File != "bad.ndjson" {
				t.Errorf("error %q: want position bad.ndjson:%d", err, tc.wantLine)
			}
			msg := err.Error()
			if strings.ContainsAny(msg, "\n\r") || len(msg) > 300 {
				t.Errorf("error is not one short line: %q", msg)
			}
			if !strings.HasPrefix(msg, "bad.ndjson:") || !strings.Contains(msg, tc.wantText) {
				t.Errorf("error %q: want bad.ndjson:%d: ... %s", msg, tc.wantLine, tc.wantText)
			}
		})
	}
}

// The 100 MB line must be refused at the bound, not read into memory: the
// decoder stops reading soon after MaxLine bytes.
func TestDecoderLongLineStopsEarly(t *testing.T) {
	src := &repeat{100 << 20}
	d := trace.NewDecoderSize(src, "big", 4096)
	_, err := d.Next()
	if !errors.Is(err, trace.ErrLineTooLong) {
		t.Fatalf("err = %v", err)
	}
	if read := 100<<20 - src.n; read > 1<<16 {
		t.Errorf("read %d bytes of the long line; want about the 4096-byte bound", read)
	}
	// The same with the default bound, which is larger than the read
	// buffer: the line is gathered up to the bound, then refused.
	src = &repeat{100 << 20}
	d = trace.NewDecoder(src, "big")
	if _, err := d.Next(); !errors.Is(err, trace.ErrLineTooLong) {
		t.Fatalf("err = %v", err)
	}
	if read := 100<<20 - src.n; read > trace.DefaultMaxLine+1<<17 {
		t.Errorf("read %d bytes of the long line; want about the %d-byte bound", read, trace.DefaultMaxLine)
	}
}

// Lines longer than the read buffer but within the bound are read whole,
// and the bound is exact.
func TestDecoderLongLines(t *testing.T) {
	for _, n := range []int{100, 64<<10 - 1, 64 << 10, 64<<10 + 1, 200 << 10} {
		state := `{"x":"` + strings.Repeat("y", n) + `"}`
		line := `{"v":1,"instance":"i","seq":0,"action":"Init","state":` + state + `}`
		for _, max := range []int{len(line), len(line) - 1} {
			d := trace.NewDecoderSize(strings.NewReader(line+"\r\n"+okLine+"\n"), "l", max)
			r, err := d.Next()
			if max < len(line) {
				if !errors.Is(err, trace.ErrLineTooLong) {
					t.Errorf("n=%d max=%d: err = %v, want too long", n, max, err)
				}
				continue
			}
			if err != nil || string(r.State[0].Value) != state[5:len(state)-1] {
				t.Fatalf("n=%d max=%d: err = %v", n, max, err)
			}
			if r, err := d.Next(); err != nil || string(r.Instance) != "run-1" {
				t.Fatalf("n=%d: second line: %v", n, err)
			}
		}
	}
}

func TestDecoderTruncated(t *testing.T) {
	in := okLine + "\n" + `{"v":1,"instance":"run-9","seq":1,"action":"ExecutePy`
	d := trace.NewDecoder(strings.NewReader(in), "j.ndjson")
	if _, err := d.Next(); err != nil {
		t.Fatal(err)
	}
	r, err := d.Next()
	if !errors.Is(err, trace.ErrTruncated) {
		t.Fatalf("err = %v, want truncation", err)
	}
	if errors.Is(err, trace.ErrSyntax) {
		t.Error("truncation reported as malformed")
	}
	if !strings.HasPrefix(err.Error(), "j.ndjson:2: ") {
		t.Errorf("err = %q", err)
	}
	if name, ok := trace.PeekInstance(r.Line); !ok || name != "run-9" {
		t.Errorf("PeekInstance = %q, %v", name, ok)
	}
	if _, err2 := d.Next(); !errors.Is(err2, trace.ErrTruncated) {
		t.Errorf("Next after truncation = %v", err2)
	}
	// A complete last line without '\n' is still a truncation: the writer
	// did not finish the line.
	d = trace.NewDecoder(strings.NewReader(okLine), "k")
	if _, err := d.Next(); !errors.Is(err, trace.ErrTruncated) {
		t.Errorf("unterminated complete line: err = %v", err)
	}
}

func TestWriterRoundTrip(t *testing.T) {
	var buf bytes.Buffer
	w := trace.NewWriter(&buf)
	in := trace.Event{Instance: "s1", Seq: 3, Action: "Teardown", Part: trace.PartEnd,
		State: map[string]any{"conn": 1, "set": map[string]any{"#set": []any{1, 2}}}, Detail: map[string]any{"why": "x"}}
	if err := w.Emit(in); err != nil {
		t.Fatal(err)
	}
	out, err := trace.NewDecoder(&buf, "w").Decode()
	if err != nil {
		t.Fatal(err)
	}
	if out.V != trace.Version || out.Instance != "s1" || out.Seq != 3 || out.Part != trace.PartEnd ||
		out.State["conn"].(interface{ String() string }).String() != "1" || out.Detail["why"] != "x" {
		t.Errorf("round trip: %+v", out)
	}
}

func FuzzDecoder(f *testing.F) {
	for _, s := range []string{okLine + "\n", "", "\n", "{", `{"v":1}` + "\n", "\x00\xff", okLine, `{"v":1,"instance":"a\u0041","seq":1,"action":"x","state":{"a":[1,{"#map":[[1,2]]}]},"detail":{}}` + "\n",
		`{"v":1,"instance":"a","seq":1,"action":"x","args":["r1",[2],{"#set":[]}],"state":{}}` + "\n" + `{"args":[ ],"v":1,"instance":"a","seq":2,"action":"x","state":{}}` + "\n"} {
		f.Add([]byte(s))
	}
	for _, p := range corpusFiles(f) {
		f.Add(p)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := trace.NewDecoderSize(bytes.NewReader(data), "fuzz", 1<<12)
		for i := 0; i < 1<<12; i++ {
			r, err := d.Next()
			if err != nil {
				if err != io.EOF {
					if strings.ContainsAny(err.Error(), "\n") {
						t.Fatalf("multi-line error %q", err)
					}
					var pe *trace.PosError
					if !errors.As(err, &pe) {
						t.Fatalf("error without position: %v", err)
					}
				}
				return
			}
			if _, err := r.Event(); err != nil {
				t.Fatalf("line decoded by Next fails in Event: %v", err)
			}
		}
	})
}

// A last line without '\n' is truncation only if it can be the start of an
// event; garbage there is garbage, named as such.
func TestDecoderUnterminatedGarbage(t *testing.T) {
	cases := []struct {
		name string
		last string
		want error
	}{
		{"binary", "\x00\x01garbage", trace.ErrBinary},
		{"control", "{\"v\":1,\x07", trace.ErrBinary},
		{"text", "hello world", trace.ErrSyntax},
		{"invalid utf-8", "{\"v\":\xff\xfe1", trace.ErrBinary},
		{"cut multi-byte char", "{\"instance\":\"r\xc3", trace.ErrTruncated},
		{"json prefix", "  {\"v\":1,\"inst", trace.ErrTruncated},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := trace.NewDecoder(strings.NewReader(okLine+"\n"+c.last), "g.ndjson")
			if _, err := d.Next(); err != nil {
				t.Fatal(err)
			}
			_, err := d.Next()
			if !errors.Is(err, c.want) {
				t.Fatalf("err = %v, want %v", err, c.want)
			}
			if c.want != trace.ErrTruncated && errors.Is(err, trace.ErrTruncated) {
				t.Errorf("garbage reported as truncation: %v", err)
			}
			if !strings.HasPrefix(err.Error(), "g.ndjson:2: ") || strings.Contains(err.Error(), "\n") {
				t.Errorf("not a one-line file:line error: %q", err)
			}
		})
	}
}

// Raw.Off is where each line starts in the input, whatever the blank
// lines and line ends before it: reading len(Line) bytes there gives the
// line back.
func TestDecoderOffsets(t *testing.T) {
	for _, tc := range []struct {
		name, in string
	}{
		{"plain", okLine + "\n" + okLine + "\n"},
		{"crlf and blanks", "\r\n" + okLine + "\r\n\n   \n" + strings.Replace(okLine, "run-1", "run-2", 1) + "\r\n"},
		{"truncated last", okLine + "\n" + `{"v":1,"instance":"cut"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := trace.NewDecoder(strings.NewReader(tc.in), "t")
			n := 0
			for {
				r, err := d.Next()
				if err == io.EOF {
					break
				}
				if err != nil && !errors.Is(err, trace.ErrTruncated) {
					t.Fatal(err)
				}
				if got := tc.in[r.Off : r.Off+int64(len(r.Line))]; got != string(r.Line) {
					t.Errorf("line %d: input at offset %d is %q, want %q", r.Pos.Line, r.Off, got, r.Line)
				}
				n++
				if err != nil {
					break
				}
			}
			if n != 2 {
				t.Errorf("%d lines", n)
			}
		})
	}
}

// A header line says what the trace is; the decoder reads it, keeps it
// for Header, and goes on to the events (one may come first, or one per
// concatenated stream). A bad header is an input error.
func TestDecoderHeader(t *testing.T) {
	ev := `{"v":1,"instance":"r","seq":0,"action":"Init","state":{}}`
	hash := strings.Repeat("ab", 32)
	for _, c := range []struct {
		name, in string
		events   int
		spec     string
		err      error
	}{
		{"none", ev + "\n", 1, "", nil},
		{"first", `{"tracecheck":1,"spec":"program","spec_sha256":"` + hash + `","emitter":"go"}` + "\n" + ev + "\n", 1, "program", nil},
		{"spaced, members in any order", `{ "emitter" : "py", "spec" : "session", "tracecheck" : 1 }` + "\n" + ev + "\n", 1, "session", nil},
		{"one per concatenated stream", `{"tracecheck":1,"spec":"a"}` + "\n" + ev + "\n" + `{"tracecheck":1,"spec":"b"}` + "\n" + ev + "\n", 2, "b", nil},
		{"an event mentioning tracecheck is an event", `{"v":1,"instance":"r","seq":0,"action":"Init","state":{},"detail":{"tracecheck":1}}` + "\n", 1, "", nil},
		{"another format", `{"tracecheck":2,"spec":"a"}` + "\n" + ev + "\n", 0, "", trace.ErrHeader},
		{"no spec", `{"tracecheck":1}` + "\n" + ev + "\n", 0, "", trace.ErrHeader},
		{"unknown member", `{"tracecheck":1,"spec":"a","spek":"b"}` + "\n" + ev + "\n", 0, "", trace.ErrHeader},
		{"repeated member", `{"tracecheck":1,"spec":"a","spec":"b"}` + "\n" + ev + "\n", 0, "", trace.ErrHeader},
		{"bad hash", `{"tracecheck":1,"spec":"a","spec_sha256":"XYZ"}` + "\n" + ev + "\n", 0, "", trace.ErrHeader},
		{"a header alone is an empty trace", `{"tracecheck":1,"spec":"a"}` + "\n", 0, "a", trace.ErrEmpty},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := trace.NewDecoder(strings.NewReader(c.in), "t")
			n := 0
			var err error
			for {
				if _, err = d.Next(); err != nil {
					break
				}
				n++
			}
			if c.err == nil && err != io.EOF || c.err != nil && !errors.Is(err, c.err) {
				t.Fatalf("err = %v, want %v", err, c.err)
			}
			if c.err == nil && n != c.events {
				t.Fatalf("%d events, want %d", n, c.events)
			}
			h, ok := d.Header()
			if ok != (c.spec != "") || h.Spec != c.spec {
				t.Fatalf("Header = %+v, %v; want spec %q", h, ok, c.spec)
			}
		})
	}
	// The writer writes a header the decoder reads back.
	var b strings.Builder
	w := trace.NewWriter(&b)
	if err := w.WriteHeader(trace.Header{Spec: "program", SpecSHA256: hash, Emitter: "test"}); err != nil {
		t.Fatal(err)
	}
	if err := w.Emit(trace.Event{Instance: "r", Action: "Init", State: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	d := trace.NewDecoder(strings.NewReader(b.String()), "t")
	if _, err := d.Next(); err != nil {
		t.Fatal(err)
	}
	if h, ok := d.Header(); !ok || h != (trace.Header{Format: 1, Spec: "program", SpecSHA256: hash, Emitter: "test"}) {
		t.Fatalf("round trip: %+v %v\n%s", h, ok, b.String())
	}
}
