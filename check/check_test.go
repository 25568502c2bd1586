package check_test

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/cli"
	"github.com/tracecheck/tracecheck/internal/bundled"
	"github.com/tracecheck/tracecheck/internal/refspec"
	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/model/program"
	"github.com/tracecheck/tracecheck/model/session"
	"github.com/tracecheck/tracecheck/trace"
)

// checkWith runs check.Check with the bundled model check --model names
// so (the registered specs are the one list of them).
func checkWith(model string, r io.Reader, name string, opt check.Options) (*check.Report, error) {
	return cli.CheckWith(context.Background(), bundled.Specs(), model, r, name, opt)
}

type expectation struct {
	file, model, verdict string
	line                 int // first bad line, 0 for none
	instance             string
}

// readExpected reads traces/EXPECTED.tsv, and adds every trace under
// traces/ that it does not list, with the verdict its name carries
// (-ok, -bad, -incomplete) and the model its directory names.
func readExpected(t testing.TB) []expectation {
	t.Helper()
	f, err := os.Open("../traces/EXPECTED.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []expectation
	listed := map[string]bool{}
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		if len(cols) != 6 {
			t.Fatalf("EXPECTED.tsv:%d: %d columns, want 6", n, len(cols))
		}
		e := expectation{file: cols[0], model: cols[1], verdict: cols[2], instance: cols[4]}
		if cols[3] != "-" {
			if e.line, err = strconv.Atoi(cols[3]); err != nil {
				t.Fatalf("EXPECTED.tsv:%d: bad line %q", n, cols[3])
			}
		}
		if e.instance == "-" {
			e.instance = ""
		}
		listed[e.file] = true
		out = append(out, e)
	}
	paths, _ := filepath.Glob("../traces/*/*.ndjson")
	more, _ := filepath.Glob("../traces/*/*/*.ndjson")
	for _, p := range append(paths, more...) {
		rel, _ := filepath.Rel("../traces", p)
		rel = filepath.ToSlash(rel)
		if listed[rel] {
			continue
		}
		e := expectation{file: rel, model: strings.Split(rel, "/")[0]}
		base := strings.TrimSuffix(filepath.Base(rel), ".ndjson")
		switch {
		case strings.HasSuffix(base, "-ok"):
			e.verdict = "valid"
		case strings.HasSuffix(base, "-incomplete"):
			e.verdict = "incomplete"
		case strings.HasSuffix(base, "-bad"):
			e.verdict = "violation"
		default:
			t.Errorf("traces/%s: not in EXPECTED.tsv and its name carries no verdict (-ok, -bad, -incomplete)", rel)
			continue
		}
		out = append(out, e)
	}
	return out
}

// TestCorpus replays the whole traces/ corpus and checks each trace's
// verdict, first bad line and offending instance.
func TestCorpus(t *testing.T) {
	exps := readExpected(t)
	if len(exps) < 15 {
		t.Fatalf("only %d corpus entries", len(exps))
	}
	for _, e := range exps {
		t.Run(e.model+"/"+e.file, func(t *testing.T) {
			f, err := os.Open(filepath.Join("../traces", e.file))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			rep, err := checkWith(e.model, f, e.file, check.Options{})
			if err != nil {
				t.Fatalf("input error: %v", err)
			}
			if got := rep.Verdict().String(); got != e.verdict {
				var buf bytes.Buffer
				rep.WriteText(&buf)
				t.Fatalf("verdict %s, want %s\n%s", got, e.verdict, buf.String())
			}
			switch e.verdict {
			case "violation":
				var bad []check.InstanceResult
				for _, in := range rep.Instances {
					if in.Verdict == check.Violation {
						bad = append(bad, in)
					}
				}
				if len(bad) != 1 {
					t.Fatalf("%d violating instances, want 1", len(bad))
				}
				d := bad[0].Divergence
				if d == nil || d.Line != e.line || bad[0].Instance != e.instance || d.Instance != e.instance {
					t.Fatalf("divergence %+v in %s, want line %d in %s", d, bad[0].Instance, e.line, e.instance)
				}
				if len(d.Candidates) == 0 || d.Reason == "" || d.Event == "" {
					t.Errorf("thin divergence report: %+v", d)
				}
			case "incomplete":
				if e.line > 0 {
					if rep.Truncated == nil || rep.Truncated.Line != e.line || rep.Truncated.Instance != e.instance {
						t.Fatalf("truncation %+v, want line %d instance %s", rep.Truncated, e.line, e.instance)
					}
				}
				for _, in := range rep.Instances {
					if in.Verdict == check.Incomplete && in.Reason == "" {
						t.Errorf("instance %s incomplete without a reason", in.Instance)
					}
				}
			}
		})
	}
}

