package conform_test

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/conform"
	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/model/program"
	"github.com/tracecheck/tracecheck/model/session"
)

// graphSpec loads a retained tool graph as a spec.
func graphSpec(t *testing.T, report, name string) *model.Spec[int] {
	t.Helper()
	path := filepath.Join(retainedDir(t), report)
	if report == "tlc-program" {
		path = filepath.Join(path, "states.dot")
	}
	g, err := conform.LoadGraph(path)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := conform.Spec(g, name)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// The graph of a spec, as a spec, explores to the graph itself: the same
// states and labelled edges as the Go transcription's (whose graph equals
// the tool's: TestRetained).
func TestGraphSpecExploresToItsGraph(t *testing.T) {
	for _, c := range []struct {
		report string
		want   func() (*conform.Graph, error)
	}{
		{"tlc-program", func() (*conform.Graph, error) { return explored(program.Spec()) }},
		{"fizzbee-session", func() (*conform.Graph, error) { return explored(session.Spec(session.Options{})) }},
	} {
		t.Run(c.report, func(t *testing.T) {
			sp := graphSpec(t, c.report, c.report)
			got, err := explored(sp)
			if err != nil {
				t.Fatal(err)
			}
			want, err := c.want()
			if err != nil {
				t.Fatal(err)
			}
			if d := conform.Compare(want, got); !d.Empty() {
				t.Fatalf("the graph-backed spec explores to another graph:\n%s", d)
			}
		})
	}
}

func explored[S comparable](sp *model.Spec[S]) (*conform.Graph, error) {
	r, err := model.Explore(context.Background(), sp, model.Options{})
	if err != nil {
		return nil, err
	}
	return conform.FromModel(sp, &r.Graph)
}

// Every trace of the corpus gets the same verdict, instance by instance,
// and the same violation line, against the Go transcription and against
// the graph the real tool computed (TLC's for Program, FizzBee's for
// session).
func TestGraphSpecAgreesWithTranscription(t *testing.T) {
	for _, c := range []struct {
		dir, report string
		check       func(f *os.File, name string) (*check.Report, error)
	}{
		{"program", "tlc-program", func(f *os.File, name string) (*check.Report, error) {
			return check.Check(context.Background(), program.Spec(), f, name, check.Options{})
		}},
		{"session", "fizzbee-session", func(f *os.File, name string) (*check.Report, error) {
			return check.Check(context.Background(), session.Spec(session.Options{}), f, name, check.Options{})
		}},
	} {
		sp := graphSpec(t, c.report, c.dir)
		files, _ := filepath.Glob(filepath.Join("..", "traces", c.dir, "*.ndjson"))
		more, _ := filepath.Glob(filepath.Join("..", "traces", c.dir, "*", "*.ndjson"))
		files = append(files, more...)
		if len(files) < 5 {
			t.Fatalf("only %d %s traces", len(files), c.dir)
		}
		for _, file := range files {
			t.Run(strings.TrimPrefix(file, filepath.Join("..", "traces")+string(filepath.Separator)), func(t *testing.T) {
				f, err := os.Open(file)
				if err != nil {
					t.Fatal(err)
				}
				defer f.Close()
				want, werr := c.check(f, file)
				if _, err := f.Seek(0, 0); err != nil {
					t.Fatal(err)
				}
				got, gerr := check.Check(context.Background(), sp, f, file, check.Options{})
				if (werr == nil) != (gerr == nil) {
					t.Fatalf("input errors differ: transcription %v, graph %v", werr, gerr)
				}
				if werr != nil {
					return
				}
				if want.Verdict() != got.Verdict() || len(want.Instances) != len(got.Instances) {
					t.Fatalf("verdict %s (%d instances) against the transcription, %s (%d) against the graph",
						want.Verdict(), len(want.Instances), got.Verdict(), len(got.Instances))
				}
				for i, w := range want.Instances {
					g := got.Instances[i]
					if w.Instance != g.Instance || w.Verdict != g.Verdict || w.LastLine != g.LastLine {
						t.Errorf("instance %s: %s at line %d (transcription) vs %s %s at line %d (graph)",
							w.Instance, w.Verdict, w.LastLine, g.Instance, g.Verdict, g.LastLine)
					}
					if (w.Divergence == nil) != (g.Divergence == nil) ||
						w.Divergence != nil && (w.Divergence.Line != g.Divergence.Line || w.Divergence.Action != g.Divergence.Action) {
						t.Errorf("instance %s: divergences differ: %+v vs %+v", w.Instance, w.Divergence, g.Divergence)
					}
				}
			})
		}
	}
}

// programTrace is n instances of a publishing run, 100 interleaved at a
// time: 5n events.
func programTrace(n int) []byte {
	steps := []struct{ action, state string }{
		{"Init", `{"phase":"Ready","verified":false,"published":false}`},
		{"ExecutePython", `{"phase":"Running","verified":false,"published":false}`},
		{"ProgramSucceeds", `{"phase":"Staging","verified":false,"published":false}`},
		{"ReloadAndVerify", `{"phase":"Verified","verified":true,"published":false}`},
		{"AtomicPublication", `{"phase":"Published","verified":true,"published":true}`},
	}
	var b strings.Builder
	for base := 0; base < n; base += 100 {
		for s, st := range steps {
			for i := base; i < min(base+100, n); i++ {
				fmt.Fprintf(&b, `{"v":1,"instance":"r%d","seq":%d,"action":"%s","state":%s}`+"\n", i, s, st.action, st.state)
			}
		}
	}
	return []byte(b.String())
}

// Checking against the Go transcription and against TLC's graph, on the
// same 1,000,000 events (make bench-graph): events/s of each.
func BenchmarkGraphSpec(b *testing.B) {
	data := programTrace(200_000)
	g, err := conform.LoadGraph(filepath.Join("..", "formal-verification", "reports", "tlc-program", "states.dot"))
	if err != nil {
		b.Fatal(err)
	}
	graph, err := conform.Spec(g, "tlc-program")
	if err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		check func() (*check.Report, error)
	}{
		{"transcription", func() (*check.Report, error) {
			return check.Check(context.Background(), program.Spec(), bytes.NewReader(data), "t", check.Options{OnResult: func(check.InstanceResult) {}})
		}},
		{"graph", func() (*check.Report, error) {
			return check.Check(context.Background(), graph, bytes.NewReader(data), "t", check.Options{OnResult: func(check.InstanceResult) {}})
		}},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			for i := 0; i < b.N; i++ {
				rep, err := c.check()
				if err != nil || rep.Verdict() != check.Valid {
					b.Fatalf("%v %v", rep.Verdict(), err)
				}
			}
			b.ReportMetric(float64(b.N)*1e6/b.Elapsed().Seconds(), "events/s")
		})
	}
}

