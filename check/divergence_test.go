package check_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/cli"
	"github.com/tracecheck/tracecheck/internal/bundled"
	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/model/program"
	"github.com/tracecheck/tracecheck/model/session"
	"github.com/tracecheck/tracecheck/trace"
)

// sess is an event of instance s of the session spec.
func sess(seq int, action, state string) string {
	return fmt.Sprintf(`{"v":1,"instance":"s","seq":%d,"action":%q,"state":{%s}}`, seq, action, state)
}

const sessInit = `"conn":0,"vad":0,"resp":0,"compaction":0`

// divergenceOf checks lines against sp and returns the one instance's
// divergence and the text report.
func divergenceOf[S comparable](t *testing.T, sp *model.Spec[S], lines []string) (*check.Divergence, string) {
	t.Helper()
	rep, err := check.Check(context.Background(), sp, strings.NewReader(strings.Join(lines, "\n")+"\n"), "t.ndjson", check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var txt bytes.Buffer
	if err := rep.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	if len(rep.Instances) != 1 || rep.Instances[0].Divergence == nil {
		t.Fatalf("want one violating instance:\n%s", txt.String())
	}
	return rep.Instances[0].Divergence, txt.String()
}

// Issue 12.6.1: "the event's state fits" names only actions the event's
// state tells apart: not those it fits because it leaves out (or repeats)
// what they change, which any state would.
func TestFitsOnlyDiscriminating(t *testing.T) {
	sp := session.Spec(session.Options{})
	for _, tc := range []struct {
		name  string
		lines []string
		want  []string
	}{
		{"guard, partial state the other actions leave alone", []string{sess(0, "Init", sessInit), sess(1, "RespFinish", `"conn":0`)}, nil},
		{"guard, empty state", []string{sess(0, "Init", sessInit), sess(1, "RespFinish", ``)}, nil},
		{"guard, the state before repeated", []string{sess(0, "Init", sessInit), sess(1, "RespFinish", sessInit)}, nil},
		{"state, a partial state another action explains", []string{sess(0, "Init", sessInit), sess(1, "VadStart", `"resp":1`)}, []string{"RespStart"}},
		{"stutter that changes a variable", []string{sess(0, "Init", sessInit), `{"v":1,"instance":"s","seq":1,"action":"log","stutter":true,"state":{"conn":1}}`}, []string{"Teardown"}},
		{"stutter inside a composite, back to the state before", []string{sess(0, "Init", sessInit),
			`{"v":1,"instance":"s","seq":1,"action":"Teardown","part":"begin","state":{"conn":1}}`,
			`{"v":1,"instance":"s","seq":2,"action":"log","stutter":true,"state":{"conn":0}}`}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, txt := divergenceOf(t, sp, tc.lines)
			if diff := cmp.Diff(tc.want, d.Fits); diff != "" {
				t.Errorf("fits -want +got\n%s\n%s", diff, txt)
			}
			if got := strings.Contains(txt, "the event's state fits"); got != (len(tc.want) > 0) {
				t.Errorf("text report lists fits: %v, want %v\n%s", got, len(tc.want) > 0, txt)
			}
		})
	}
}

