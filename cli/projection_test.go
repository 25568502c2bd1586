package cli_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/cli"
	"github.com/tracecheck/tracecheck/internal/bundled"
)

// One trace, every spec: a session trace checked against session.fizz
// and, projected, against each machine spec M1–M5, and its timing. The
// traces under testdata/projections are a recorded session-demo trace
// (demo-ok), that trace with doctored times (timing-*), and two written
// by hand: issue 15's stale audio (a response cancelled with chunks still
// readable: session.fizz does not see audio, tts does) and a double
// teardown.
func TestProjections(t *testing.T) {
	for _, c := range []struct {
		file  string
		args  []string
		code  int
		specs map[string]check.Verdict // "timing" is the timing monitor's
		why   string                   // in the output, for the first non-valid spec
	}{
		{"demo-ok.ndjson", nil, cli.ExitOK, map[string]check.Verdict{"session": check.Valid, "connection": check.Valid, "turn": check.Valid,
			"response": check.Valid, "compaction": check.Valid, "tts": check.Valid, "timing": check.Valid}, ""},
		{"stale-audio-bad.ndjson", nil, cli.ExitViolation, map[string]check.Verdict{"session": check.Valid, "connection": check.Valid,
			"response": check.Valid, "tts": check.Violation}, "no Cancel successor has the event's state"},
		{"double-teardown-bad.ndjson", nil, cli.ExitViolation, map[string]check.Verdict{"session": check.Violation, "connection": check.Violation},
			"Drop is not enabled in any candidate state"},
		{"timing-slow-teardown-bad.ndjson", nil, cli.ExitViolation, map[string]check.Verdict{"session": check.Valid, "tts": check.Valid, "timing": check.Violation},
			"teardown took 11.999999342s, over its join timeout 10s (+ grace 150ms)"},
		{"timing-late-audio-bad.ndjson", nil, cli.ExitViolation, map[string]check.Verdict{"session": check.Valid, "tts": check.Valid, "timing": check.Violation},
			"after the response's terminal event"},
		{"demo-ok.ndjson", []string{"--bound", "barge-in=1ms"}, cli.ExitViolation, map[string]check.Verdict{"session": check.Valid, "timing": check.Violation},
			"barge-in took 8.704183ms from the speech's start"},
		{"demo-ok.ndjson", []string{"--bound", "barge-in=50ms", "--bound", "join-timeout=1us", "--bound", "teardown-grace=1us"}, cli.ExitViolation,
			map[string]check.Verdict{"timing": check.Violation}, "over its join timeout 1µs (+ grace 1µs)"},
	} {
		t.Run(c.file+strings.Join(c.args, " "), func(t *testing.T) {
			path := filepath.Join("testdata", "projections", c.file)
			args := append(append([]string{"check", "--json", "--projections"}, c.args...), path)
			out, errs, code := runCLI(t, args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, c.code, out, errs)
			}
			type instance struct {
				Verdict, Reason string
				Divergence      *struct{ Kind check.DivergenceKind }
			}
			var js struct {
				Reports []struct {
					Verdict     string `json:"verdict"`
					Projections []struct {
						Spec, Verdict string
						Instances     []instance
					} `json:"projections"`
					Monitors []struct {
						Monitor, Verdict string
						Violations       []instance
					} `json:"monitors"`
				} `json:"reports"`
			}
			if err := json.Unmarshal([]byte(out), &js); err != nil || len(js.Reports) != 1 {
				t.Fatalf("--json: %v\n%s", err, out)
			}
			got := map[string]string{"session": js.Reports[0].Verdict}
			var reasons []string
			for _, p := range js.Reports[0].Projections {
				got[p.Spec] = p.Verdict
				for _, in := range p.Instances {
					reasons = append(reasons, in.Reason)
				}
			}
			for _, m := range js.Reports[0].Monitors {
				got[m.Monitor] = m.Verdict
				for _, v := range m.Violations {
					if v.Divergence == nil || v.Divergence.Kind != check.KindTiming {
						t.Errorf("timing violation %+v: not of kind timing", v)
					}
					reasons = append(reasons, v.Reason)
				}
			}
			for spec, want := range c.specs {
				if got[spec] != want.String() {
					t.Errorf("%s: %q, want %s (all: %v)", spec, got[spec], want, got)
				}
			}
			if c.why != "" && !strings.Contains(strings.Join(reasons, "\n"), c.why) {
				t.Errorf("no report says %q: %q", c.why, reasons)
			}
		})
	}
}