// tokensDot is the state graph TLC would dump (`-dump dot,actionlabels`)
// for a spec with parameterised actions:
//
//	VARIABLE n
//	Init == n = 0
//	Add(k, who) == n + k <= 2 /\ n' = n + k
//	Touch(who) == UNCHANGED n
//	Stop == n = 2 /\ UNCHANGED n
//	Next == \/ \E k \in {1, 2}, who \in {"a", "b"} : Add(k, who)
//	        \/ \E who \in {"a", "b"} : Touch(who)
//	        \/ Stop
//
// Two arguments, and edges that several argument lists label (both
// Touches of a state are one self-loop); some labels are spaced as TLC
// spaces them, some not.
const tokensDot = `strict digraph DiskGraph {
node [shape=box,style=rounded]
nodesep=0.35;
subgraph cluster_graph {
color="white";
10 [label="n = 0",style = filled]
10 -> 11 [label="Add(1, \"a\")",color="black",fontcolor="black"];
11 [label="n = 1",tooltip="n = 1"];
10 -> 11 [label="Add(1,\"b\")",color="black",fontcolor="black"];
10 -> 12 [label="Add(2, \"a\")",color="black",fontcolor="black"];
12 [label="n = 2",tooltip="n = 2"];
10 -> 12 [label="Add(2, \"b\")",color="black",fontcolor="black"];
10 -> 10 [label="Touch(\"a\")",color="black",fontcolor="black"];
10 -> 10 [label="Touch(\"b\")",color="black",fontcolor="black"];
11 -> 12 [label="Add(1, \"a\")",color="black",fontcolor="black"];
11 -> 12 [label="Add(1, \"b\")",color="black",fontcolor="black"];
11 -> 11 [label="Touch(\"a\")",color="black",fontcolor="black"];
11 -> 11 [label="Touch( \"b\" )",color="black",fontcolor="black"];
12 -> 12 [label="Touch(\"a\")",color="black",fontcolor="black"];
12 -> 12 [label="Touch(\"b\")",color="black",fontcolor="black"];
12 -> 12 [label="Stop",color="black",fontcolor="black"];
{rank = same; 10;}
{rank = same; 11;}
{rank = same; 12;}
}
}`