// Issue 12.6.2: when the event's state agrees with the state a report
// compares it with, the report still says why it does not fit (the guard
// in the spec's words, or what the state breaks) and shows the state:
// never a -want +got block with nothing in it.
func TestNoEmptyDiff(t *testing.T) {
	prog := program.Spec()
	sp := session.Spec(session.Options{})
	mutant := session.Spec(session.Options{NoCompactionTeardown: true})
	outlives, err := os.ReadFile("../traces/session/compaction-outlives-session-bad.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	type tcase struct {
		name  string
		check func(t *testing.T) (*check.Divergence, string)
		kind  check.DivergenceKind
		want  []string // in the diff
	}
	for _, tc := range []tcase{
		{"guard, the state before repeated", func(t *testing.T) (*check.Divergence, string) {
			return divergenceOf(t, prog, []string{progInit, strings.Replace(strings.Replace(progInit, `"Init"`, `"AtomicPublication"`, 1), `"seq":0`, `"seq":1`, 1)})
		}, check.KindGuard, []string{`AtomicPublication is not enabled there (guard phase = "Verified" is false)`, "  phase = \"Ready\"\n", "  published = FALSE\n"}},
		{"guard, partial state", func(t *testing.T) (*check.Divergence, string) {
			return divergenceOf(t, sp, []string{sess(0, "Init", sessInit), sess(1, "RespFinish", `"conn":0`)})
		}, check.KindGuard, []string{"(guard self.resp == 1 is false)", "  conn = 0\n", "  resp = 0  (not in the event)\n"}},
		{"guard, empty state", func(t *testing.T) (*check.Divergence, string) {
			return divergenceOf(t, sp, []string{sess(0, "Init", sessInit), sess(1, "RespFinish", ``)})
		}, check.KindGuard, []string{"(guard self.resp == 1 is false)", "  conn = 0  (not in the event)\n"}},
		{"invariant", func(t *testing.T) (*check.Divergence, string) {
			return divergenceOf(t, mutant, strings.Split(strings.TrimSpace(string(outlives)), "\n"))
		}, check.KindInvariant, []string{"the spec's successor after Teardown on every variable it carries, but that state breaks invariant ChildrenDieWithParent", "  compaction = 1\n"}},
		{"property", func(t *testing.T) (*check.Divergence, string) {
			return divergenceOf(t, counterSpec(), []string{ev(0, "Init", ``), ev(1, "Bump", `"x":2`), ev(2, "Bump", `"x":3`), ev(3, "Bump", `"x":5`)})
		}, check.KindProperty, []string{"but the step to it breaks property NoBigStepPast3", "  x = 5\n"}},
		{"first event not Init, in an initial state", func(t *testing.T) (*check.Divergence, string) {
			return divergenceOf(t, counterSpec(), []string{ev(0, "Bump", `"x":0`)})
		}, check.KindInit, []string{"agrees with an initial state on every variable it carries, but the instance's first event is Bump, want Init", "  x = 0\n"}},
		{"stutter inside a composite", func(t *testing.T) (*check.Divergence, string) {
			return divergenceOf(t, sp, []string{sess(0, "Init", sessInit),
				`{"v":1,"instance":"s","seq":1,"action":"Teardown","part":"begin","state":{"conn":1}}`,
				`{"v":1,"instance":"s","seq":2,"action":"log","stutter":true,"state":{"conn":0}}`})
		}, check.KindStutter, []string{"-want +got (want: unchanged state, with what the open composite Teardown has set", "- conn = 1\n+ conn = 0\n"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, txt := tc.check(t)
			if d.Kind != tc.kind {
				t.Fatalf("kind %s, want %s\n%s", d.Kind, tc.kind, txt)
			}
			changed := false
			for _, l := range strings.Split(d.Diff, "\n") {
				changed = changed || strings.HasPrefix(l, "- ") || strings.HasPrefix(l, "+ ")
			}
			if strings.HasPrefix(d.Diff, "-want +got") && !changed {
				t.Errorf("a -want +got block with nothing in it:\n%s", txt)
			}
			for _, w := range tc.want {
				if !strings.Contains(d.Diff, w) {
					t.Errorf("diff lacks %q:\n%s", w, d.Diff)
				}
			}
			if first, _, _ := strings.Cut(d.Diff, "\n"); !strings.Contains(txt, "    "+first+"\n") {
				t.Errorf("text report lacks the diff's first line %q:\n%s", first, txt)
			}
			for _, c := range d.Candidates {
				if tc.kind == check.KindStutter && len(c.Why) == 0 {
					t.Errorf("candidate %s says nothing of why the stutter event does not fit", c.State)
				}
			}
		})
	}
}

