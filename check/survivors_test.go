package check

import (
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/model/program"
	"github.com/tracecheck/tracecheck/trace"
)

// These tests kill operator mutants of shard 1/10 that survived the
// rest of the suite (docs/mutation/check.md); each names the line.

// clip.go:39: a quoted value of exactly maxShown+2 bytes (maxShown
// between the quotes) is clipped as an id; it must not index past the end.
func TestClipValueAtBound(t *testing.T) {
	s := `"` + strings.Repeat("x", maxShown) + `"`
	got := clipValue(s)
	if !strings.HasPrefix(got, s[:maxShown-1]) || !strings.HasSuffix(got, " more bytes)") || len(got) > maxShown+30 {
		t.Fatalf("clipValue(%d-byte quoted value) = %q, want it clipped to about %d bytes", len(s), got, maxShown)
	}
	// One byte more goes the quoted way: quotes kept, count between them.
	s = `"` + strings.Repeat("x", maxShown+1) + `"`
	if got, want := clipValue(s), `"`+strings.Repeat("x", maxShown)+`..." (1 more bytes)`; got != want {
		t.Fatalf("clipValue(%d-byte quoted value) = %q, want %q", len(s), got, want)
	}
}

// clip.go:44: a value is not cut between a backslash and the character
// it escapes.
func TestClipValueNotInsideEscape(t *testing.T) {
	in := strings.Repeat("x", maxShown-1) + `\"` + strings.Repeat("y", 50)
	got := clipValue(`"` + in + `"`)
	want := `"` + strings.Repeat("x", maxShown-1) + `..." (52 more bytes)`
	if got != want {
		t.Fatalf("clipValue cut inside an escape:\n got %q\nwant %q", got, want)
	}
}

// clip.go:98: a line cut short inside a number or a string (not JSON any
// more) is still clipped, without reading past its end.
func TestClipEventTruncatedLine(t *testing.T) {
	long := strings.Repeat("z", 300)
	for _, tc := range []struct{ line, want string }{
		{`{"a":"` + long + `","b":12`, `{"a":"` + strings.Repeat("z", maxShown) + `..." (100 more bytes),"b":12`},
		{`{"b":12,"a":"` + long, `{"b":12,"a":` + clipID(`"`+long)},
	} {
		if got := clipEvent(tc.line); got != tc.want {
			t.Errorf("clipEvent(%.30q...) =\n %q\nwant\n %q", tc.line, got, tc.want)
		}
	}
}

// clip.go:110: a member whose value is an array or an object ends where
// its brackets close; the members after it are clipped one by one.
func TestClipEventNestedMember(t *testing.T) {
	long := strings.Repeat("w", 300)
	line := `{"a":[1,[2]],"o":{"k":{"x":1}},"b":"` + long + `"}`
	got := clipEvent(line)
	want := `{"a":[1,[2]],"o":{"k":{"x":1}},"b":"` + strings.Repeat("w", maxShown) + `..." (100 more bytes)}`
	if got != want {
		t.Fatalf("clipEvent =\n %q\nwant\n %q", got, want)
	}
}

// coverage.go:131: the "not required" section appears only when some
// transitions are not required.
func TestCoverageTextWithoutNotRequired(t *testing.T) {
	c := &Coverage{Model: "m", Total: 1, Exercised: 1, Required: 1, RequiredExercised: 1,
		Edges: []Transition{{From: "a", Action: "Go", To: "b", Count: 1}}}
	var b strings.Builder
	if err := c.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "not required") {
		t.Fatalf("coverage text lists a not-required section with none:\n%s", b.String())
	}
	c.NotRequired = []NotRequired{{Transition: Transition{From: "b", Action: "Stop", To: "b"}}}
	b.Reset()
	if err := c.WriteText(&b); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "not required (") {
		t.Fatalf("coverage text has no not-required section:\n%s", b.String())
	}
}

// eofAtEnd is a ReaderAt that returns io.EOF with a full read that ends
// at the end of its input, as io.ReaderAt allows.
type eofAtEnd struct{ s string }

func (r eofAtEnd) ReadAt(p []byte, off int64) (int, error) {
	if off >= int64(len(r.s)) {
		return 0, io.EOF
	}
	n := copy(p, r.s[off:])
	if off+int64(n) == int64(len(r.s)) {
		return n, io.EOF
	}
	return n, nil
}

// divergence.go:472: reading an event line again succeeds on a full read,
// even with io.EOF, and says the line cannot be read on a short one.
func TestRereadEvent(t *testing.T) {
	line := `{"v":1,"instance":"a","seq":1,"action":"Init","state":{}}`
	c := &Checker[int]{name: "t"}
	c.src = eofAtEnd{"xx" + line}
	c.srcBase = 2
	if got := c.reread("a", 1, 0, len(line)); got != line {
		t.Fatalf("reread of a full line at the end of the input = %q, want the line", got)
	}
	c.src = strings.NewReader("xx" + line[:20])
	if got := c.reread("a", 1, 0, len(line)); !strings.Contains(got, "cannot be read again") {
		t.Fatalf("reread of a truncated input = %q, want that it cannot be read again", got)
	}
}