// The text report of check --projections, per spec, as golden files
// (testdata/projections/*.txt): regenerate on purpose with
// go test ./cli -run TestProjectionsGolden -update-check-golden.
func TestProjectionsGolden(t *testing.T) {
	paths, err := filepath.Glob(filepath.Join("testdata", "projections", "*.ndjson"))
	if err != nil || len(paths) == 0 {
		t.Fatalf("no traces: %v", err)
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			out, errs, code := runCLI(t, "check", "--projections", p)
			got := out + errs + "exit " + string(rune('0'+code)) + "\n"
			golden := strings.TrimSuffix(p, ".ndjson") + ".txt"
			if *updateGolden {
				if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(golden)
			if errors.Is(err, fs.ErrNotExist) {
				t.Fatalf("no golden report %s", golden)
			}
			if err != nil {
				t.Fatal(err)
			}
			if got != string(want) {
				t.Errorf("report differs from %s:\ngot:\n%s\nwant:\n%s", golden, got, want)
			}
		})
	}
}

// Without --projections a session trace's report is what it was: the
// machine specs are not mentioned, and a trace without times gets no
// timing section.
func TestProjectionsOffByDefault(t *testing.T) {
	out, _, code := runCLI(t, "check", filepath.Join("testdata", "projections", "stale-audio-bad.ndjson"))
	if code != cli.ExitOK || strings.Contains(out, "projected") || strings.Contains(out, "timing") {
		t.Errorf("exit %d, output mentions projections or timing:\n%s", code, out)
	}
	out, _, code = runCLI(t, "check", filepath.Join("testdata", "projections", "timing-slow-teardown-bad.ndjson"))
	if code != cli.ExitViolation || strings.Contains(out, "projected") || !strings.Contains(out, "(timing): VIOLATION") {
		t.Errorf("a timestamped trace: exit %d, want its timing checked and no projection:\n%s", code, out)
	}
	// On standard input too, where only the first line is read before
	// checking starts.
	data, err := os.ReadFile(filepath.Join("testdata", "projections", "timing-slow-teardown-bad.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	var o, e bytes.Buffer
	code = cli.Run(cli.Config{Specs: bundled.Specs(), Stdin: bytes.NewReader(data)}, []string{"check", "-q", "-"}, &o, &e)
	if code != cli.ExitViolation || !strings.Contains(o.String(), "stdin (timing): VIOLATION") {
		t.Errorf("on stdin: exit %d:\n%s%s", code, o.String(), e.String())
	}
}

// CheckProjections, the library call behind check --projections: its
// reports feed Coverage, which counts the machine specs' transitions the
// projected traces took.
func TestCheckProjectionsCoverage(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "projections", "demo-ok.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	src := bundled.Session()
	proj, err := cli.CheckProjections(context.Background(), bundled.Specs(), &src, bytes.NewReader(data), "demo", check.Options{}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	covs, err := cli.Coverage(context.Background(), proj)
	if err != nil || len(covs) != 5 {
		t.Fatalf("coverage: %v, %d", err, len(covs))
	}
	for _, c := range covs {
		if c.Coverage.RequiredExercised == 0 || c.Coverage.RequiredExercised > c.Coverage.Required {
			t.Errorf("%s: %d/%d transitions", c.Spec, c.Coverage.RequiredExercised, c.Coverage.Required)
		}
		if len(c.Missing()) != c.Coverage.Required-c.Coverage.RequiredExercised {
			t.Errorf("%s: %d missing listed, %d/%d exercised", c.Spec, len(c.Missing()), c.Coverage.RequiredExercised, c.Coverage.Required)
		}
	}
	bad := bundled.Session()
	bad.Projections = append(bad.Projections, cli.Projection{Spec: "nosuch"})
	if _, err := cli.CheckProjections(context.Background(), bundled.Specs(), &bad, bytes.NewReader(data), "demo", check.Options{}, nil, false); err == nil {
		t.Error("a projection onto an unregistered spec: no error")
	}
}

// What impl/session's details add to the projections, in a trace written
// by hand with each of them: the exit paths that fired before teardown
// (exits), a child's commit after teardown began (torn), a pipeline that
// had returned before its response's end (returned), teardown closing an
// ended response's pipeline (closed), the VAD stopped in a pause
// (vad_silence). Each projects onto a transition that the plain events
// could not reach.
func TestProjectionDetails(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "projections", "details-ok.ndjson"))
	if err != nil {
		t.Fatal(err)
	}
	src := bundled.Session()
	proj, err := cli.CheckProjections(context.Background(), bundled.Specs(), &src, bytes.NewReader(data), "details", check.Options{}, nil, false)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string][]string{ // spec: "FROM-fragment ACTION TO-fragment" that must be exercised
		"connection": {`exits = {"drop"} Close exits = {"close", "drop"}`, `exits = {"close", "drop"} ChildPanics exits = {"close", "drop", "panic"}`,
			`exits = {"close", "drop", "panic"} TeardownOnDrop handled = {"drop"}`},
		"turn":       {`vad = "silent" QuietFrame vad = "silent"`, `silence = 1 Abort vad = "terminated"`},
		"response":   {`conn = "torn" /\ coord = "idle" /\ r = <<"none", "none">> Start conn = "torn" /\ coord = "active"`},
		"compaction": {`conn = "torn" /\ comp = "running" JobEnds conn = "torn" /\ comp = "idle"`},
		"tts": {`resp = "live" /\ worker = "running" Return resp = "live" /\ worker = "returned"`,
			`resp = "live" /\ worker = "returned" Cancel resp = "cancelled"`, `resp = "finished" /\ worker = "running" Close resp = "finished"`},
	}
	for _, r := range proj.Reports {
		if r.Err != nil || r.Report.Verdict() != check.Valid {
			t.Errorf("%s: %v, %v", r.Projection.Spec, r.Err, r.Report.Verdict())
			continue
		}
		for _, w := range want[r.Projection.Spec] {
			found := false
			for _, e := range r.Report.Exercised {
				from, act, to := w, "", ""
				for _, a := range []string{"Close", "ChildPanics", "TeardownOnDrop", "QuietFrame", "Abort", "Start", "JobEnds", "Return", "Cancel"} {
					if i := strings.Index(w, " "+a+" "); i >= 0 {
						from, act, to = w[:i], a, w[i+len(a)+2:]
						break
					}
				}
				if e.Action == act && strings.Contains(e.From, from) && strings.Contains(e.To, to) {
					found = true
				}
			}
			if !found {
				t.Errorf("%s: no exercised transition %q in %+v", r.Projection.Spec, w, r.Report.Exercised)
			}
		}
	}
}