// Issue 12.6.4: a text report clips instance ids and values longer than
// 200 bytes to their start and says how much was cut; the JSON report
// keeps them whole.
func TestClipLongValues(t *testing.T) {
	for _, tc := range []struct {
		name, instance, action, phase string
		stutter                       bool
		want                          []string // in the text report
	}{
		{"long instance", strings.Repeat("i", 1000), "ExecutePython", "Failed", false,
			[]string{strings.Repeat("i", 200) + "... (800 more bytes): violation", "instance " + strings.Repeat("i", 200) + "... (800 more bytes), seq 1",
				`"instance":"` + strings.Repeat("i", 200) + `..." (800 more bytes)`, "(add --instance with the instance's id: it is too long to print here"}},
		{"long value", "r", "ExecutePython", strings.Repeat("x", 5000), false,
			[]string{`event has "` + strings.Repeat("x", 200) + `..." (4800 more bytes)`, `+ phase = "` + strings.Repeat("x", 200) + `..." (4800 more bytes)`,
				`"state":{"phase":"` + strings.Repeat("x", 200) + `..." (4800 more bytes)}`, "replay: tracecheck replay --model program --instance r t.ndjson"}},
		{"long value of many-byte characters", "r", "ExecutePython", strings.Repeat("é", 500), false,
			[]string{`+ phase = "` + strings.Repeat("é", 100) + `..." (800 more bytes)`}},
		{"long stutter action", "r", strings.Repeat("a", 300), "Failed", true,
			[]string{`stutter event "` + strings.Repeat("a", 200) + `..." (100 more bytes) changes spec variables`, "action " + strings.Repeat("a", 200) + "... (100 more bytes):"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			inst, _ := json.Marshal(tc.instance)
			action, _ := json.Marshal(tc.action)
			phase, _ := json.Marshal(tc.phase)
			stutter := ""
			if tc.stutter {
				stutter = `,"stutter":true`
			}
			in := fmt.Sprintf(`{"v":1,"instance":%s,"seq":0,"action":"Init","state":{"phase":"Ready","verified":false,"published":false}}`+"\n"+
				`{"v":1,"instance":%s,"seq":1,"action":%s%s,"state":{"phase":%s}}`+"\n", inst, inst, action, stutter, phase)
			rep, err := check.Check(context.Background(), program.Spec(), strings.NewReader(in), "t.ndjson", check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var txt, js bytes.Buffer
			if err := rep.WriteText(&txt); err != nil {
				t.Fatal(err)
			}
			if err := rep.WriteJSON(&js); err != nil {
				t.Fatal(err)
			}
			for _, w := range tc.want {
				if !strings.Contains(txt.String(), w) {
					t.Errorf("text report lacks %q:\n%s", w, txt.String())
				}
			}
			for i, l := range strings.Split(txt.String(), "\n") {
				if len(l) > 1000 || !utf8.ValidString(l) {
					t.Errorf("text line %d: %d bytes, valid UTF-8 %v", i+1, len(l), utf8.ValidString(l))
				}
			}
			var back struct {
				Instances []struct {
					Instance   string
					Divergence check.Divergence
				}
			}
			if err := json.Unmarshal(js.Bytes(), &back); err != nil {
				t.Fatal(err)
			}
			d := back.Instances[0].Divergence
			if back.Instances[0].Instance != tc.instance || d.Instance != tc.instance || d.Action != tc.action ||
				!strings.Contains(d.Event, string(phase)) || !strings.Contains(d.Event, string(inst)) {
				t.Errorf("JSON report does not keep the instance, action and value whole: %.300s", js.String())
			}
			if !tc.stutter && !strings.Contains(d.Diff, "+ phase = "+string(phase)) {
				t.Errorf("JSON diff does not keep the value whole: %.300s", d.Diff)
			}
		})
	}
}

// Issue 12.6.5: kinds of values take their article ("an int").
func TestValueKindGrammar(t *testing.T) {
	for _, tc := range []struct {
		name  string
		check func() error
		want  string
	}{
		{"an int", func() error {
			_, err := check.Check(context.Background(), session.Spec(session.Options{}), strings.NewReader(sess(0, "Init", `"conn":"up"`)+"\n"), "in", check.Options{})
			return err
		}, `state.conn is string "up", the spec's conn is an int`},
		{"a string", func() error {
			_, err := check.Check(context.Background(), program.Spec(), strings.NewReader(`{"v":1,"instance":"r","seq":0,"action":"Init","state":{"phase":3}}`+"\n"), "in", check.Options{})
			return err
		}, "state.phase is int 3, the spec's phase is a string"},
		{"a bool", func() error {
			_, err := check.Check(context.Background(), program.Spec(), strings.NewReader(`{"v":1,"instance":"r","seq":0,"action":"Init","state":{"verified":[1]}}`+"\n"), "in", check.Options{})
			return err
		}, "state.verified is seq [1], the spec's verified is a bool"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.check()
			if !errors.Is(err, check.ErrValue) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
			for _, bad := range []string{" a int", " a invalid", " a array", " a object", " a integer"} {
				if err != nil && strings.Contains(err.Error(), bad) {
					t.Errorf("error %q has %q", err, bad)
				}
			}
		})
	}
}

