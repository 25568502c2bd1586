package htmlreport

import (
	"bytes"
	"encoding/xml"
	"io"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// sample is a run with everything a report can show: a chart with
// self-loops, parallel and back edges and unexercised transitions, a
// failed stage, a divergence and a kill matrix with a survivor.
func sample() *Run {
	return &Run{
		Title:   "tracecheck verify",
		Command: "tracecheck verify --quick",
		Started: time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC),
		Elapsed: 42 * time.Second,
		Verdict: "FAIL",
		Stages: []Stage{
			{Name: "explore", Verdict: "PASS", Figures: "program: 9 states, 15 transitions", Elapsed: 20 * time.Millisecond},
			{Name: "sessions", Verdict: "FAIL", Figures: "1 violation in 200 sessions", Elapsed: 3 * time.Second, Detail: "line 1\nline 2"},
			{Name: "formal", Verdict: "SKIP", Figures: "TLA2TOOLS not set"},
		},
		Charts: []Chart{{
			Spec: "light", Required: 5, RequiredExercised: 4, RequiredRule: "all but final-state stutters",
			NotRequired: []Edge{{From: "on = FALSE /\\ used = 2", Action: "Idle", To: "on = FALSE /\\ used = 2", Count: 0}},
			Init:        []string{"on = FALSE /\\ used = 0"},
			Edges: []Edge{
				{From: "on = FALSE /\\ used = 0", Action: "SwitchOn", To: "on = TRUE /\\ used = 1", Count: 120},
				{From: "on = TRUE /\\ used = 1", Action: "SwitchOff", To: "on = FALSE /\\ used = 2", Count: 119},
				{From: "on = TRUE /\\ used = 1", Action: "Blink", To: "on = FALSE /\\ used = 2", Count: 0},
				{From: "on = FALSE /\\ used = 2", Action: "Reset", To: "on = FALSE /\\ used = 0", Count: 3},
				{From: "on = FALSE /\\ used = 2", Action: "Stay", To: "on = FALSE /\\ used = 2", Count: 7},
				{From: "on = FALSE /\\ used = 2", Action: "Idle", To: "on = FALSE /\\ used = 2", Count: 0},
			},
		}},
		Divergences: []Divergence{{
			Spec: "light", Instance: "lamp-7", Trace: "traces/lamp.ndjson",
			Report:  "lamp-7: violation at line 12: SwitchOn is not enabled",
			Excerpt: `{"instance":"lamp-7","action":"SwitchOn"}`,
			Replay:  "tracecheck check --model light traces/lamp.ndjson",
		}},
		Kills: []Kill{
			{Mutant: "light/skip-reset", File: "light.go", KilledBy: "TestReset", Elapsed: 2 * time.Second},
			{Mutant: "light/double-on", File: "light.go", Elapsed: 3 * time.Second},
		},
		Links: []Link{{Text: "porcupine: sessions", Href: "porcupine/sessions.html"}},
	}
}

func render(t *testing.T, r *Run) string {
	t.Helper()
	var b bytes.Buffer
	if err := Write(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestReportShowsEverything(t *testing.T) {
	out := render(t, sample())
	for _, want := range []string{
		`<span class="badge fail" id="verdict">FAIL</span>`,
		"tracecheck verify --quick",
		"program: 9 states, 15 transitions",
		"1 violation in 200 sessions",
		"light: 4/5 required transitions exercised (80%) · 4/6 in all",
		"required: all but final-state stutters",
		"1 transitions not required, not counted in the percentage",
		"lamp-7: violation at line 12: SwitchOn is not enabled",
		"tracecheck check --model light traces/lamp.ndjson",
		"2 mutants, 1 survived.",
		`<span class="badge fail">SURVIVED</span>`,
		`href="porcupine/sessions.html"`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	if got := strings.Count(out, `<tr><td>`); got < 3+6+2 {
		t.Errorf("%d table rows, want at least 11 (stages, transitions, kills)", got)
	}
	// Self-contained: nothing is fetched from anywhere.
	for _, bad := range []*regexp.Regexp{regexp.MustCompile(`(?i)<script`), regexp.MustCompile(`(?i)(src|href)="(https?:)?//`), regexp.MustCompile(`(?i)@import|url\(http`)} {
		if loc := bad.FindStringIndex(out); loc != nil {
			t.Errorf("report is not self-contained: %q", out[loc[0]:min(len(out), loc[1]+40)])
		}
	}
}

// Everything in a report may come from a hostile trace or program: names,
// actions, reports. None of it may become markup.
func TestReportEscapes(t *testing.T) {
	r := sample()
	evil := `<script>alert(1)</script><img src=x onerror=alert(2)>"'&`
	r.Title = evil
	r.Stages[0].Figures = evil
	r.Charts[0].Spec = evil
	r.Charts[0].Edges[0].Action = evil
	r.Charts[0].Edges[0].From = evil + ` /\ x = 1`
	r.Divergences[0].Report = evil
	r.Divergences[0].Excerpt = evil
	r.Kills[0].KilledBy = evil
	r.Links[0].Href = "javascript:alert(3)"
	out := render(t, r)
	for _, bad := range []string{"<script", "<img", "javascript:alert"} {
		if strings.Contains(out, bad) {
			t.Errorf("hostile input reached the page as markup: %q", bad)
		}
	}
}

func TestSVGIsWellFormedWithOneGroupPerTransition(t *testing.T) {
	c := sample().Charts[0]
	var b bytes.Buffer
	if err := WriteSVG(&b, &c); err != nil {
		t.Fatal(err)
	}
	dec := xml.NewDecoder(&b)
	var edges, states, initial int
	counts := map[string]string{}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok || se.Name.Local != "g" {
			continue
		}
		attrs := map[string]string{}
		for _, a := range se.Attr {
			attrs[a.Name.Local] = a.Value
		}
		switch attrs["class"] {
		case "edge":
			edges++
			counts[attrs["data-action"]] = attrs["data-count"]
		case "state":
			states++
			if attrs["data-state"] == c.Init[0] {
				initial++
			}
		}
	}
	if edges != len(c.Edges) || states != 3 || initial != 1 {
		t.Fatalf("drew %d edges (want %d), %d states (want 3), initial found %d times", edges, len(c.Edges), states, initial)
	}
	for _, e := range c.Edges {
		if got := counts[e.Action]; got != strconv.Itoa(e.Count) {
			t.Errorf("%s: data-count %q, want %d", e.Action, got, e.Count)
		}
	}
}

func TestLayoutColumnsByDistance(t *testing.T) {
	c := sample().Charts[0]
	order, byID := layout(&c)
	if len(order) != 3 {
		t.Fatalf("%d nodes, want 3", len(order))
	}
	want := map[string]int{c.Init[0]: 0, "on = TRUE /\\ used = 1": 1, "on = FALSE /\\ used = 2": 2}
	for id, l := range want {
		if byID[id].layer != l {
			t.Errorf("%s: column %d, want %d", id, byID[id].layer, l)
		}
	}
	// No two states overlap.
	for i, a := range order {
		for _, b := range order[i+1:] {
			if a.x < b.x+b.w && b.x < a.x+a.w && a.y < b.y+b.h && b.y < a.y+a.h {
				t.Errorf("%q and %q overlap", a.id, b.id)
			}
		}
	}
}

func TestEmptyChart(t *testing.T) {
	out := render(t, &Run{Title: "empty", Verdict: "PASS", Charts: []Chart{{Spec: "nothing"}}})
	if !strings.Contains(out, "nothing: 0/0 transitions exercised (—)") {
		t.Errorf("empty chart: %s", out)
	}
}
