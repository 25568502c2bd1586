package cli_test

import (
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestExplore(t *testing.T) {
	cases := []struct {
		args     []string
		code     int
		contains []string
	}{
		{[]string{"explore", "program"}, exitOK, []string{"9 distinct states found, 15 transitions", "No error has been found",
			"TypeOK, PublishedOnlyVerified, FailedNeverPublished, PublicationIsTerminal, Deadlock", "depth of the complete state graph search is 5", "Verdict: PASS"}},
		{[]string{"explore", "session"}, exitOK, []string{"9 distinct states found, 36 transitions", "ChildrenDieWithParent", "Verdict: PASS"}},
		{[]string{"explore", "session", "--mutant", "no-compaction-teardown"}, exitViolation,
			[]string{"Invariant ChildrenDieWithParent is violated", "State 1: <Initial predicate>", "State 2: <Teardown>", "/\\ compaction = 0", "Verdict: FAIL"}},
		{[]string{"explore", "--mutant", "no-vad-teardown", "session"}, exitViolation, []string{"State 2: <Teardown>"}},
		{[]string{"explore"}, exitUsage, nil},
		{[]string{"explore", "nosuch"}, exitUsage, nil},
		{[]string{"explore", "--format", "yaml", "program"}, exitUsage, nil},
		{[]string{"explore", "program", "--mutant", "no-vad-teardown"}, exitUsage, nil},
		{[]string{"explore", "session", "--mutant", "bogus"}, exitUsage, nil},
		{[]string{"explore", "-h"}, exitOK, nil},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			out, errs, code := runCLI(t, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, out, errs)
			}
			for _, want := range c.contains {
				if !strings.Contains(out, want) {
					t.Errorf("stdout lacks %q:\n%s", want, out)
				}
			}
		})
	}
}

func TestExploreJSON(t *testing.T) {
	out, _, code := runCLI(t, "explore", "--format", "json", "session", "--mutant", "no-compaction-teardown")
	if code != exitViolation {
		t.Fatalf("exit %d", code)
	}
	var got struct {
		Verdict    string `json:"verdict"`
		Violations []struct {
			Trace []map[string]string `json:"trace"`
		} `json:"violations"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	if got.Verdict != "violation" || len(got.Violations) != 1 || len(got.Violations[0].Trace) != 2 ||
		got.Violations[0].Trace[1]["action"] != "Teardown" || got.Violations[0].Trace[1]["compaction"] != "0" {
		t.Errorf("unexpected JSON: %+v", got)
	}
}

// The Mermaid chart of program is seed 000's chart (the publisher's
// original design chart), line for line, followed by comment lines that
// pair its edge labels with the spec's action names.
func TestChartProgramIsSeedChart(t *testing.T) {
	want, err := os.ReadFile("testdata/seed000-chart.mmd")
	if err != nil {
		t.Fatal(err)
	}
	out, errs, code := runCLI(t, "chart", "program")
	if code != exitOK {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var chart, comments []string
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "%%") {
			comments = append(comments, strings.TrimSpace(l))
			continue
		}
		chart = append(chart, l)
	}
	if got := strings.Join(chart, "\n"); got != strings.TrimSpace(string(want)) {
		t.Errorf("chart differs from seed 000's:\n got:\n%s\nwant:\n%s", got, want)
	}
	// Every label that is not an action's name is paired with its action;
	// Interrupt is both, and needs no line.
	for _, pair := range []string{"Execute Python: ExecutePython", "Atomic publication: AtomicPublication",
		"Interrupt before publication: InterruptBeforePublication", "Save or verification fails: SaveOrVerificationFails"} {
		if !slices.Contains(comments, "%% "+pair) {
			t.Errorf("no comment line %q in:\n%s", "%% "+pair, out)
		}
	}
	if slices.ContainsFunc(comments, func(c string) bool { return strings.HasSuffix(c, ": Interrupt") }) {
		t.Errorf("a label equal to its action's name is listed:\n%s", out)
	}
	// A chart drawn with the action names (session) has no such lines.
	if out, _, _ := runCLI(t, "chart", "session"); strings.Contains(out, "%%") {
		t.Errorf("session's chart has label comments:\n%s", out)
	}
}

func TestChartFormats(t *testing.T) {
	out, _, code := runCLI(t, "chart", "--format", "dot", "program")
	if code != exitOK || !strings.Contains(out, `"Verified" -> "Published" [label="Atomic publication"]`) ||
		strings.Contains(out, `"Published" -> "Published"`) {
		t.Errorf("dot output (exit %d):\n%s", code, out)
	}
	out, _, code = runCLI(t, "chart", "--format", "json", "session")
	var g struct {
		States   []map[string]string
		Edges    []struct{ From, To int }
		Stutters []int
	}
	if code != exitOK || json.Unmarshal([]byte(out), &g) != nil || len(g.States) != 9 || len(g.Edges) != 36 || len(g.Stutters) != 1 {
		t.Errorf("json graph (exit %d): %d states %d edges %v stutters", code, len(g.States), len(g.Edges), g.Stutters)
	}
	// Non-terminal self-loops (RespStart while a response is active) stay visible.
	out, _, _ = runCLI(t, "chart", "session")
	if !strings.Contains(out, "s2 --> s2: RespStart") {
		t.Errorf("session chart lost RespStart self-loop:\n%s", out)
	}
	if _, _, code := runCLI(t, "chart", "--format", "svg", "program"); code != exitUsage {
		t.Errorf("unknown format: exit %d, want %d", code, exitUsage)
	}
}

func TestUnknownCommand(t *testing.T) {
	if _, errs, code := runCLI(t, "frobnicate"); code != exitUsage || !strings.Contains(errs, "unknown command") {
		t.Errorf("exit %d, stderr %q", code, errs)
	}
	if out, _, code := runCLI(t, "help"); code != exitOK || !strings.Contains(out, "explore") {
		t.Errorf("help: exit %d\n%s", code, out)
	}
}