// A violation's report names the guard that failed, diffs the state and
// lists the last matched events.
func TestDivergenceReport(t *testing.T) {
	f, err := os.Open("../traces/program/publish-unverified-bad.ndjson")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rep, err := check.Check(context.Background(), program.Spec(), f, "p.ndjson", check.Options{Last: 2})
	if err != nil {
		t.Fatal(err)
	}
	d := rep.Instances[0].Divergence
	if d == nil {
		t.Fatal("no divergence")
	}
	if d.Kind != check.KindGuard || d.File != "p.ndjson" || d.Line != 4 || d.Seq != 3 || d.Action != "AtomicPublication" {
		t.Errorf("divergence header %+v", d)
	}
	c := d.Candidates[0]
	if c.State != `phase = "Staging" /\ verified = FALSE /\ published = FALSE` ||
		strings.Join(c.Enabled, ",") != "ReloadAndVerify,SaveOrVerificationFails,Interrupt" ||
		len(c.Why) != 1 || !strings.Contains(c.Why[0], `phase = "Verified"`) {
		t.Errorf("candidate %+v", c)
	}
	if !strings.Contains(d.Diff, "- published = FALSE\n+ published = TRUE") {
		t.Errorf("diff:\n%s", d.Diff)
	}
	if len(d.Recent) != 2 || d.Recent[0].Line != 2 || d.Recent[1].Line != 3 {
		t.Errorf("recent %+v, want lines 2 and 3", d.Recent)
	}
	var txt, js bytes.Buffer
	if err := rep.WriteText(&txt); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"p.ndjson: VIOLATION", "p.ndjson:4: instance run-5", "why: AtomicPublication is not enabled", "last 2 matched events",
		"replay: tracecheck replay --model program --instance run-5 p.ndjson"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, txt.String())
		}
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(js.String(), `"verdict": "violation"`) || !strings.Contains(js.String(), `"kind": "guard"`) {
		t.Errorf("JSON report:\n%s", js.String())
	}
}

