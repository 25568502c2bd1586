package gate

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/cli"
	"github.com/tracecheck/tracecheck/htmlreport"
	"github.com/tracecheck/tracecheck/internal/bundled"
	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/model/machines"
	"github.com/tracecheck/tracecheck/model/program"
	"github.com/tracecheck/tracecheck/model/session"
)

// coverageStage checks every trace the stages wrote against its spec
// (a violation fails the gate, with its divergence report in the HTML
// report) and measures transition coverage: the traces must exercise
// every transition check.CoverageOf counts as required (all but the
// final-state stutters, such as Program's Terminated), or the gate fails.
func coverageStage(ctx context.Context, r *run, s *stage) error {
	for _, name := range []string{"program", "session"} {
		files := r.traces[name]
		if len(files) == 0 {
			s.fail("%s: no traces were written", name)
			continue
		}
		sp, err := lookup(name)
		if err != nil {
			return err
		}
		var reps []*check.Report
		instances, events := 0, 0
		for _, tf := range files {
			f, err := os.Open(tf.path)
			if err != nil {
				return err
			}
			rel := relPath(r.opt.Dir, tf.path)
			rep, err := sp.Check(ctx, bufio.NewReaderSize(f, 1<<16), rel, check.Options{})
			f.Close()
			if errors.Is(err, check.ErrInput) {
				s.fail("%s: %v", rel, err)
				continue
			}
			if err != nil {
				return err
			}
			reps = append(reps, rep)
			events += rep.Events
			for _, in := range rep.Instances {
				instances++
				switch {
				case in.Verdict == check.Violation:
					s.fail("%s: %s: violation: %s", rel, in.Instance, in.Reason)
					r.addDivergence(name, tf.path, rel, rep, in)
				case in.Verdict == check.Incomplete && !tf.incompleteOK:
					s.fail("%s: %s: incomplete: %s", rel, in.Instance, in.Reason)
				}
			}
		}
		var chart htmlreport.Chart
		var required, exercised int
		switch name {
		case "program":
			chart, required, exercised, err = chartOf(ctx, program.Spec(), reps)
		case "session":
			chart, required, exercised, err = chartOf(ctx, session.Spec(session.Options{}), reps)
		}
		if err != nil {
			return err
		}
		r.mu.Lock()
		r.charts = append(r.charts, chart)
		r.covered[name] = [2]int{exercised, required}
		r.mu.Unlock()
		s.figure("%s: %d events, %d instances in %d traces, %s transitions covered (final-state stutters not required)", name, events, instances, len(files), pct(exercised, required))
		if exercised < required {
			var missing []string
			for _, e := range chart.Edges {
				if e.Count == 0 && !notRequired(chart, e) {
					missing = append(missing, fmt.Sprintf("%s --%s--> %s", e.From, e.Action, e.To))
				}
			}
			s.fail("%s: %d transitions never exercised:\n%s", name, required-exercised, strings.Join(missing, "\n"))
		}
		if name == "session" {
			if err := projectedCoverage(ctx, r, s, files); err != nil {
				return err
			}
		}
	}
	return nil
}

// projectedCoverage checks the session traces against each machine spec
// M1–M5, projected (check --projections): a violation of one fails the
// gate; and reports each machine spec's transitions the projected traces
// exercised, and those they did not (docs/machines.md says which the
// implementation cannot reach, and why; they do not fail the gate).
func projectedCoverage(ctx context.Context, r *run, s *stage, files []traceFile) error {
	src := bundled.Session()
	var all []*cli.Projected
	for _, tf := range files {
		f, err := os.Open(tf.path)
		if err != nil {
			return err
		}
		rel := relPath(r.opt.Dir, tf.path)
		proj, err := cli.CheckProjections(ctx, bundled.Specs(), &src, bufio.NewReaderSize(f, 1<<16), rel, check.Options{}, nil, false)
		f.Close()
		if err != nil {
			s.fail("%s: projections: %v", rel, err)
			continue
		}
		all = append(all, proj)
		for _, p := range proj.Reports {
			if p.Err != nil {
				s.fail("%s projected onto %s: %v", rel, p.Projection.Spec, p.Err)
				continue
			}
			for _, in := range p.Report.Instances {
				if in.Verdict == check.Violation || (in.Verdict == check.Incomplete && !tf.incompleteOK) {
					s.fail("%s projected onto %s: %s: %s: %s", rel, p.Projection.Spec, in.Instance, in.Verdict, in.Reason)
				}
			}
		}
		for _, m := range proj.Monitors {
			for _, v := range m.Violations {
				s.fail("%s (%s): %s: %s", rel, m.Monitor.Name, v.Instance, v.Reason)
			}
		}
	}
	covs, err := cli.Coverage(ctx, all...)
	if err != nil {
		return err
	}
	// Each machine spec's statechart, coloured by what the projected
	// traces took, goes into the HTML report after session.fizz's.
	for i := range covs {
		var reps []*check.Report
		for _, p := range all {
			if i < len(p.Reports) && p.Reports[i].Report != nil {
				reps = append(reps, p.Reports[i].Report)
			}
		}
		var chart htmlreport.Chart
		switch covs[i].Spec {
		case "connection":
			chart, _, _, err = chartOf(ctx, machines.Connection(machines.Written), reps)
		case "turn":
			chart, _, _, err = chartOf(ctx, machines.Turn(machines.Written), reps)
		case "response":
			chart, _, _, err = chartOf(ctx, machines.Response(machines.Written), reps)
		case "compaction":
			chart, _, _, err = chartOf(ctx, machines.Compaction(machines.Written), reps)
		case "tts":
			chart, _, _, err = chartOf(ctx, machines.TTS(machines.Written), reps)
		default:
			continue
		}
		if err != nil {
			return err
		}
		chart.Spec += " (projected from the session traces)"
		r.mu.Lock()
		r.charts = append(r.charts, chart)
		r.mu.Unlock()
	}
	var parts []string
	floors := map[string]bundled.CoverageFloor{}
	for _, f := range bundled.MachineCoverageFloors() {
		floors[f.Spec] = f
	}
	for _, c := range covs {
		parts = append(parts, fmt.Sprintf("%s %d/%d", c.Spec, c.Coverage.RequiredExercised, c.Coverage.Required))
		r.mu.Lock()
		r.covered[c.Spec+" (projected)"] = [2]int{c.Coverage.RequiredExercised, c.Coverage.Required}
		r.mu.Unlock()
		// The workload's coverage of each machine spec must not drop:
		// below its floor, the gate fails.
		if f, ok := floors[c.Spec]; ok && c.Coverage.RequiredExercised < f.Min {
			s.fail("%s (projected): %d/%d transitions covered, below the realistic workload's %d (docs/machines.md, Coverage):\n  %s",
				c.Spec, c.Coverage.RequiredExercised, c.Coverage.Required, f.Min, strings.Join(c.Missing(), "\n  "))
		}
		if m := c.Missing(); len(m) > 0 {
			s.Detail += fmt.Sprintf("%s (projected): %d transitions not exercised (docs/machines.md says why):\n  %s\n", c.Spec, len(m), strings.Join(m, "\n  "))
		}
	}
	s.figure("machine specs, projected from the session traces: %s transitions covered (final-state stutters not required)", strings.Join(parts, ", "))
	return nil
}