// insttable.go:105: the table shrinks once it is less than an eighth
// full, not when it is exactly an eighth full.
func TestInstTableShrinkBound(t *testing.T) {
	tab := newInstTable[int]()
	var ins []*instance[int]
	for i := range 1000 {
		name := fmt.Sprint("i", i)
		in, h, slot := tab.find([]byte(name))
		if in != nil {
			t.Fatalf("%s found before insert", name)
		}
		in = &instance[int]{name: name}
		tab.insert(h, slot, in)
		ins = append(ins, in)
	}
	if len(tab.slots) != 2048 {
		t.Fatalf("%d slots for 1000 entries, want 2048", len(tab.slots))
	}
	for len(ins) > 256 {
		tab.delete(ins[len(ins)-1])
		ins = ins[:len(ins)-1]
	}
	if len(tab.slots) != 2048 {
		t.Fatalf("%d slots for 256 entries (an eighth of 2048), want 2048", len(tab.slots))
	}
	tab.delete(ins[len(ins)-1])
	ins = ins[:len(ins)-1]
	if len(tab.slots) != 1024 {
		t.Fatalf("%d slots for 255 entries, want 1024", len(tab.slots))
	}
	for _, in := range ins {
		if got, _, _ := tab.find([]byte(in.name)); got != in {
			t.Fatalf("%s not found after shrinking", in.name)
		}
	}
}

// report.go:131: transitions sort by source, then action, then target.
func TestTransitionOrder(t *testing.T) {
	a := Transition{From: "s", Action: "A", To: "2"}
	b := Transition{From: "s", Action: "B", To: "1"}
	if !a.less(b) || b.less(a) {
		t.Fatalf("%v.less(%v) = %v, %v.less(%v) = %v; want the action to decide", a, b, a.less(b), b, a, b.less(a))
	}
	c := Transition{From: "s", Action: "A", To: "3"}
	if !a.less(c) || c.less(a) || a.less(a) {
		t.Fatalf("same source and action: the target must decide")
	}
}

// report.go:321: shellQuote quotes what a shell would split or expand,
// and leaves plain words alone.
func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"run-1_a.b/c:d+e=f": "run-1_a.b/c:d+e=f",
		"my trace.ndjson":   "'my trace.ndjson'",
		"it's":              `'it'\''s'`,
		"a$b":               "'a$b'",
		"-":                 "-",
		"=":                 "=",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %q, want %q", in, got, want)
		}
	}
}

// value.go:197 and :205: the fast path takes small decimal integers,
// single digits included, and leaves everything else (too long to fit an
// int64, a leading zero, empty) to the JSON parser, with the same result.
func TestQuickValue(t *testing.T) {
	for _, s := range []string{"0", "7", "-3", "42", "123456789012345678", "true"} {
		v, ok := quickValue([]byte(s))
		want, err := ParseJSONValue([]byte(s))
		if !ok || err != nil || !v.Equal(want) {
			t.Errorf("quickValue(%q) = %v, %v; want %v from the fast path", s, v, ok, want)
		}
	}
	for _, s := range []string{"", "01", "-01", "00", "1234567890123456789", "12345678901234567890", "-", "1.5", "1e3"} {
		if v, ok := quickValue([]byte(s)); ok {
			t.Errorf("quickValue(%q) = %v, true; want it left to the parser", s, v)
		}
	}
	var vc valueCache
	for _, s := range []string{"12345678901234567890", "99999999999999999999", "01"} {
		v, err := vc.get([]byte(s))
		want, werr := ParseJSONValue([]byte(s))
		if (err == nil) != (werr == nil) || (err == nil && !v.Equal(want)) {
			t.Errorf("get(%q) = %v, %v; want %v, %v", s, v, err, want, werr)
		}
	}
}

// check.go:633: with Forget, the queue of finished instances waiting out
// Linger is compacted, so its memory follows the instances finished in
// the last Linger events, not all the instances ever finished.
func TestFinishingQueueBounded(t *testing.T) {
	c, err := New(program.Spec(), Options{Forget: true, Linger: 5})
	if err != nil {
		t.Fatal(err)
	}
	line := 0
	for i := range 2000 {
		inst := fmt.Sprint("r", i)
		for seq, ev := range [][4]string{
			{"Init", "Ready", "false", "false"},
			{"ExecutePython", "Running", "false", "false"},
			{"ProgramSucceeds", "Staging", "false", "false"},
			{"ReloadAndVerify", "Verified", "true", "false"},
			{"AtomicPublication", "Published", "true", "true"},
		} {
			line++
			l := fmt.Sprintf(`{"v":1,"instance":%q,"seq":%d,"action":%q,"state":{"phase":%q,"verified":%s,"published":%s}}`,
				inst, seq, ev[0], ev[1], ev[2], ev[3])
			r, err := trace.ParseEvent([]byte(l), trace.Pos{File: "t", Line: line})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Feed(r); err != nil {
				t.Fatal(err)
			}
		}
		if n := len(c.finishing); n > 200 {
			t.Fatalf("after %d finished instances the finishing queue holds %d entries (head %d), want at most 200", i+1, n, c.fhead)
		}
	}
	if live := c.Live(); live > 10 {
		t.Fatalf("%d live instances, want the finished ones forgotten", live)
	}
	rep := c.Close()
	if rep.Forgotten+len(rep.Instances) != 2000 || len(rep.Instances) > 1 {
		t.Fatalf("%d forgotten and %d listed, want 2000 valid instances, all but the last forgotten", rep.Forgotten, len(rep.Instances))
	}
	for _, in := range rep.Instances {
		if in.Verdict != Valid {
			t.Fatalf("instance %s: verdict %v, want valid", in.Instance, in.Verdict)
		}
	}
}