// Issue 12.6.6: an event named Init is the instance's Init, stutter or
// not (as TLC's trace validation reads it): first, it must fit an initial
// state; later, it is a violation that says so. A stutter event with
// another name first is a violation.
func TestInitStutter(t *testing.T) {
	initStutter := `{"v":1,"instance":"r","seq":%d,"action":"Init","stutter":true,"state":{"phase":%q}}`
	for _, tc := range []struct {
		name    string
		lines   []string
		verdict check.Verdict
		reason  string // the divergence's, if any
	}{
		{"first", []string{fmt.Sprintf(initStutter, 0, "Ready")}, check.Incomplete, ""},
		{"first, not an initial state", []string{fmt.Sprintf(initStutter, 0, "Running")}, check.Violation, "the state is not an initial state of the spec"},
		{"later", []string{progInit, fmt.Sprintf(initStutter, 1, "Ready")}, check.Violation,
			"Init after the instance started (first event at line 1; a stutter event named Init is an Init too)"},
		{"a stutter event first", []string{`{"v":1,"instance":"r","seq":0,"action":"boot","stutter":true,"state":{}}`}, check.Violation,
			`the instance's first event is the stutter event "boot", want Init`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := check.Check(context.Background(), program.Spec(), strings.NewReader(strings.Join(tc.lines, "\n")+"\n"), "in", check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			res := rep.Instances[0]
			reason := ""
			if d := res.Divergence; d != nil {
				if d.Kind != check.KindInit {
					t.Errorf("divergence of kind %s, want init", d.Kind)
				}
				reason = d.Reason
			}
			if res.Verdict != tc.verdict || reason != tc.reason {
				t.Errorf("%v (%q), want %v (%q)", res.Verdict, reason, tc.verdict, tc.reason)
			}
		})
	}
}

// An unterminated last line is not checked, whole or not, and the report
// says which it was.
func TestTruncatedWholeEvent(t *testing.T) {
	whole := `{"v":1,"instance":"r","seq":1,"action":"ExecutePython","state":{"phase":"Running"}}`
	for _, tc := range []struct {
		name, last string
		whole      bool
		reason     string
		note       string
	}{
		{"cut", whole[:40], false, "the trace is truncated at in:2 (a partial last line)", "truncated: in:2 has no newline (the writer stopped mid-line); instance r is incomplete"},
		{"whole", whole, true, "the trace ends at in:2 on a whole event without its newline, which is not checked",
			"truncated: in:2 has no newline: it holds a whole event, but a line without its newline is not checked"},
		{"whole but not a step", strings.Replace(whole, "ExecutePython", "AtomicPublication", 1), true, "on a whole event without its newline", "it holds a whole event"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := check.Check(context.Background(), program.Spec(), strings.NewReader(progInit+"\n"+tc.last), "in", check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var txt bytes.Buffer
			rep.WriteText(&txt)
			res := rep.Instances[0]
			if rep.Truncated == nil || rep.Truncated.Whole != tc.whole || res.Verdict != check.Incomplete || !strings.Contains(res.Reason, tc.reason) || !strings.Contains(txt.String(), tc.note) {
				t.Errorf("truncation %+v, %v: %s\n%s", rep.Truncated, res.Verdict, res.Reason, txt.String())
			}
		})
	}
}

// itfStream is two ITF documents one after another, laid out unevenly:
// blank lines before and between them, states spread over several lines
// and two on one line. Document 1 (instance a) is valid; document 2
// (instance b) publishes without verifying.
const itfStream = `

{"#meta": {"instance": "a"},
 "vars": ["phase", "verified", "published"],
 "states": [
  {"phase": "Ready", "verified": false, "published": false},
  {"mbt::actionTaken": "ExecutePython",
   "phase": "Running"}, {"mbt::actionTaken": "ExecutionFails", "phase": "Failed"}
 ]
}


{"#meta": {"instance": "b"}, "vars": [], "states": [
  {"phase": "Ready", "verified": false, "published": false},
  {"mbt::actionTaken": "ExecutePython", "phase": "Running"},

  {"mbt::actionTaken": "ProgramSucceeds", "phase": "Staging"},
  {
    "mbt::actionTaken": "AtomicPublication", "phase": "Published", "published": true
  }
]}
`