// The state diff names the variable that differs when the action is
// enabled but lands elsewhere, and the mutant's invariant is reported.
func TestDivergenceKinds(t *testing.T) {
	tests := []struct {
		model, file string
		kind        check.DivergenceKind
		reason      string
	}{
		{"session", "compaction-outlives-session-bad.ndjson", check.KindState, "no Teardown successor"},
		{"session-mutant-no-compaction-teardown", "compaction-outlives-session-bad.ndjson", check.KindInvariant, "ChildrenDieWithParent"},
		{"session", "stutter-changes-state-bad.ndjson", check.KindStutter, "changes spec variables"},
		{"session", "action-inside-composite-bad.ndjson", check.KindComposite, "inside the open composite"},
		{"session", "child-after-teardown-bad.ndjson", check.KindGuard, "VadStart is not enabled"},
	}
	for _, tc := range tests {
		t.Run(tc.model+"/"+tc.file, func(t *testing.T) {
			f, err := os.Open("../traces/session/" + tc.file)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			rep, err := checkWith(tc.model, f, tc.file, check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			d := rep.Instances[0].Divergence
			if d == nil || d.Kind != tc.kind || !strings.Contains(d.Reason, tc.reason) {
				t.Fatalf("divergence %+v, want kind %s, reason with %q", d, tc.kind, tc.reason)
			}
		})
	}
}

// A DivergenceKind is its name in text (and so in JSON), and reads back
// from it.
func TestDivergenceKindText(t *testing.T) {
	for _, tc := range []struct {
		kind check.DivergenceKind
		text string
	}{
		{check.KindGuard, "guard"}, {check.KindState, "state"}, {check.KindInvariant, "invariant"},
		{check.KindProperty, "property"}, {check.KindInit, "init"}, {check.KindStutter, "stutter"},
		{check.KindComposite, "composite"}, {check.KindArgs, "args"}, {check.KindDomain, "domain"}, {check.KindTiming, "timing"}, {0, "DivergenceKind(0)"}, {11, "DivergenceKind(11)"},
	} {
		text, err := tc.kind.MarshalText()
		var back check.DivergenceKind
		backErr := back.UnmarshalText(text)
		valid := tc.kind >= check.KindGuard && tc.kind <= check.KindTiming
		if tc.kind.String() != tc.text || string(text) != tc.text || err != nil || (backErr == nil) != valid || (valid && back != tc.kind) {
			t.Errorf("%d: String %q, MarshalText %q (%v), read back as %d (%v); want %q", uint8(tc.kind), tc.kind, text, err, uint8(back), backErr, tc.text)
		}
	}
	var k check.DivergenceKind
	if err := k.UnmarshalText(nil); err == nil {
		t.Errorf("empty kind read as %v", k)
	}
}

const progInit = `{"v":1,"instance":"r","seq":0,"action":"Init","state":{"phase":"Ready","verified":false,"published":false}}`

// Bad input of issue 3 item 7 that the engine sees: one-line errors naming
// file:line, testable with errors.Is, no panic.
func TestInputErrors(t *testing.T) {
	tests := []struct {
		name  string
		lines []string
		line  int
		want  error
		text  string
	}{
		{"unknown action", []string{progInit, `{"v":1,"instance":"r","seq":1,"action":"Publish","state":{}}`}, 2, check.ErrUnknownAction, `"Publish"`},
		{"unknown variable", []string{progInit, `{"v":1,"instance":"r","seq":1,"action":"ExecutePython","state":{"fase":"Running"}}`}, 2, check.ErrUnknownVariable, `"fase"`},
		{"wrong type", []string{`{"v":1,"instance":"r","seq":0,"action":"Init","state":{"phase":3}}`}, 1, check.ErrValue, "state.phase is int 3"},
		{"float", []string{`{"v":1,"instance":"r","seq":0,"action":"Init","state":{"phase":1.5}}`}, 1, check.ErrValue, "1.5"},
		{"null", []string{`{"v":1,"instance":"r","seq":0,"action":"Init","state":{"verified":null}}`}, 1, check.ErrValue, "null"},
		{"bigint overflow", []string{`{"v":1,"instance":"r","seq":0,"action":"Init","state":{"phase":{"#bigint":"99999999999999999999"}}}`}, 1, check.ErrValue, "64 bits"},
		{"unknown ITF form", []string{`{"v":1,"instance":"r","seq":0,"action":"Init","state":{"phase":{"#bag":[]}}}`}, 1, check.ErrValue, "#bag"},
		{"seq repeats", []string{progInit, `{"v":1,"instance":"r","seq":0,"action":"ExecutePython","state":{}}`}, 2, check.ErrSequence, "repeats"},
		{"seq goes backwards", []string{`{"v":1,"instance":"r","seq":5,"action":"Init","state":{}}`, `{"v":1,"instance":"x","seq":1,"action":"Init","state":{}}`, `{"v":1,"instance":"r","seq":4,"action":"ExecutePython","state":{}}`}, 3, check.ErrSequence, "backwards"},
		{"seq repeats, odd instance name", []string{strings.Replace(progInit, `"r"`, `"r\nx"`, 1), strings.Replace(progInit, `"r"`, `"r\nx"`, 1)}, 2, check.ErrSequence, `instance "r\nx": seq 0 repeats`},
		{"Init as part", []string{`{"v":1,"instance":"r","seq":0,"action":"Init","part":"begin","state":{}}`}, 1, trace.ErrField, "composite"},
		{"malformed JSON", []string{progInit, `{"v":1,"instance":"r","seq":1,"action":"ExecutePython","state":{"phase":"Running"}`}, 2, trace.ErrSyntax, "column"},
		{"empty", nil, 1, trace.ErrEmpty, "empty"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := strings.Join(tc.lines, "\n")
			if len(tc.lines) > 0 {
				in += "\n"
			}
			_, err := check.Check(context.Background(), program.Spec(), strings.NewReader(in), "in.ndjson", check.Options{})
			if err == nil {
				t.Fatal("no error")
			}
			if !errors.Is(err, check.ErrInput) || !errors.Is(err, tc.want) {
				t.Errorf("error %q: want ErrInput and %v", err, tc.want)
			}
			msg := err.Error()
			prefix := fmt.Sprintf("in.ndjson:%d: ", tc.line)
			if !strings.HasPrefix(msg, prefix) || !strings.Contains(msg, tc.text) || strings.Contains(msg, "\n") {
				t.Errorf("error %q: want one line %q... containing %q", msg, prefix, tc.text)
			}
		})
	}
}