// tokensSpec is the Go transcription of tokensDot's spec: its state is n.
func tokensSpec() *model.Spec[int] {
	who := []model.Value{model.Str("a"), model.Str("b")}
	return &model.Spec[int]{
		Name:      "tokens",
		Vars:      []string{"n"},
		Valuation: func(n int) []model.Value { return []model.Value{model.Int(int64(n))} },
		Init:      func() []int { return []int{0} },
		Actions: []model.Action[int]{
			{Name: "Add",
				Guard: func(n int) string {
					if n+1 > 2 {
						return "n + k <= 2"
					}
					return ""
				},
				Next: func(n int, emit func(int)) {
					for k := 1; n+k <= 2; k++ {
						emit(n + k)
					}
				},
				Args: func(n, m int) [][]model.Value {
					k := m - n
					if k < 1 || k > 2 || m > 2 {
						return nil
					}
					return [][]model.Value{{model.Int(int64(k)), who[0]}, {model.Int(int64(k)), who[1]}}
				}},
			{Name: "Touch", Guard: func(int) string { return "" }, Next: func(n int, emit func(int)) { emit(n) },
				Args: func(n, m int) [][]model.Value {
					if n != m {
						return nil
					}
					return [][]model.Value{{who[0]}, {who[1]}}
				}},
			{Name: "Stop",
				Guard: func(n int) string {
					if n != 2 {
						return "n = 2"
					}
					return ""
				},
				Next: func(n int, emit func(int)) { emit(n) }},
		},
	}
}

// ParseLabel reads TLC's labels of parameterised actions, however spaced,
// and FormatLabel writes them back as TLC does; a label whose arguments do
// not parse is an error.
func TestParseLabel(t *testing.T) {
	for _, tc := range []struct {
		label, action string
		args          []model.Value
		format        string // FormatLabel's; "" for the label itself
		err           error
	}{
		{label: "Stop", action: "Stop"},
		{label: "Action line 3, col 1 of module M", action: "Action line 3, col 1 of module M"},
		{label: `RMPrepare("r1")`, action: "RMPrepare", args: []model.Value{model.Str("r1")}},
		{label: ` Add (1,"a") `, action: "Add", args: []model.Value{model.Int(1), model.Str("a")}, format: `Add(1, "a")`},
		{label: `Send(<<1, "x">>, {2, 1}, [f |-> TRUE], -3)`, action: "Send",
			args:   []model.Value{model.Seq(model.Int(1), model.Str("x")), model.Set(model.Int(1), model.Int(2)), model.Record(model.Field{Name: "f", Value: model.Bool(true)}), model.Int(-3)},
			format: `Send(<<1, "x">>, {1, 2}, [f |-> TRUE], -3)`},
		{label: `Say("a, b)")`, action: "Say", args: []model.Value{model.Str("a, b)")}},
		{label: "A()", err: conform.ErrSyntax},
		{label: " (1)", err: conform.ErrSyntax},
		{label: "A(1", err: conform.ErrSyntax},
		{label: "A(1,)", err: conform.ErrSyntax},
		{label: "A(1 2)", err: conform.ErrSyntax},
		{label: "A(1)x", err: conform.ErrSyntax},
		{label: "A(m1)", err: conform.ErrUnsupported},
	} {
		t.Run(tc.label, func(t *testing.T) {
			action, args, err := conform.ParseLabel(tc.label)
			if tc.err != nil {
				if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.label) {
					t.Fatalf("%q, %v, error %v; want an error wrapping %v that names the label", action, args, err, tc.err)
				}
				return
			}
			if err != nil || action != tc.action || action != conform.ActionOf(tc.label) || !slices.EqualFunc(args, tc.args, model.Value.Equal) || (args == nil) != (tc.args == nil) {
				t.Fatalf("%q, %v, %v; want %q, %v", action, args, err, tc.action, tc.args)
			}
			want := cmp.Or(tc.format, tc.label)
			if got := conform.FormatLabel(action, args); got != want {
				t.Fatalf("FormatLabel: %s, want %s", got, want)
			}
			if a, as, err := conform.ParseLabel(want); err != nil || a != action || !slices.EqualFunc(as, args, model.Value.Equal) {
				t.Fatalf("FormatLabel's label reads back as %q, %v, %v", a, as, err)
			}
		})
	}
}