// A composition spec's trace checked against its parts' specs, in Go: the
// bundled session.fizz registers a projection onto each of its five
// machine specs (internal/bundled); a team's composition spec registers
// its own (cli.Spec.Projections). Issue 15's stale audio is valid for
// session.fizz, which does not see audio, and a violation of tts.
func ExampleCheckProjections() {
	f, err := os.Open(filepath.Join("testdata", "projections", "stale-audio-bad.ndjson"))
	if err != nil {
		panic(err)
	}
	defer f.Close()
	session := bundled.Session()
	proj, err := cli.CheckProjections(context.Background(), bundled.Specs(), &session, f, "stale-audio", check.Options{}, nil, false)
	if err != nil {
		panic(err)
	}
	for _, r := range proj.Reports {
		fmt.Printf("%s: %v\n", r.Projection.Spec, r.Report.Verdict())
		for _, in := range r.Report.Instances {
			if d := in.Divergence; d != nil {
				fmt.Printf("  %s: %s: %s\n", in.Instance, d.Action, d.Reason)
			}
		}
	}
	// Output:
	// connection: valid
	// turn: valid
	// response: valid
	// compaction: valid
	// tts: violation
	//   s1/r1: Cancel: no Cancel successor has the event's state
}

// check --junit with --projections: a test suite per projected spec and
// one for the timing, whose failures name no replay command (their file
// is no trace replay can read).
func TestProjectionsJUnit(t *testing.T) {
	junit := filepath.Join(t.TempDir(), "j.xml")
	_, errs, code := runCLI(t, "check", "-q", "--projections", "--junit", junit, filepath.Join("testdata", "projections", "timing-late-audio-bad.ndjson"))
	if code != cli.ExitViolation {
		t.Fatalf("exit %d: %s", code, errs)
	}
	b, err := os.ReadFile(junit)
	if err != nil {
		t.Fatal(err)
	}
	x := string(b)
	for _, want := range []string{`(projected onto connection)" tests="4" failures="0"`, `(projected onto tts)" tests="14" failures="0"`,
		`(timing)" tests="1" failures="1"`, "after the response&#39;s terminal event"} {
		if !strings.Contains(x, want) {
			t.Errorf("JUnit report lacks %q:\n%s", want, x)
		}
	}
	if strings.Contains(x, "replay:") {
		t.Errorf("a projected or timing failure names a replay command:\n%s", x)
	}
}

