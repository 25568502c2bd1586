package conform_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
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