// A graph spec's actions take the arguments of their edges' labels: Args
// lists those of the edges from s to t, and an action whose labels have
// none has no Args. The transcription's Args label its graph as TLC
// labelled the dump, edge for edge. A label whose arguments do not parse
// makes the graph no spec.
func TestGraphSpecArgs(t *testing.T) {
	g, err := conform.ParseTLCDot(strings.NewReader(tokensDot))
	if err != nil {
		t.Fatal(err)
	}
	sp, err := conform.Spec(g, "tokens")
	if err != nil {
		t.Fatal(err)
	}
	state := func(n int64) int {
		for i, st := range g.States {
			if st.Equal(model.Record(model.Field{Name: "n", Value: model.Int(n)})) {
				return i
			}
		}
		t.Fatalf("no state n = %d", n)
		return -1
	}
	args := func(action string, from, to int64) string {
		a, err := sp.Action(action)
		if err != nil {
			t.Fatal(err)
		}
		if a.Args == nil {
			return "no Args"
		}
		var out []string
		for _, l := range a.Args(state(from), state(to)) {
			out = append(out, conform.FormatLabel(action, l))
		}
		slices.Sort(out)
		return strings.Join(out, " ")
	}
	for _, c := range []struct {
		action   string
		from, to int64
		want     string
	}{
		{"Add", 0, 1, `Add(1, "a") Add(1, "b")`},
		{"Add", 0, 2, `Add(2, "a") Add(2, "b")`},
		{"Add", 1, 2, `Add(1, "a") Add(1, "b")`},
		{"Add", 1, 1, ``},
		{"Touch", 1, 1, `Touch("a") Touch("b")`},
		{"Stop", 2, 2, "no Args"},
	} {
		if got := args(c.action, c.from, c.to); got != c.want {
			t.Errorf("%s from %d to %d: %s, want %s", c.action, c.from, c.to, got, c.want)
		}
	}

	r, err := model.Explore(context.Background(), tokensSpec(), model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mine, err := conform.FromModelWithArgs(tokensSpec(), &r.Graph)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range g.Edges {
		a, as, _ := conform.ParseLabel(e.Action)
		g.Edges[i].Action = conform.FormatLabel(a, as)
	}
	if d := conform.Compare(g, mine); !d.Empty() {
		t.Errorf("the transcription's arguments are not the dump's labels:\n%s", d)
	}
	if _, edges := mine.Counts(); edges != 13 || r.Transitions() != 7 {
		t.Errorf("%d labelled edges for %d transitions, want 13 for 7", edges, r.Transitions())
	}

	bad, err := conform.ParseTLCDot(strings.NewReader(strings.Replace(tokensDot, `Touch(\"a\")`, `Touch(1 2)`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conform.Spec(bad, "bad"); !errors.Is(err, conform.ErrGraph) || !errors.Is(err, conform.ErrSyntax) || !strings.Contains(err.Error(), "Touch(1 2)") {
		t.Errorf("a label whose arguments do not parse: %v", err)
	}
}

// Traces whose events give arguments (right ones, wrong ones, none, to an
// action that takes none) get the same verdicts, violation lines, kinds
// and reasons against the transcription as against the graph TLC dumped:
// the differential test of TestGraphSpecAgreesWithTranscription, for
// arguments.
func TestGraphSpecArgsAgreesWithTranscription(t *testing.T) {
	g, err := conform.ParseTLCDot(strings.NewReader(tokensDot))
	if err != nil {
		t.Fatal(err)
	}
	graph, err := conform.Spec(g, "tokens")
	if err != nil {
		t.Fatal(err)
	}
	ev := func(inst string, seq int, action, args, state string) string {
		if args != "" {
			args = `"args":[` + args + `],`
		}
		return fmt.Sprintf(`{"v":1,"instance":%q,"seq":%d,"action":%q,%s"state":{%s}}`, inst, seq, action, args, state)
	}
	init := func(inst string) string { return ev(inst, 0, "Init", "", `"n":0`) }
	for _, c := range []struct {
		name    string
		lines   []string
		verdict check.Verdict
		input   bool // an input error
	}{
		{"right arguments", []string{init("a"), ev("a", 1, "Add", `1,"a"`, `"n":1`), ev("a", 2, "Touch", `"b"`, ``), ev("a", 3, "Add", `1,"b"`, ``), ev("a", 4, "Stop", ``, ``)}, check.Valid, false},
		{"no arguments", []string{init("a"), ev("a", 1, "Add", ``, `"n":2`), ev("a", 2, "Touch", ``, ``), ev("a", 3, "Stop", ``, ``)}, check.Valid, false},
		{"arguments narrow", []string{init("a"), ev("a", 1, "Add", `1,"a"`, ``), ev("a", 2, "Stop", ``, ``)}, check.Violation, false},
		{"the state of other arguments", []string{init("a"), ev("a", 1, "Add", `2,"a"`, `"n":1`)}, check.Violation, false},
		{"arguments of no step", []string{init("a"), ev("a", 1, "Add", `3,"a"`, ``), init("b"), ev("b", 1, "Add", `1,"c"`, `"n":2`)}, check.Violation, false},
		{"wrong kind", []string{init("a"), ev("a", 1, "Touch", `1`, ``)}, check.Violation, false},
		{"the arguments' step, another state", []string{init("a"), ev("a", 1, "Add", `2,"b"`, `"n":1`)}, check.Violation, false},
		{"not enabled", []string{init("a"), ev("a", 1, "Add", `2,"b"`, ``), ev("a", 2, "Add", `1,"b"`, ``)}, check.Violation, false},
		{"composite", []string{init("a"), `{"v":1,"instance":"a","seq":1,"action":"Add","part":"begin","args":[1,"a"],"state":{}}`,
			`{"v":1,"instance":"a","seq":2,"action":"Add","part":"end","args":[1,"b"],"state":{"n":1}}`}, check.Violation, false},
		{"arguments to Stop", []string{init("a"), ev("a", 1, "Add", ``, `"n":2`), ev("a", 2, "Stop", `"a"`, ``)}, 0, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := strings.Join(c.lines, "\n") + "\n"
			want, werr := check.Check(context.Background(), tokensSpec(), strings.NewReader(data), "t", check.Options{})
			got, gerr := check.Check(context.Background(), graph, strings.NewReader(data), "t", check.Options{})
			if c.input {
				if !errors.Is(werr, check.ErrArgs) || !errors.Is(gerr, check.ErrArgs) ||
					strings.ReplaceAll(werr.Error(), "tokens", "") != strings.ReplaceAll(gerr.Error(), "tokens", "") {
					t.Fatalf("input errors: %v (transcription), %v (graph); want the same ErrArgs", werr, gerr)
				}
				return
			}
			if werr != nil || gerr != nil {
				t.Fatal(werr, gerr)
			}
			if want.Verdict() != c.verdict || got.Verdict() != c.verdict || len(want.Instances) != len(got.Instances) {
				t.Fatalf("verdict %s (transcription), %s (graph); want %s", want.Verdict(), got.Verdict(), c.verdict)
			}
			for i, w := range want.Instances {
				g := got.Instances[i]
				if w.Verdict != g.Verdict || w.LastLine != g.LastLine || (w.Divergence == nil) != (g.Divergence == nil) {
					t.Fatalf("instance %s: %+v vs %+v", w.Instance, w, g)
				}
				if d, e := w.Divergence, g.Divergence; d != nil && (d.Line != e.Line || d.Kind != e.Kind || d.Reason != e.Reason || !slices.Equal(d.Args, e.Args)) {
					t.Errorf("instance %s: divergences differ:\n%s: %s\n%s: %s", w.Instance, d.Kind, d.Reason, e.Kind, e.Reason)
				}
			}
		})
	}
}