// counterSpec is the checker's small nondeterministic spec (package
// refspec): Bump adds 1 or 2 to x, Finish ends once x >= 3, property
// NoBigStepPast3 forbids bumping by 2 from 3 or more.
func counterSpec() *model.Spec[refspec.Counter] { return refspec.CounterSpec() }

func ev(seq int, action, state string) string {
	return fmt.Sprintf(`{"v":1,"instance":"c","seq":%d,"action":%q,"state":{%s}}`, seq, action, state)
}

// Partial states and nondeterminism: an event that leaves x out keeps both
// successors as candidates until a later event decides.
func TestCandidateSets(t *testing.T) {
	tests := []struct {
		name    string
		events  []string
		verdict check.Verdict
		kind    check.DivergenceKind // 0: no divergence
		final   int
	}{
		{"partial then decided", []string{ev(0, "Init", `"x":0`), ev(1, "Bump", ``), ev(2, "Bump", `"x":3`), ev(3, "Finish", `"done":true`)}, check.Valid, 0, 1},
		{"ambiguous end", []string{ev(0, "Init", ``), ev(1, "Bump", ``), ev(2, "Bump", ``), ev(3, "Bump", ``)}, check.Incomplete, 0, 3},
		{"unreachable value", []string{ev(0, "Init", ``), ev(1, "Bump", `"x":3`)}, check.Violation, check.KindState, 0},
		{"property on step", []string{ev(0, "Init", ``), ev(1, "Bump", `"x":2`), ev(2, "Bump", `"x":3`), ev(3, "Bump", `"x":5`)}, check.Violation, check.KindProperty, 0},
		{"stutter keeps candidates that fit", []string{ev(0, "Init", ``), ev(1, "Bump", ``), `{"v":1,"instance":"c","seq":2,"action":"log","stutter":true,"state":{"x":2}}`, ev(3, "Bump", `"x":3`), ev(4, "Finish", ``)}, check.Valid, 0, 1},
		{"bad initial state", []string{ev(0, "Init", `"x":1`)}, check.Violation, check.KindInit, 0},
		{"no Init first", []string{ev(0, "Bump", ``)}, check.Violation, check.KindInit, 0},
		{"second Init", []string{ev(0, "Init", ``), ev(1, "Init", ``)}, check.Violation, check.KindInit, 0},
		{"part without begin", []string{ev(0, "Init", ``), `{"v":1,"instance":"c","seq":1,"action":"Bump","part":"end","state":{}}`}, check.Violation, check.KindComposite, 0},
		{"composite merges parts", []string{ev(0, "Init", ``), `{"v":1,"instance":"c","seq":1,"action":"Bump","part":"begin","state":{"x":9}}`, `{"v":1,"instance":"c","seq":2,"action":"Bump","part":"end","state":{"x":2}}`}, check.Incomplete, 0, 1},
		{"composite of a disabled action", []string{ev(0, "Init", ``), `{"v":1,"instance":"c","seq":1,"action":"Finish","part":"begin","state":{}}`}, check.Violation, check.KindGuard, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := strings.Join(tc.events, "\n") + "\n"
			rep, err := check.Check(context.Background(), counterSpec(), strings.NewReader(in), "c", check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			res := rep.Instances[0]
			if res.Verdict != tc.verdict {
				var b bytes.Buffer
				rep.WriteText(&b)
				t.Fatalf("verdict %v, want %v\n%s", res.Verdict, tc.verdict, b.String())
			}
			if tc.kind != 0 && (res.Divergence == nil || res.Divergence.Kind != tc.kind) {
				t.Fatalf("divergence %+v, want kind %s", res.Divergence, tc.kind)
			}
			if len(res.Final) != tc.final || len(res.FinalValues) != tc.final {
				t.Errorf("final candidates %q, want %d", res.Final, tc.final)
			}
			for i, vals := range res.FinalValues {
				if x, _ := vals[0].AsInt(); !strings.Contains(res.Final[i], fmt.Sprintf("x = %d", x)) {
					t.Errorf("FinalValues %v disagree with Final %q", vals, res.Final[i])
				}
			}
		})
	}
}