// Issue 12.6.3: positions in reports on ITF input are the ITF's lines
// (where each state's object starts), with the document from the second
// on: file:doc:line.
func TestITFPositions(t *testing.T) {
	check1 := func(t *testing.T, doc string, opt check.Options) (*check.Report, error) {
		t.Helper()
		nd, itf, err := trace.AsNDJSON(strings.NewReader(doc), "x")
		if err != nil || !itf {
			t.Fatalf("AsNDJSON: itf %v, %v", itf, err)
		}
		return check.Check(context.Background(), program.Spec(), nd, "s.itf.json", opt)
	}
	t.Run("divergence", func(t *testing.T) {
		rep, err := check1(t, itfStream, check.Options{})
		if err != nil {
			t.Fatal(err)
		}
		got := map[string][2]int{}
		for _, in := range rep.Instances {
			got[in.Instance] = [2]int{in.FirstLine, in.LastLine}
		}
		if diff := cmp.Diff(map[string][2]int{"a": {6, 8}, "b": {14, 18}}, got); diff != "" {
			t.Errorf("instances' first and last lines -want +got\n%s", diff)
		}
		d := rep.Instances[1].Divergence
		if d == nil || d.Line != 18 || d.Doc != 2 {
			t.Fatalf("divergence %+v, want at line 18 of document 2", d)
		}
		var txt bytes.Buffer
		rep.WriteText(&txt)
		wantRecent := []check.Recent{{Line: 14, Doc: 2, Event: "ProgramSucceeds"}, {Line: 15, Doc: 2}, {Line: 17, Doc: 2}}
		var gotRecent []check.Recent
		for _, r := range d.Recent {
			gotRecent = append(gotRecent, check.Recent{Line: r.Line, Doc: r.Doc})
		}
		wantRecent[0].Event = ""
		if diff := cmp.Diff(wantRecent, gotRecent); diff != "" {
			t.Errorf("recent events -want +got\n%s", diff)
		}
		for _, w := range []string{"  a: valid, 3 events (lines 6-8)\n", "  b: violation, 4 events (lines 14-18)\n",
			"    s.itf.json:2:18: instance b, seq 3, action AtomicPublication: ", "      s.itf.json:2:17: {"} {
			if !strings.Contains(txt.String(), w) {
				t.Errorf("text report lacks %q:\n%s", w, txt.String())
			}
		}
	})
	t.Run("input errors", func(t *testing.T) {
		for _, tc := range []struct {
			name, doc, want string
			is              error
		}{
			{"unknown action, first document", strings.Replace(itfStream, "ExecutionFails", "Fails", 1), "s.itf.json:8: unknown action", check.ErrUnknownAction},
			{"unknown action, second document", strings.Replace(itfStream, "ProgramSucceeds", "Succeeds", 1), "s.itf.json:2:17: unknown action", check.ErrUnknownAction},
			{"bad value", strings.Replace(itfStream, `"phase": "Staging"`, `"phase": 7`, 1), "s.itf.json:2:17: bad value: state.phase is int 7", check.ErrValue},
			{"malformed document", strings.Replace(itfStream, `"vars": [], "states"`, `"vars": [], "states": 1, "x"`, 1), "s.itf.json:2:13: read: ", trace.ErrITF},
		} {
			t.Run(tc.name, func(t *testing.T) {
				_, err := check1(t, tc.doc, check.Options{})
				if !errors.Is(err, check.ErrInput) || !errors.Is(err, tc.is) || !strings.HasPrefix(err.Error(), tc.want) {
					t.Errorf("error %v, want %q... (%v)", err, tc.want, tc.is)
				}
			})
		}
	})
	t.Run("truncated document", func(t *testing.T) {
		doc := strings.Replace(itfStream, `{"#meta": {"instance": "b"}`, `{"#meta": {"instance": "b", "truncated": "run.ndjson:9"}`, 1)
		doc = strings.Replace(doc, `"AtomicPublication", "phase": "Published", "published": true`, `"ReloadAndVerify", "phase": "Verified", "verified": true`, 1)
		rep, err := check1(t, doc, check.Options{})
		if err != nil {
			t.Fatal(err)
		}
		if tr := rep.Truncated; tr == nil || tr.Line != 13 || tr.Doc != 2 || tr.Instance != "b" {
			t.Errorf("truncation %+v, want document 2 at line 13", tr)
		}
		var txt bytes.Buffer
		rep.WriteText(&txt)
		if !strings.Contains(txt.String(), "  b: incomplete, 4 events (lines 14-18): the ITF document at s.itf.json:2:13 records that its trace was cut off mid-line") {
			t.Errorf("text report:\n%s", txt.String())
		}
	})
	// Through the command line, from a file and from standard input (which
	// peeks at the ITF to infer the model).
	t.Run("command line", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "s.itf.json")
		if err := os.WriteFile(path, []byte(itfStream), 0o644); err != nil {
			t.Fatal(err)
		}
		for _, tc := range []struct {
			name string
			args []string
			want string
		}{
			{"file", []string{"check", path}, path + ":2:18: instance b"},
			{"file, model named", []string{"check", "--model", "program", path}, path + ":2:18: instance b"},
			{"stdin", []string{"check", "-"}, "stdin:2:18: instance b"},
			{"replay", []string{"replay", path}, path + ":17  b  seq 2  ProgramSucceeds"},
		} {
			t.Run(tc.name, func(t *testing.T) {
				var out, errb bytes.Buffer
				code := cli.Run(cli.Config{Specs: bundled.Specs(), Stdin: strings.NewReader(itfStream)}, tc.args, &out, &errb)
				if code != cli.ExitViolation || !strings.Contains(out.String(), tc.want) {
					t.Errorf("exit %d, want %d, output lacks %q:\n%s%s", code, cli.ExitViolation, tc.want, out.String(), errb.String())
				}
			})
		}
	})
}
