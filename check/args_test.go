package check_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/trace"
)

// pcounter is the state of argSpec.
type pcounter struct {
	X    int8
	Done bool
}

// argSpec is counterSpec with parameterised actions, as TLA+ would write
// them: Bump(k, by) for k in {1, 2} and by in {"a", "b"} (two arguments,
// and two argument lists for each step), Poke(who) for who in {"a", "b"}
// (a self-loop, so both lists for one edge), and Finish, which takes none.
// argsCalls counts the calls of the actions' Args, if not nil.
func argSpec() *model.Spec[pcounter] { return argSpecCounting(nil) }

func argSpecCounting(argsCalls *int) *model.Spec[pcounter] {
	count := func() {
		if argsCalls != nil {
			*argsCalls++
		}
	}
	bumpGuard := func(s pcounter) string {
		if s.Done || s.X >= 6 {
			return "~done /\\ x < 6"
		}
		return ""
	}
	return &model.Spec[pcounter]{
		Name: "pcounter",
		Vars: []string{"x", "done"},
		Valuation: func(s pcounter) []model.Value {
			return []model.Value{model.Int(int64(s.X)), model.Bool(s.Done)}
		},
		Init: func() []pcounter { return []pcounter{{}} },
		Actions: []model.Action[pcounter]{
			{Name: "Bump", Guard: bumpGuard,
				Next: func(s pcounter, emit func(pcounter)) {
					emit(pcounter{s.X + 1, false})
					emit(pcounter{s.X + 2, false})
				},
				Args: func(s, t pcounter) [][]model.Value {
					count()
					k := int64(t.X - s.X)
					if bumpGuard(s) != "" || t.Done || k < 1 || k > 2 {
						return nil
					}
					return [][]model.Value{{model.Int(k), model.Str("a")}, {model.Int(k), model.Str("b")}}
				}},
			{Name: "Poke",
				Guard: func(s pcounter) string {
					if s.Done {
						return "~done"
					}
					return ""
				},
				Next: func(s pcounter, emit func(pcounter)) { emit(s) },
				Args: func(s, t pcounter) [][]model.Value {
					count()
					if s.Done || s != t {
						return nil
					}
					return [][]model.Value{{model.Str("a")}, {model.Str("b")}}
				}},
			{Name: "Finish", Guard: func(s pcounter) string {
				if s.Done || s.X < 3 {
					return "~done /\\ x >= 3"
				}
				return ""
			}, Next: func(s pcounter, emit func(pcounter)) { emit(pcounter{s.X, true}) }},
		},
		Invariants: []model.Invariant[pcounter]{{Name: "XBelow7", Holds: func(s pcounter) bool { return s.X < 7 }}},
		Properties: []model.Property[pcounter]{{Name: "NoBigStepPast3", Holds: func(from pcounter, a string, to pcounter) bool {
			return from.X < 3 || to.X-from.X < 2
		}}},
		Terminal: func(s pcounter) bool { return s.Done },
	}
}

// aev is an event of instance c with arguments (args: the JSON array's
// content, "" for none).
func aev(seq int, action, args, state string) string {
	if args == "" {
		return ev(seq, action, state)
	}
	return fmt.Sprintf(`{"v":1,"instance":"c","seq":%d,"action":%q,"args":[%s],"state":{%s}}`, seq, action, args, state)
}

const pInit = `{"v":1,"instance":"c","seq":0,"action":"Init","state":{"x":0,"done":false}}`

func checkArgs(t *testing.T, lines []string, opt check.Options) (*check.Report, string) {
	t.Helper()
	rep, err := check.Check(context.Background(), argSpec(), strings.NewReader(strings.Join(lines, "\n")+"\n"), "a.ndjson", opt)
	if err != nil {
		t.Fatal(err)
	}
	var txt bytes.Buffer
	if err := rep.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	return rep, txt.String()
}

