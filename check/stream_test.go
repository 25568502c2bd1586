package check_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/model/program"
	"github.com/tracecheck/tracecheck/trace"
)

// progEvent is one event of the program spec with a full state.
func progEvent(inst string, seq int, action, phase string, verified, published bool) string {
	return fmt.Sprintf(`{"v":1,"instance":%q,"seq":%d,"action":%q,"state":{"phase":%q,"verified":%v,"published":%v}}`,
		inst, seq, action, phase, verified, published)
}

// published is a whole valid run of the program spec.
func published(inst string) []string {
	return []string{
		progEvent(inst, 0, "Init", "Ready", false, false),
		progEvent(inst, 1, "ExecutePython", "Running", false, false),
		progEvent(inst, 2, "ProgramSucceeds", "Staging", false, false),
		progEvent(inst, 3, "ReloadAndVerify", "Verified", true, false),
		progEvent(inst, 4, "AtomicPublication", "Published", true, true),
	}
}

// streamed records what Options.OnResult receives, and when.
type streamed struct {
	results []check.InstanceResult
	events  []int // the events fed when each result came
	fed     int
}

// TestOnResult: with Options.OnResult, each result comes as soon as it is
// final (a violation at once, the rest at Close in order of first
// appearance, an instance Forget drops when it drops it), the report
// counts them instead of listing them, and its verdict and counts are
// those of the same check without OnResult.
func TestOnResult(t *testing.T) {
	ra := published("a")
	bad := progEvent("b", 1, "AtomicPublication", "Published", false, true) // not enabled in Ready
	lines := []string{
		progEvent("c", 0, "Init", "Ready", false, false), // c stays incomplete
		progEvent("b", 0, "Init", "Ready", false, false),
		ra[0], ra[1], bad, ra[2], ra[3], ra[4],
		progEvent("b", 2, "ExecutePython", "Running", false, false), // after b's violation: counted only
	}
	for _, tc := range []struct {
		name   string
		opt    check.Options
		order  []string // instances in the order reported
		at     []int    // events fed when each was reported (len(lines): at Close)
		counts check.Tally
	}{
		{"at close", check.Options{}, []string{"b", "c", "a"}, []int{5, 9, 9}, check.Tally{Valid: 1, Incomplete: 1, Violation: 1}},
		// With Forget and Linger 1, a is dropped, and reported, one event
		// after it finished.
		{"forget", check.Options{Forget: true, Linger: 1}, []string{"b", "a", "c"}, []int{5, 9, 9}, check.Tally{Valid: 1, Incomplete: 1, Violation: 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var got streamed
			opt := tc.opt
			opt.OnResult = func(res check.InstanceResult) {
				got.results = append(got.results, res)
				got.events = append(got.events, got.fed)
			}
			c, err := check.New(program.Spec(), opt)
			if err != nil {
				t.Fatal(err)
			}
			for i, l := range lines {
				r, err := trace.ParseEvent([]byte(l), trace.Pos{File: "t", Line: i + 1})
				if err != nil {
					t.Fatal(err)
				}
				got.fed++
				if err := c.Feed(r); err != nil {
					t.Fatal(err)
				}
			}
			rep := c.Close()
			var order []string
			for _, r := range got.results {
				order = append(order, r.Instance)
			}
			if diff := cmp.Diff(tc.order, order); diff != "" {
				t.Fatalf("order -want +got\n%s", diff)
			}
			if diff := cmp.Diff(tc.at, got.events); diff != "" {
				t.Errorf("reported after how many events -want +got\n%s", diff)
			}
			if len(rep.Instances) != 0 || rep.Streamed != tc.counts || rep.Forgotten != 0 || rep.Total() != 3 ||
				rep.Verdict() != check.Violation || rep.Events != len(lines) || rep.Count(check.Valid) != 1 {
				t.Errorf("report: %d listed, streamed %+v, forgotten %d, verdict %v, %d events",
					len(rep.Instances), rep.Streamed, rep.Forgotten, rep.Verdict(), rep.Events)
			}
			for _, r := range got.results {
				switch r.Instance {
				case "b": // as of the violating event
					if r.Verdict != check.Violation || r.Events != 2 || r.LastLine != 5 || r.Divergence == nil || r.Divergence.Line != 5 {
						t.Errorf("b: %+v", r)
					}
				case "a":
					if r.Verdict != check.Valid || r.Events != 5 || r.FirstLine != 3 || r.LastLine != 8 || len(r.Final) != 1 {
						t.Errorf("a: %+v", r)
					}
				case "c":
					if r.Verdict != check.Incomplete || !strings.Contains(r.Reason, "does not stop") {
						t.Errorf("c: %+v", r)
					}
				}
			}
			// Without OnResult, the same check lists the same verdicts.
			plain, err := check.Check(context.Background(), program.Spec(), strings.NewReader(strings.Join(lines, "\n")+"\n"), "t", check.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if plain.Verdict() != rep.Verdict() || plain.Count(check.Valid) != 1 || plain.Count(check.Incomplete) != 1 || len(plain.Instances) != 3 {
				t.Errorf("without OnResult: %v, %d listed", plain.Verdict(), len(plain.Instances))
			}
		})
	}
}

// A check that stops on an input error reports nothing more through
// OnResult: the violation seen before the error, not the instances still
// open.
func TestOnResultInputError(t *testing.T) {
	in := strings.Join([]string{
		progEvent("a", 0, "Init", "Ready", false, false),
		progEvent("b", 0, "Init", "Ready", false, false),
		progEvent("b", 1, "AtomicPublication", "Published", false, true),
		`{"v":1,"instance":"a","seq":1`,
		progEvent("a", 2, "ExecutePython", "Running", false, false),
	}, "\n") + "\n"
	var got []string
	rep, err := check.Check(context.Background(), program.Spec(), strings.NewReader(in), "t", check.Options{
		OnResult: func(r check.InstanceResult) { got = append(got, r.Instance+" "+r.Verdict.String()) }})
	if !errors.Is(err, check.ErrInput) || !errors.Is(err, trace.ErrSyntax) {
		t.Fatalf("err = %v", err)
	}
	if diff := cmp.Diff([]string{"b violation"}, got); diff != "" {
		t.Errorf("reported -want +got\n%s", diff)
	}
	if rep.Streamed.Violation != 1 || rep.Total() != 1 || rep.Events != 3 {
		t.Errorf("report %+v", rep)
	}
}

// changedReader serves different bytes to ReadAt than to Read: an input
// rewritten under the checker.
type changedReader struct {
	*strings.Reader
	other string
}

func (r changedReader) ReadAt(p []byte, off int64) (int, error) {
	return strings.NewReader(r.other).ReadAt(p, off)
}

// A divergence report's last matched events are the same whether the
// checker kept copies of them (a pipe) or their positions in an input it
// reads again (a file); an input that changed since is said so.
func TestRecentFromInput(t *testing.T) {
	ra := published("run")
	lines := append(ra[:3:3], "", "  ", progEvent("run", 3, "AtomicPublication", "Published", true, true))
	in := strings.Join(lines, "\r\n") + "\r\n" // blank lines and \r\n too
	want := []check.Recent{{Line: 1, Event: ra[0]}, {Line: 2, Event: ra[1]}, {Line: 3, Event: ra[2]}}
	for _, tc := range []struct {
		name string
		r    io.Reader
		last int
		want []check.Recent
	}{
		{"pipe", pipeReader{strings.NewReader(in)}, 0, want},
		{"file", strings.NewReader(in), 0, want},
		{"file, last 2", strings.NewReader(in), 2, want[1:]},
		{"pipe, last 1", pipeReader{strings.NewReader(in)}, 1, want[2:]},
		{"file, none", strings.NewReader(in), -1, nil},
		{"file read from an offset", func() io.Reader {
			r := strings.NewReader("skipped\n" + in)
			r.Seek(int64(len("skipped\n")), io.SeekStart)
			return r
		}(), 0, want},
		{"changed file", changedReader{strings.NewReader(in), strings.Repeat("x", len(in))}, 1,
			[]check.Recent{{Line: 3, Event: "(the line changed in the input since it was checked)"}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := check.Check(context.Background(), program.Spec(), tc.r, "t", check.Options{Last: tc.last})
			if err != nil {
				t.Fatal(err)
			}
			d := rep.Instances[0].Divergence
			if d == nil || d.Line != 6 {
				t.Fatalf("divergence %+v", d)
			}
			if diff := cmp.Diff(tc.want, d.Recent); diff != "" {
				t.Errorf("recent -want +got\n%s", diff)
			}
		})
	}
}

// TextStream lists what it is told to, the not listed in one line, and
// the summary line last.
func TestTextStream(t *testing.T) {
	var lines []string
	for i := range 5 {
		lines = append(lines, progEvent(fmt.Sprint("inc", i), 0, "Init", "Ready", false, false))
	}
	lines = append(lines, published("ok")...)
	lines = append(lines, progEvent("bad", 0, "Init", "Running", false, false))
	in := strings.Join(lines, "\n") + "\n"
	for _, tc := range []struct {
		name      string
		valid     bool
		max       int
		live      bool
		want, not []string
		instLines int
	}{
		{"all", true, 0, false, []string{"  ok: valid, 5 events (lines 6-10)\n", "  inc4: incomplete"}, []string{"not listed"}, 7},
		{"quiet", false, 2, false, []string{"  ... 4 more not listed (0 violation, 4 incomplete)\n"}, []string{"ok: valid"}, 2},
		{"live", false, 0, true, []string{"f.ndjson: VIOLATION (live)\n  bad: violation"}, []string{"ok: valid"}, 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var b bytes.Buffer
			ts := check.NewTextStream(&b, "f.ndjson", "program")
			ts.Valid, ts.Max, ts.Live = tc.valid, tc.max, tc.live
			rep, err := check.Check(context.Background(), program.Spec(), strings.NewReader(in), "f.ndjson", check.Options{OnResult: ts.Result})
			if err != nil {
				t.Fatal(err)
			}
			if err := ts.End(rep); err != nil {
				t.Fatal(err)
			}
			out := b.String()
			for _, w := range tc.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tc.not {
				if strings.Contains(out, w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
			summary := "f.ndjson: VIOLATION (model program, 11 events, 7 instances: 1 valid, 5 incomplete, 1 violation)\n"
			if !strings.HasSuffix(out, summary) {
				t.Errorf("output does not end with the summary:\n%s", out)
			}
			n := 0
			for _, l := range strings.Split(out, "\n") {
				if strings.HasPrefix(l, "  ") && !strings.HasPrefix(l, "   ") && !strings.HasPrefix(l, "  ...") {
					n++
				}
			}
			if n != tc.instLines {
				t.Errorf("%d instance lines, want %d:\n%s", n, tc.instLines, out)
			}
			if i := strings.Index(out, "bad: violation"); i < 0 || i > strings.Index(out, "inc0") && tc.name == "all" {
				t.Errorf("the violation is not first:\n%s", out)
			}
		})
	}
}

// With Forget and OnResult, memory follows the live instances: over a
// stream of 5,000 runs one after another, the checker never holds more
// than the runs of the last Linger events, and reports every run.
func TestOnResultFlat(t *testing.T) {
	valid := 0
	c, err := check.New(program.Spec(), check.Options{Forget: true, Linger: 10, OnResult: func(r check.InstanceResult) {
		if r.Verdict == check.Valid && r.Events == 5 {
			valid++
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	maxLive, line := 0, 0
	for i := range 5000 {
		for _, l := range published(fmt.Sprint("run", i)) {
			line++
			r, err := trace.ParseEvent([]byte(l), trace.Pos{File: "t", Line: line})
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Feed(r); err != nil {
				t.Fatal(err)
			}
			maxLive = max(maxLive, c.Live())
		}
	}
	rep := c.Close()
	if maxLive > 4 || valid != 5000 || rep.Total() != 5000 || rep.Streamed.Valid != 5000 || rep.Forgotten != 0 || c.Live() != 0 {
		t.Errorf("at most %d live, %d valid reported, report %+v", maxLive, valid, rep.Streamed)
	}
}
