package model_test

import (
	"bytes"
	"context"
	"os"
	"testing"

	tp "example.com/twophase/model"

	"github.com/tracecheck/tracecheck/conform"
	"github.com/tracecheck/tracecheck/model"
)

// The transcription is the spec: its state graph equals the one TLC
// computed from spec/TwoPhase.tla (retained in formal/tlc by
// formal/run.sh), state for state and edge for edge, TLC's edges labelled
// by the action they take (TLC writes RMPrepare("r1"); the transcription's
// action is RMPrepare, for every r). A spec edited since the report fails
// here, with the command that makes a new one.
func TestConformsToTLC(t *testing.T) {
	rep, err := conform.LoadReport("../formal/tlc")
	if err != nil {
		t.Fatal(err)
	}
	if err := rep.Verify(".."); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(rep.Path("stdout.txt"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := conform.ParseTLCOutput(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	g, err := conform.LoadGraph(rep.Path("states.dot"))
	if err != nil {
		t.Fatal(err)
	}
	for i := range g.Edges {
		g.Edges[i].Action = conform.ActionOf(g.Edges[i].Action)
	}
	sp := tp.Spec()
	r, err := model.Explore(context.Background(), sp, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mine, err := conform.FromModel(sp, &r.Graph)
	if err != nil {
		t.Fatal(err)
	}
	if d := conform.Compare(g, mine); !d.Empty() {
		t.Fatalf("the transcription is not TLC's TwoPhase:\n%s", d)
	}
	if !out.NoError || r.States() != out.Distinct || r.Depth != out.Depth || !r.OK() {
		t.Fatalf("TLC: %d distinct states, depth %d, no error %v; the transcription: %d, %d, ok %v",
			out.Distinct, out.Depth, out.NoError, r.States(), r.Depth, r.OK())
	}
	t.Logf("%s: %d states, depth %d, equal to the transcription's graph", out.Version, r.States(), r.Depth)
}