// The corpus's valid session traces — written by hand, or recorded by
// earlier versions of impl/session without the details the projections
// read — are valid against every machine spec too: without a response's
// number the projection numbers them as impl/session does, and a trace
// that never says a pipeline stopped leaves its ends unknown (valid if
// nothing contradicts the spec), never wrong.
func TestProjectionsOfTheCorpus(t *testing.T) {
	paths, _ := filepath.Glob(corpusDir + "session/*-ok.ndjson")
	rec, _ := filepath.Glob(corpusDir + "session/recorded/*-ok.ndjson")
	paths = append(paths, rec...)
	if len(paths) < 4 {
		t.Fatalf("corpus: %v", paths)
	}
	for _, p := range paths {
		out, errs, code := runCLI(t, "check", "-q", "--projections", p)
		if code != cli.ExitOK || strings.Count(out, "(projected onto ") != 5 {
			t.Errorf("%s: exit %d\n%s%s", p, code, out, errs)
		}
	}
}

// coverage --projections: the machine specs' coverage by the projected
// traces, after the spec's own.
func TestCoverageProjections(t *testing.T) {
	file := filepath.Join("testdata", "projections", "demo-ok.ndjson")
	out, errs, code := runCLI(t, "coverage", "--projections", file)
	if code != cli.ExitOK || !strings.Contains(out, "model session: exercised 23/36") ||
		!strings.Contains(out, "projected onto tts:\nmodel tts: exercised 18/72 transitions") {
		t.Fatalf("exit %d\n%s%s", code, out, errs)
	}
	out, _, code = runCLI(t, "coverage", "--projections", "--json", file)
	var js struct {
		Coverage    check.Coverage
		Projections []struct {
			Spec     string
			Coverage check.Coverage
		}
	}
	if err := json.Unmarshal([]byte(out), &js); code != cli.ExitOK || err != nil || js.Coverage.RequiredExercised != 23 || len(js.Projections) != 5 ||
		js.Projections[1].Spec != "turn" || js.Projections[1].Coverage.RequiredExercised != 7 {
		t.Fatalf("--json: exit %d, %v: %+v", code, err, js)
	}
	if _, _, code := runCLI(t, "coverage", "--projections", "-"); code != cli.ExitUsage {
		t.Errorf("--projections on standard input: exit %d, want usage", code)
	}
}