// The checker works as a live monitor on a pipe: the violation is
// reported while the writer is still writing.
func TestLiveMonitor(t *testing.T) {
	pr, pw := io.Pipe()
	seen := make(chan check.InstanceResult, 1)
	done := make(chan *check.Report)
	go func() {
		rep, _ := check.Check(context.Background(), program.Spec(), pr, "pipe", check.Options{
			OnViolation: func(r check.InstanceResult) { seen <- r }})
		done <- rep
	}()
	fmt.Fprintln(pw, progInit)
	fmt.Fprintln(pw, `{"v":1,"instance":"r","seq":1,"action":"AtomicPublication","state":{}}`)
	r := <-seen // before the stream ends
	if r.Instance != "r" || r.Divergence.Line != 2 {
		t.Errorf("live violation %+v", r)
	}
	fmt.Fprintln(pw, strings.Replace(progInit, `"r"`, `"r2"`, 1))
	pw.Close()
	if rep := <-done; rep.Verdict() != check.Violation || rep.Events != 3 {
		t.Errorf("final report: %v, %d events", rep.Verdict(), rep.Events)
	}
}

// A Checker is a trace.Sink: an implementation can emit into it directly.
func TestCheckerEmit(t *testing.T) {
	c, err := check.New(session.Spec(session.Options{}), check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var sink trace.Sink = c
	emits := []trace.Event{
		{Instance: "s", Seq: 0, Action: trace.InitAction, State: map[string]any{"conn": 0, "vad": 0, "resp": 0, "compaction": 0}},
		{Instance: "s", Seq: 1, Action: session.Teardown, Part: trace.PartBegin, State: map[string]any{"conn": 1}},
		{Instance: "s", Seq: 2, Action: session.Teardown, Part: trace.PartEnd, State: map[string]any{"vad": 2, "resp": 2, "compaction": 2}},
	}
	for _, e := range emits {
		if err := sink.Emit(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := sink.Emit(trace.Event{Instance: "s", Seq: 3, Action: "Nope", State: map[string]any{}}); !errors.Is(err, check.ErrUnknownAction) {
		t.Errorf("unknown action: err = %v", err)
	}
	rep := c.Close()
	if rep.Verdict() != check.Valid {
		var b bytes.Buffer
		rep.WriteText(&b)
		t.Errorf("verdict %v\n%s", rep.Verdict(), b.String())
	}
}

func TestCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := check.Check(ctx, program.Spec(), strings.NewReader(progInit+"\n"), "x", check.Options{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("err = %v", err)
	}
}

// Coverage of the program corpus: the valid and invalid traces exercise
// some of Program's 15 transitions, and the numbers add up.
func TestCoverage(t *testing.T) {
	var reps []*check.Report
	for _, name := range []string{"published-ok", "execution-fails-partial-ok", "interrupt-before-publication-ok"} {
		f, err := os.Open("../traces/program/" + name + ".ndjson")
		if err != nil {
			t.Fatal(err)
		}
		rep, err := check.Check(context.Background(), program.Spec(), f, name, check.Options{})
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		reps = append(reps, rep)
	}
	cov, err := check.CoverageOf(context.Background(), program.Spec(), reps...)
	if err != nil {
		t.Fatal(err)
	}
	// published: 4 edges; execution fails: ExecutePython (shared), ExecutionFails;
	// interrupt: ExecutePython, ProgramSucceeds, ReloadAndVerify (shared),
	// InterruptBeforePublication, Terminated on Interrupted.
	if cov.Total != 15 || cov.Exercised != 7 {
		var b bytes.Buffer
		cov.WriteText(&b)
		t.Fatalf("coverage %d/%d, want 7/15\n%s", cov.Exercised, cov.Total, b.String())
	}
	// The 5 Terminated self-loops of final states are set apart (one of
	// them exercised by the interrupt trace): 6 of the 10 others.
	if cov.Required != 10 || cov.RequiredExercised != 6 || len(cov.NotRequired) != 5 {
		t.Errorf("required %d/%d, %d not required; want 6/10 and 5", cov.RequiredExercised, cov.Required, len(cov.NotRequired))
	}
	for _, n := range cov.NotRequired {
		if n.Action != "Terminated" || n.From != n.To || n.Reason != check.NotRequiredReason {
			t.Errorf("not required: %+v", n)
		}
	}
	var b bytes.Buffer
	cov.WriteText(&b)
	for _, want := range []string{"exercised 6/10 transitions (60%); 5 final-state stutters not required, listed apart (7/15 counting them)",
		"not exercised:\n  phase = \"Running\"", "--PublicationFails-->", "not required (final-state stutter: ", "      1  phase = \"Interrupted\" /\\ verified = TRUE"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("coverage text lacks %q:\n%s", want, b.String())
		}
	}
	if strings.Contains(b.String()[:strings.Index(b.String(), "not required (")], "Terminated") {
		t.Errorf("a Terminated self-loop is listed as not exercised:\n%s", b.String())
	}
}

// With Forget, a monitor over an endless stream of sessions holds only the
// live ones: memory is bounded by live instances, not by instances seen.
func TestForget(t *testing.T) {
	c, err := check.New(session.Spec(session.Options{}), check.Options{Forget: true, Linger: 3, Name: "live"})
	if err != nil {
		t.Fatal(err)
	}
	st := func(conn, vad, resp, comp int) map[string]any {
		return map[string]any{"conn": conn, "vad": vad, "resp": resp, "compaction": comp}
	}
	maxLive := 0
	const sessions = 2000
	for i := 0; i < sessions; i++ {
		// Two sessions overlap at a time.
		for _, e := range []trace.Event{
			{Instance: fmt.Sprint("s", i), Seq: 0, Action: trace.InitAction, State: st(0, 0, 0, 0)},
			{Instance: fmt.Sprint("s", i), Seq: 1, Action: session.VadStart, State: st(0, 1, 0, 0)},
		} {
			if err := c.Emit(e); err != nil {
				t.Fatal(err)
			}
		}
		if i > 0 {
			if err := c.Emit(trace.Event{Instance: fmt.Sprint("s", i-1), Seq: 2, Action: session.Teardown, State: st(1, 2, 2, 2)}); err != nil {
				t.Fatal(err)
			}
		}
		maxLive = max(maxLive, c.Live())
	}
	if maxLive > 3 {
		t.Errorf("%d live instances at most, want 3 (2 live, 1 lingering)", maxLive)
	}
	// A stutter event soon after teardown is still accepted.
	if err := c.Emit(trace.Event{Instance: "s1998", Seq: 3, Action: "tts.flush", Stutter: true, State: st(1, 2, 2, 2)}); err != nil {
		t.Fatal(err)
	}
	// A late event of a forgotten session is still a violation.
	if err := c.Emit(trace.Event{Instance: "s5", Seq: 3, Action: session.VadStart, State: st(1, 1, 2, 2)}); err != nil {
		t.Fatal(err)
	}
	rep := c.Close()
	// s1998 lingers (its stutter restarted the clock), s1999 is live, s5 is new.
	if rep.Forgotten != sessions-2 || rep.Verdict() != check.Violation || len(rep.Instances) != 3 {
		var b bytes.Buffer
		rep.WriteText(&b)
		t.Fatalf("forgotten %d, verdict %v, %d listed\n%s", rep.Forgotten, rep.Verdict(), len(rep.Instances), b.String())
	}
	var b bytes.Buffer
	rep.WriteText(&b)
	if !strings.Contains(b.String(), "1998 more valid instances finished and were not kept") {
		t.Errorf("report:\n%s", b.String())
	}
}

// Coverage counts a step only when exactly one transition fits it.
func TestCoverageAmbiguous(t *testing.T) {
	in := strings.Join([]string{ev(0, "Init", `"x":0`), ev(1, "Bump", ``), ev(2, "Bump", `"x":3`), ev(3, "Finish", ``)}, "\n") + "\n"
	rep, err := check.Check(context.Background(), counterSpec(), strings.NewReader(in), "c", check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Ambiguous != 2 || len(rep.Exercised) != 1 || rep.Exercised[0].Action != "Finish" || rep.Exercised[0].Count != 1 {
		t.Fatalf("ambiguous %d, exercised %+v", rep.Ambiguous, rep.Exercised)
	}
	cov, err := check.CoverageOf(context.Background(), counterSpec(), rep)
	if err != nil {
		t.Fatal(err)
	}
	if cov.Exercised != 1 || cov.Ambiguous != 2 {
		t.Errorf("coverage %d/%d, ambiguous %d", cov.Exercised, cov.Total, cov.Ambiguous)
	}
}

// Emit is safe from several goroutines, each emitting its own instance.
func TestCheckerEmitConcurrent(t *testing.T) {
	c, err := check.New(program.Spec(), check.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			name := fmt.Sprint("run-", g)
			for i, a := range []struct{ action, phase string }{{"Init", "Ready"}, {"ExecutePython", "Running"}, {"ExecutionFails", "Failed"}} {
				if err := c.Emit(trace.Event{Instance: name, Seq: uint64(i), Action: a.action, State: map[string]any{"phase": a.phase}}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	rep := c.Close()
	if rep.Verdict() != check.Valid || len(rep.Instances) != 8 || rep.Events != 24 {
		t.Errorf("verdict %v, %d instances, %d events", rep.Verdict(), len(rep.Instances), rep.Events)
	}
}

// wide is a spec with wide nondeterminism: Jump goes to any of 300
// states. Events that leave x out keep every one of them as a candidate.
func wideSpec() *model.Spec[int] {
	return &model.Spec[int]{
		Name:      "wide",
		Vars:      []string{"x"},
		Valuation: func(s int) []model.Value { return []model.Value{model.Int(int64(s))} },
		Init:      func() []int { return []int{0} },
		Actions: []model.Action[int]{{Name: "Jump", Guard: func(int) string { return "" },
			Next: func(_ int, emit func(int)) {
				for i := 0; i < 300; i++ {
					emit(i)
				}
			}}},
		Terminal: func(s int) bool { return s == 7 },
	}
}

func TestWideCandidateSets(t *testing.T) {
	for _, tc := range []struct {
		events  []string
		verdict check.Verdict
		final   int
	}{
		{[]string{ev(0, "Init", ``), ev(1, "Jump", ``), ev(2, "Jump", ``)}, check.Incomplete, 300},
		{[]string{ev(0, "Init", ``), ev(1, "Jump", ``), ev(2, "Jump", ``), ev(3, "Jump", `"x":7`)}, check.Valid, 1},
		{[]string{ev(0, "Init", ``), ev(1, "Jump", ``), `{"v":1,"instance":"c","seq":2,"action":"log","stutter":true,"state":{"x":7}}`}, check.Valid, 1},
		{[]string{ev(0, "Init", ``), ev(1, "Jump", ``), ev(2, "Jump", `"x":300`)}, check.Violation, 0},
	} {
		in := strings.Join(tc.events, "\n") + "\n"
		rep, err := check.Check(context.Background(), wideSpec(), strings.NewReader(in), "w", check.Options{})
		if err != nil {
			t.Fatal(err)
		}
		res := rep.Instances[0]
		if res.Verdict != tc.verdict || len(res.Final) != tc.final {
			t.Errorf("%d events: verdict %v with %d final states, want %v with %d", len(tc.events), res.Verdict, len(res.Final), tc.verdict, tc.final)
		}
	}
}

// An #unserializable value constrains nothing, so the instance can never
// be valid: at best incomplete. A violation elsewhere is still found.
func TestUnserializable(t *testing.T) {
	pub := func(published string) string {
		return strings.Join([]string{
			progInit,
			`{"v":1,"instance":"r","seq":1,"action":"ExecutePython","state":{"phase":"Running","verified":{"#unserializable":"?"}}}`,
			`{"v":1,"instance":"r","seq":2,"action":"ProgramSucceeds","state":{"phase":"Staging"}}`,
			`{"v":1,"instance":"r","seq":3,"action":"ReloadAndVerify","state":{"phase":"Verified","published":` + published + `}}`,
			`{"v":1,"instance":"r","seq":4,"action":"AtomicPublication","state":{"phase":"Published"}}`,
		}, "\n") + "\n"
	}
	for _, tc := range []struct {
		name    string
		in      string
		verdict check.Verdict
		reason  string
	}{
		{"top level", pub("false"), check.Incomplete, "state.verified at line 2 is #unserializable"},
		{"nested", pub(`{"a":{"#unserializable":"?"}}`), check.Incomplete, "state.verified at line 2"},
		{"violation still found", pub("true"), check.Violation, "no ReloadAndVerify successor"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := check.Check(context.Background(), program.Spec(), strings.NewReader(tc.in), "u", check.Options{Forget: true, Linger: 1})
			if err != nil {
				t.Fatal(err)
			}
			if len(rep.Instances) != 1 {
				t.Fatalf("%d instances listed (forgotten %d)", len(rep.Instances), rep.Forgotten)
			}
			if res := rep.Instances[0]; res.Verdict != tc.verdict || !strings.Contains(res.Reason, tc.reason) {
				t.Errorf("verdict %v (%s), want %v (%s)", res.Verdict, res.Reason, tc.verdict, tc.reason)
			}
		})
	}
	if _, err := check.ParseJSONValue([]byte(`[1,{"#unserializable":"f"}]`)); !errors.Is(err, check.ErrUnserializable) {
		t.Errorf("ParseJSONValue: %v", err)
	}
}