// An event that gives its action's arguments is matched only by the steps
// taken with them; one that does not, by any step of the action. Each
// divergence says what about the arguments does not fit, and which
// arguments would have.
func TestArgs(t *testing.T) {
	for _, tc := range []struct {
		name    string
		lines   []string
		verdict check.Verdict
		kind    check.DivergenceKind
		reason  string   // of the divergence, or of an incomplete verdict
		text    []string // in the text report
	}{
		{name: "right arguments",
			lines: []string{pInit, aev(1, "Bump", `1,"a"`, `"x":1`), aev(2, "Poke", `"b"`, ``), aev(3, "Bump", `2,"b"`, `"x":3`),
				aev(4, "Finish", ``, `"done":true`)},
			verdict: check.Valid},
		{name: "no arguments: any step of the action",
			lines:   []string{pInit, aev(1, "Bump", ``, `"x":2`), aev(2, "Poke", ``, ``), aev(3, "Bump", ``, `"x":3`), aev(4, "Finish", ``, ``)},
			verdict: check.Valid},
		{name: "an empty list is no arguments",
			lines:   []string{pInit, aev(1, "Bump", ``, `"x":2`), aev(2, "Bump", `2, "a"`, `"x":4`), aev(3, "Finish", ` `, `"done":true`)},
			verdict: check.Valid},
		{name: "arguments instead of the state",
			lines:   []string{pInit, aev(1, "Bump", `1,"a"`, ``), aev(2, "Bump", `2,"a"`, ``), aev(3, "Finish", ``, ``)},
			verdict: check.Valid},
		{name: "arguments narrow the candidates",
			lines:   []string{pInit, aev(1, "Bump", `1,"a"`, ``), aev(2, "Bump", `1,"a"`, ``), aev(3, "Finish", ``, ``)},
			verdict: check.Violation, kind: check.KindGuard, reason: "Finish is not enabled in any candidate state",
			text: []string{"why: Finish is not enabled: guard ~done /\\ x >= 3 is false"}},
		{name: "the state is another argument's step",
			lines:   []string{pInit, aev(1, "Bump", `2,"a"`, `"x":1`)},
			verdict: check.Violation, kind: check.KindArgs,
			reason: `no Bump(2, "a") successor has the event's state, the successor after Bump(1, "a") or Bump(1, "b") has it`,
			text: []string{`a.ndjson:2: instance c, seq 1, action Bump(2, "a"): no Bump(2, "a")`,
				`why: the step Bump(1, "a") or Bump(1, "b"), not Bump(2, "a"), has the event's state: to x = 1 /\ done = FALSE`,
				`-want +got (want: spec's successor after Bump(2, "a"); got: the event's state)`, "- x = 2\n    + x = 1"}},
		{name: "arguments of no step",
			lines:   []string{pInit, aev(1, "Bump", `3,"a"`, ``)},
			verdict: check.Violation, kind: check.KindArgs,
			reason: `Bump(3, "a") is not a step from any candidate: Bump is taken there with (1, "a"), (1, "b"), (2, "a"), (2, "b")`,
			text:   []string{`why: Bump(3, "a") is not a step here: Bump is taken here with (1, "a"), (1, "b"), (2, "a"), (2, "b")`}},
		{name: "arguments of no step, the state another's",
			lines:   []string{pInit, aev(1, "Bump", `1,"c"`, `"x":2`)},
			verdict: check.Violation, kind: check.KindArgs,
			reason: `Bump(1, "c") is not a step from any candidate: the event's state is the successor after Bump(2, "a") or Bump(2, "b")`,
			text:   []string{`the event's state agrees with the spec's successor after Bump(2, "a") or Bump(2, "b") on every variable it carries, but the event's arguments are (1, "c"); the successor:`}},
		{name: "an argument of the wrong kind is of no step",
			lines:   []string{pInit, aev(1, "Poke", `1`, ``)},
			verdict: check.Violation, kind: check.KindArgs,
			reason: `Poke(1) is not a step from any candidate: Poke is taken there with ("a"), ("b")`},
		{name: "too few arguments are of no step",
			lines:   []string{pInit, aev(1, "Bump", `1`, ``)},
			verdict: check.Violation, kind: check.KindArgs, reason: `Bump(1) is not a step from any candidate`},
		{name: "the arguments' step, another state",
			lines:   []string{pInit, aev(1, "Bump", `1,"a"`, `"x":5`)},
			verdict: check.Violation, kind: check.KindState, reason: `no Bump(1, "a") successor has the event's state`,
			text: []string{"why: successor differs in x: spec has 1, event has 5", `(the successors for the arguments (2, "a"), (2, "b") not shown)`}},
		{name: "a property broken by the arguments' step",
			lines:   []string{pInit, aev(1, "Bump", `2,"a"`, `"x":2`), aev(2, "Bump", `1,"b"`, `"x":3`), aev(3, "Bump", `2,"b"`, `"x":5`)},
			verdict: check.Violation, kind: check.KindProperty, reason: `the Bump(2, "b") step breaks property NoBigStepPast3`},
		{name: "not enabled, whatever the arguments",
			lines:   []string{pInit, aev(1, "Bump", `2,"a"`, ``), aev(2, "Bump", `1,"a"`, ``), aev(3, "Finish", ``, ``), aev(4, "Bump", `1,"a"`, ``)},
			verdict: check.Violation, kind: check.KindGuard, reason: "Bump is not enabled in any candidate state",
			text: []string{`action Bump(1, "a"): Bump is not enabled`}},
		{name: "unserializable arguments: the action alone, and not valid",
			lines:   []string{pInit, aev(1, "Poke", `{"#unserializable":"who"}`, ``), aev(2, "Bump", `2,"a"`, ``), aev(3, "Bump", `1,"b"`, ``), aev(4, "Finish", ``, ``)},
			verdict: check.Incomplete, reason: "an argument at line 2 is #unserializable, so the trace could not be checked in full"},
		{name: "composite with arguments at its end",
			lines: []string{pInit, `{"v":1,"instance":"c","seq":1,"action":"Bump","part":"begin","state":{}}`,
				`{"v":1,"instance":"c","seq":2,"action":"Bump","part":"end","args":[2,"b"],"state":{}}`, aev(3, "Bump", `1,"a"`, ``), aev(4, "Finish", ``, ``)},
			verdict: check.Valid},
		{name: "composite with the same arguments twice",
			lines: []string{pInit, `{"v":1,"instance":"c","seq":1,"action":"Bump","part":"begin","args":[2,"b"],"state":{}}`,
				`{"v":1,"instance":"c","seq":2,"action":"Bump","part":"end","args":[2,"b"],"state":{"x":2}}`},
			verdict: check.Incomplete},
		{name: "composite with other arguments at its end",
			lines: []string{pInit, `{"v":1,"instance":"c","seq":1,"action":"Bump","part":"begin","args":[2,"b"],"state":{}}`,
				`{"v":1,"instance":"c","seq":2,"action":"Bump","part":"end","args":[1,"b"],"state":{}}`},
			verdict: check.Violation, kind: check.KindComposite,
			reason: `part of Bump(1, "b") inside the open composite Bump(2, "b") (arguments given at line 2)`},
		{name: "composite begun with arguments of no step",
			lines:   []string{pInit, `{"v":1,"instance":"c","seq":1,"action":"Bump","part":"begin","args":[3,"b"],"state":{}}`},
			verdict: check.Violation, kind: check.KindArgs, reason: `Bump(3, "b") is not a step from any candidate`},
		{name: "composite ended with the wrong arguments",
			lines: []string{pInit, `{"v":1,"instance":"c","seq":1,"action":"Bump","part":"begin","state":{}}`,
				`{"v":1,"instance":"c","seq":2,"action":"Bump","part":"end","args":[1,"a"],"state":{"x":2}}`},
			verdict: check.Violation, kind: check.KindArgs,
			reason: `no Bump(1, "a") successor has the event's state, the successor after Bump(2, "a") or Bump(2, "b") has it (composite step merged from its parts)`},
		{name: "arguments inside another composite",
			lines:   []string{pInit, `{"v":1,"instance":"c","seq":1,"action":"Bump","part":"begin","state":{}}`, aev(2, "Poke", `"a"`, ``)},
			verdict: check.Violation, kind: check.KindComposite, reason: "Poke inside the open composite step Bump (begun at line 2)",
			text: []string{`action Poke("a"): Poke inside`}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, txt := checkArgs(t, tc.lines, check.Options{})
			if len(rep.Instances) != 1 {
				t.Fatalf("%d instances", len(rep.Instances))
			}
			in := rep.Instances[0]
			if in.Verdict != tc.verdict {
				t.Fatalf("verdict %s, want %s\n%s", in.Verdict, tc.verdict, txt)
			}
			if d := in.Divergence; d != nil && (d.Kind != tc.kind || !strings.Contains(d.Reason, tc.reason)) {
				t.Fatalf("divergence %s: %s; want %s: %s\n%s", d.Kind, d.Reason, tc.kind, tc.reason, txt)
			}
			if in.Divergence == nil && !strings.Contains(in.Reason, tc.reason) {
				t.Fatalf("reason %q, want %q", in.Reason, tc.reason)
			}
			for _, want := range tc.text {
				if !strings.Contains(txt, want) {
					t.Errorf("the report lacks %q:\n%s", want, txt)
				}
			}
		})
	}
}