// chartOf measures the reports' coverage of sp's graph: the chart, the
// transitions that must be covered and those that were.
func chartOf[S comparable](ctx context.Context, sp *model.Spec[S], reps []*check.Report) (htmlreport.Chart, int, int, error) {
	cov, err := check.CoverageOf(ctx, sp, reps...)
	if err != nil {
		return htmlreport.Chart{}, 0, 0, err
	}
	res, err := model.Explore(ctx, sp, model.Options{})
	if err != nil {
		return htmlreport.Chart{}, 0, 0, err
	}
	c := htmlreport.Chart{Spec: sp.Name}
	for _, n := range cov.NotRequired {
		c.NotRequired = append(c.NotRequired, htmlreport.Edge{From: n.From, Action: n.Action, To: n.To, Count: n.Count})
	}
	for _, id := range res.Graph.Init {
		c.Init = append(c.Init, sp.Format(res.Graph.States[id]))
	}
	for _, e := range cov.Edges {
		c.Edges = append(c.Edges, htmlreport.Edge{From: e.From, Action: e.Action, To: e.To, Count: e.Count})
	}
	// The transitions required are check's: all but the final-state
	// stutters (check.NotRequiredReason).
	c.Required, c.RequiredExercised, c.RequiredRule = cov.Required, cov.RequiredExercised, "all but final-state stutters: "+check.NotRequiredReason
	return c, cov.Required, cov.RequiredExercised, nil
}

// addDivergence records a violation for the report: the one-instance text
// report, the trace lines before the divergence, and the replay command.
func (r *run) addDivergence(spec, path, rel string, rep *check.Report, in check.InstanceResult) {
	one := *rep
	one.Instances = []check.InstanceResult{in}
	one.Truncated = nil
	var b strings.Builder
	_ = one.WriteText(&b)
	d := htmlreport.Divergence{Spec: spec, Instance: in.Instance, Trace: rel, Report: b.String(),
		Replay: fmt.Sprintf("tracecheck replay --model %s --instance '%s' %s", spec, in.Instance, path)}
	if in.Divergence != nil {
		d.Excerpt = excerpt(path, in.Divergence.Line, 6)
	}
	r.mu.Lock()
	r.divs = append(r.divs, d)
	r.mu.Unlock()
}

// excerpt returns up to n lines of the file ending at line (1-based), each
// cut to 300 bytes.
func excerpt(path string, line, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	var keep []string
	for i := 1; sc.Scan() && i <= line; i++ {
		if i > line-n {
			l := sc.Text()
			if len(l) > 300 {
				l = l[:300] + "..."
			}
			keep = append(keep, fmt.Sprintf("%6d  %s", i, l))
		}
	}
	return strings.Join(keep, "\n")
}

func relPath(base, path string) string {
	if rel, err := filepath.Rel(base, path); err == nil && !strings.HasPrefix(rel, "..") {
		return rel
	}
	return path
}

// notRequired reports whether e is one of the chart's transitions that
// traces need not exercise.
func notRequired(c htmlreport.Chart, e htmlreport.Edge) bool {
	for _, n := range c.NotRequired {
		if n.From == e.From && n.Action == e.Action && n.To == e.To {
			return true
		}
	}
	return false
}
