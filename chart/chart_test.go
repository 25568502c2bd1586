package chart_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/chart"
	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/model/program"
	"github.com/tracecheck/tracecheck/model/session"
)

func explore[S comparable](t *testing.T, sp *model.Spec[S]) *model.Graph[S] {
	t.Helper()
	r, err := model.Explore(context.Background(), sp, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return &r.Graph
}

func TestMermaidProjection(t *testing.T) {
	sp := program.Spec()
	g := explore(t, sp)
	var b bytes.Buffer
	st := chart.Style[program.State]{State: func(s program.State) string { return s.Phase.String() }}
	if err := chart.Mermaid(&b, sp, g, st); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	// 9 states project onto 7 phases; the 5 Terminated self-loops are hidden
	// and the two Failed (and Interrupted) states merge.
	if n := strings.Count(out, " --> "); n != 11 { // [*] --> Ready plus 10 chart edges
		t.Errorf("%d arrows, want 11:\n%s", n, out)
	}
	if strings.Contains(out, "Terminated") || strings.Contains(out, "Failed --> Failed") {
		t.Errorf("terminal self-loop drawn:\n%s", out)
	}
	if !strings.Contains(out, "Staging --> Interrupted: Interrupt") {
		t.Errorf("default edge label is the action name:\n%s", out)
	}
}

func TestMermaidNonIdentifierLabels(t *testing.T) {
	sp := session.Spec(session.Options{})
	var b bytes.Buffer
	if err := chart.Mermaid(&b, sp, explore(t, sp), chart.Style[session.State]{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{"s0 : conn=0 vad=0 resp=0 compaction=0", "[*] --> s0", "s2 --> s2: RespStart"} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q:\n%s", want, out)
		}
	}
}

func TestJSONWholeGraph(t *testing.T) {
	sp := program.Spec()
	var b bytes.Buffer
	if err := chart.JSON(&b, sp, explore(t, sp)); err != nil {
		t.Fatal(err)
	}
	var g chart.JSONGraph
	if err := json.Unmarshal(b.Bytes(), &g); err != nil {
		t.Fatal(err)
	}
	if len(g.States) != 9 || len(g.Edges) != 15 || len(g.Init) != 1 || g.States[g.Init[0]]["phase"] != `"Ready"` {
		t.Errorf("graph: %d states, %d edges, init %v", len(g.States), len(g.Edges), g.Init)
	}
}

func TestDOTQuotes(t *testing.T) {
	sp := session.Spec(session.Options{})
	var b bytes.Buffer
	if err := chart.DOT(&b, sp, explore(t, sp), chart.Style[session.State]{}); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), `digraph "session" {`) || !strings.Contains(b.String(), `[label="Teardown"]`) {
		t.Errorf("dot:\n%s", b.String())
	}
}

// Mermaid renders seed 000's chart from the transcription.
func ExampleMermaid() {
	sp := program.Spec()
	r, _ := model.Explore(context.Background(), sp, model.Options{})
	var b bytes.Buffer
	_ = chart.Mermaid(&b, sp, &r.Graph, chart.Style[program.State]{
		State: func(s program.State) string { return s.Phase.String() },
		Edge:  func(a string) string { return program.Labels[a] },
	})
	for _, l := range strings.Split(b.String(), "\n")[:4] {
		fmt.Println(l)
	}
	// Output:
	// stateDiagram-v2
	//     [*] --> Ready
	//     Ready --> Running: Execute Python
	//     Running --> Staging: Program succeeds
}
