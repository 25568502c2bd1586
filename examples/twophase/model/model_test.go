package model_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	tp "example.com/twophase/model"

	"github.com/tracecheck/tracecheck/check"
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

// The transcription's arguments are TLC's: with every edge of a
// parameterised action labelled by its Args as TLC labels it
// (RMPrepare("r1")), its graph equals TLC's with TLC's own labels, edge
// for edge: the Args of each action name exactly the r that TLC took the
// step with, and no other.
func TestArgsAreTLCsLabels(t *testing.T) {
	g, err := conform.LoadGraph("../formal/tlc/states.dot")
	if err != nil {
		t.Fatal(err)
	}
	withArgs := 0
	for i, e := range g.Edges {
		action, args, err := conform.ParseLabel(e.Action)
		if err != nil {
			t.Fatal(err)
		}
		if args != nil {
			withArgs++
		}
		g.Edges[i].Action = conform.FormatLabel(action, args) // TLC's spacing, whatever it is, in one form
	}
	sp := tp.Spec()
	r, err := model.Explore(context.Background(), sp, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	mine, err := conform.FromModelWithArgs(sp, &r.Graph)
	if err != nil {
		t.Fatal(err)
	}
	if d := conform.Compare(g, mine); !d.Empty() {
		t.Fatalf("the transcription's arguments are not TLC's labels:\n%s", d)
	}
	if _, edges := mine.Counts(); withArgs == 0 || edges <= r.Transitions() {
		t.Fatalf("%d TLC edges with arguments, %d labelled edges for %d transitions: want more edges than transitions", withArgs, edges, r.Transitions())
	}
}

// Each trace of testdata/ gets its verdict, with the same violation line,
// kind and reason, against the transcription and against TLC's graph; and
// so does each with its arguments left out, when a wrong argument is no
// longer seen. Arguments make each step of commit-args-ok one transition,
// where the action alone leaves several.
func TestTestdata(t *testing.T) {
	g, err := conform.LoadGraph("../formal/tlc/states.dot")
	if err != nil {
		t.Fatal(err)
	}
	graph, err := conform.Spec(g, "tlc")
	if err != nil {
		t.Fatal(err)
	}
	args := regexp.MustCompile(`"args":\[[^]]*\],`)
	for _, c := range []struct {
		file           string
		want, unargued check.Verdict // as written, and without args
	}{
		{"commit-ok", check.Valid, check.Valid},
		{"commit-early-bad", check.Violation, check.Violation},
		{"commit-args-ok", check.Valid, check.Valid},
		{"prepare-wrong-args-bad", check.Violation, check.Incomplete},
	} {
		file := filepath.Join("..", "testdata", c.file+".ndjson")
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []struct {
			name string
			data []byte
			want check.Verdict
		}{{"as written", data, c.want}, {"without args", args.ReplaceAll(data, nil), c.unargued}} {
			t.Run(c.file+"/"+v.name, func(t *testing.T) {
				mine, err := check.Check(context.Background(), tp.Spec(), bytes.NewReader(v.data), file, check.Options{})
				if err != nil {
					t.Fatal(err)
				}
				tlc, err := check.Check(context.Background(), graph, bytes.NewReader(v.data), file, check.Options{})
				if err != nil {
					t.Fatal(err)
				}
				if mine.Verdict() != v.want || tlc.Verdict() != v.want {
					t.Fatalf("verdicts %s (transcription), %s (TLC's graph); want %s", mine.Verdict(), tlc.Verdict(), v.want)
				}
				for i, in := range mine.Instances {
					d, e := in.Divergence, tlc.Instances[i].Divergence
					if (d == nil) != (e == nil) || d != nil && (d.Line != e.Line || d.Reason != e.Reason || d.Kind != e.Kind) {
						t.Errorf("divergences differ:\n%+v\n%+v", d, e)
					}
				}
				if ambiguous := v.name == "without args"; c.file == "commit-args-ok" && ((mine.Ambiguous > 0) != ambiguous || (tlc.Ambiguous > 0) != ambiguous) {
					t.Errorf("%d and %d ambiguous steps; want some: %v", mine.Ambiguous, tlc.Ambiguous, ambiguous)
				}
			})
		}
	}
}