// A divergence carries the event's arguments in TLA+ syntax, in JSON too.
func TestArgsInDivergence(t *testing.T) {
	rep, _ := checkArgs(t, []string{pInit, aev(1, "Bump", `2,"a"`, `"x":1`)}, check.Options{})
	d := rep.Instances[0].Divergence
	if d == nil || !slices.Equal(d.Args, []string{"2", `"a"`}) || d.Action != "Bump" {
		t.Fatalf("divergence %+v", d)
	}
	var js bytes.Buffer
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"args": [
          "2",
          "\"a\""
        ]`) || !strings.Contains(js.String(), `"kind": "args"`) {
		t.Errorf("JSON report:\n%s", js.String())
	}
	rep, _ = checkArgs(t, []string{pInit, aev(1, "Finish", ``, ``)}, check.Options{})
	if d := rep.Instances[0].Divergence; d == nil || d.Args != nil {
		t.Fatalf("divergence of an event without arguments: %+v", d)
	}
}

// Arguments an action cannot take are input errors: to Init, to an action
// without parameters (Args nil), to a stutter event; arguments that are
// not an array of values.
func TestArgsInputErrors(t *testing.T) {
	for _, tc := range []struct {
		line string
		is   error
		want string
	}{
		{aev(1, "Finish", `"x"`, ``), check.ErrArgs, `a.ndjson:2: bad arguments: action Finish of spec pcounter takes no arguments`},
		{`{"v":1,"instance":"c","seq":1,"action":"Init","args":[1],"state":{}}`, check.ErrArgs, "a.ndjson:2: bad arguments: Init takes no arguments"},
		{`{"v":1,"instance":"c","seq":1,"action":"x","stutter":true,"args":[1],"state":{}}`, trace.ErrField, "a stutter event takes no arguments"},
		{`{"v":1,"instance":"c","seq":1,"action":"Bump","args":{"k":1},"state":{}}`, trace.ErrField, `args is not an array: {"k":1}`},
		{`{"v":1,"instance":"c","seq":1,"action":"Bump","args":"1","state":{}}`, trace.ErrField, "args is not an array"},
		{`{"v":1,"instance":"c","seq":1,"action":"Bump","args":null,"state":{}}`, trace.ErrField, "args is not an array: null"},
		{aev(1, "Bump", `1.5,"a"`, ``), check.ErrValue, "bad arguments: args: bad value: 1.5 is not a 64-bit integer"},
		{aev(1, "Bump", `null`, ``), check.ErrArgs, "args: bad value: null"},
		{aev(1, "Bump", `{"#what":1}`, ``), check.ErrArgs, `unknown ITF form "#what"`},
		{`{"v":1,"instance":"c","seq":1,"action":"Bump","args":[1],"args":[2],"state":{}}`, trace.ErrField, `field "args" repeated`},
		{`{"v":1,"instance":"c","seq":1,"action":"Bump","args":[1,],"state":{}}`, trace.ErrSyntax, "malformed JSON"},
	} {
		t.Run(tc.want, func(t *testing.T) {
			_, err := check.Check(context.Background(), argSpec(), strings.NewReader(pInit+"\n"+tc.line+"\n"), "a.ndjson", check.Options{})
			if !errors.Is(err, check.ErrInput) || !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want an input error (%v) with %q", err, tc.is, tc.want)
			}
		})
	}
}

// The checker asks a spec for the arguments of a transition once, however
// many events take it, and only when an event gives arguments.
func TestArgsAskedOncePerTransition(t *testing.T) {
	var lines []string
	for i := range 200 {
		inst := fmt.Sprintf("i%d", i)
		lines = append(lines,
			fmt.Sprintf(`{"v":1,"instance":%q,"seq":0,"action":"Init","state":{"x":0,"done":false}}`, inst),
			fmt.Sprintf(`{"v":1,"instance":%q,"seq":1,"action":"Bump","args":[%d,"a"],"state":{}}`, inst, 1+i%2),
			fmt.Sprintf(`{"v":1,"instance":%q,"seq":2,"action":"Poke","args":["b"],"state":{}}`, inst),
			fmt.Sprintf(`{"v":1,"instance":%q,"seq":3,"action":"Bump","state":{}}`, inst))
	}
	calls := 0
	rep, err := check.Check(context.Background(), argSpecCounting(&calls), strings.NewReader(strings.Join(lines, "\n")+"\n"), "a", check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Events != 800 || rep.Count(check.Incomplete) != 200 {
		t.Fatalf("%d events, %d incomplete", rep.Events, rep.Count(check.Incomplete))
	}
	// Bump from 0 (to 1 and 2), Poke at 1 and at 2: 4 transitions.
	if calls != 4 {
		t.Errorf("Args called %d times, want 4 (once per transition)", calls)
	}
}

// A step counts for its transition whatever its arguments: the two Pokes
// of one state are one transition; with arguments a step that the action
// alone leaves ambiguous is exact.
func TestArgsCoverage(t *testing.T) {
	rep, _ := checkArgs(t, []string{pInit, aev(1, "Poke", `"a"`, ``), aev(2, "Poke", `"b"`, ``), aev(3, "Bump", `2,"a"`, ``), aev(4, "Bump", `1,"a"`, ``),
		aev(5, "Finish", ``, ``)}, check.Options{})
	if rep.Verdict() != check.Valid || rep.Ambiguous != 0 {
		t.Fatalf("%s, %d ambiguous", rep.Verdict(), rep.Ambiguous)
	}
	var poke *check.Transition
	for i, tr := range rep.Exercised {
		if tr.Action == "Poke" {
			poke = &rep.Exercised[i]
		}
	}
	if poke == nil || poke.Count != 2 || len(rep.Exercised) != 4 {
		t.Fatalf("exercised %+v; want Poke once, counted twice, and 4 transitions", rep.Exercised)
	}
	rep, _ = checkArgs(t, []string{pInit, aev(1, "Bump", ``, ``), aev(2, "Bump", ``, `"x":3`), aev(3, "Finish", ``, ``)}, check.Options{})
	if rep.Verdict() != check.Valid || rep.Ambiguous != 2 {
		t.Fatalf("without arguments: %s, %d ambiguous; want 2", rep.Verdict(), rep.Ambiguous)
	}
}

// Replay's steps carry the arguments, and events emitted in-process
// (Checker.Emit) are checked with theirs.
func TestArgsStepAndEmit(t *testing.T) {
	var steps []check.Step
	rep, _ := checkArgs(t, []string{pInit, aev(1, "Bump", `1,"a"`, ``), aev(2, "Poke", ``, ``)}, check.Options{OnStep: func(s check.Step) { steps = append(steps, s) }})
	if len(steps) != 3 || steps[0].Args != nil || !slices.Equal(steps[1].Args, []string{"1", `"a"`}) || steps[2].Args != nil {
		t.Fatalf("steps %+v (%s)", steps, rep.Verdict())
	}
	c, err := check.New(argSpec(), check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range []trace.Event{
		{Instance: "e", Seq: 0, Action: "Init", State: map[string]any{"x": 0, "done": false}},
		{Instance: "e", Seq: 1, Action: "Bump", Args: []any{2, "b"}, State: map[string]any{}},
		{Instance: "e", Seq: 2, Action: "Bump", Args: []any{2, "b"}, State: map[string]any{"x": 3}},
	} {
		if err := c.Emit(e); err != nil {
			t.Fatal(err)
		}
	}
	d := c.Close().Instances[0].Divergence
	if d == nil || d.Kind != check.KindArgs || d.Line != 3 ||
		d.Reason != `no Bump(2, "b") successor has the event's state, the successor after Bump(1, "a") or Bump(1, "b") has it` {
		t.Fatalf("divergence %+v", d)
	}
	if c, err = check.New(argSpec(), check.Options{}); err != nil {
		t.Fatal(err)
	}
	if err := c.Emit(trace.Event{Instance: "f", Seq: 0, Action: "Finish", Args: []any{1}, State: map[string]any{}}); !errors.Is(err, check.ErrArgs) {
		t.Fatalf("Emit with arguments to Finish: %v", err)
	}
}
