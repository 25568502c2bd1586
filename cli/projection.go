package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/trace"
)

// Projection checks a spec's traces against another registered spec: a
// composition spec's trace (seed 001's session.fizz) carries, in its
// events' details, what each of its machines' own specs needs, and the
// projection rewrites the events that concern one machine into a trace
// of that machine's spec. check --projections validates a trace against
// its spec and, at once, each projection of it against its target spec,
// with a report per spec.
type Projection struct {
	// Spec names the registered spec the projected events are checked
	// against.
	Spec string
	// Doc says in one line which events belong to it.
	Doc string
	// New returns a fresh projector, one per trace file.
	New func() Projector
}

// Source is one event of the trace being projected, as read: the event,
// where it is, and its line as written.
type Source struct {
	Event trace.Event
	Pos   trace.Pos
	Line  []byte
}

// Projector rewrites a trace's events, in trace order, into events of its
// projection's spec. It is used by one goroutine.
type Projector interface {
	// Project returns the events of the target spec that src stands for,
	// in order (none when src does not concern the target). Each carries
	// its own instance name and sequence number; the projection names
	// them (e.g. "SESSION/r3" for a session's response 3).
	Project(src Source) []trace.Event
	// Closed reports whether the projection ended the projected instance
	// itself, as a window: a bounded spec (two responses, two chunks)
	// sees a long run as a series of windows, each from an initial state,
	// and a closed window that nothing contradicted, though it may not
	// end where the spec stops, is valid. An instance the projection did
	// not close gets its verdict as any trace's.
	Closed(instance string) bool
}

// Monitor checks, over a spec's traces, properties the spec cannot state:
// timing (how long teardown took, how soon barge-in cancelled), from the
// events' times. check runs every monitor of the trace's spec; a monitor
// whose trace carries no time reports nothing.
type Monitor struct {
	// Name names the monitor in reports ("timing").
	Name string
	// Doc says in one line what it checks.
	Doc string
	// Bounds names the bounds it takes (check --bound NAME=DURATION),
	// each with what it bounds.
	Bounds map[string]string
	// New returns a fresh run, one per trace file, with the bounds given
	// on the command line (those not given are absent).
	New func(bounds map[string]time.Duration) MonitorRun
}

// MonitorRun is one run of a Monitor over one trace.
type MonitorRun interface {
	// Event takes the trace's next event.
	Event(src Source)
	// End returns the violations found (each an InstanceResult whose
	// Divergence has Kind check.KindTiming and the figures in its
	// Reason), the number of instances it timed, and the figures of the
	// whole trace (e.g. "teardown max 3ms p99 3ms (12)"). timed 0 says
	// that the trace carried no time.
	End() (violations []check.InstanceResult, timed int, figures []string)
}

// ProjectedReport is the check of one projection of a trace.
type ProjectedReport struct {
	// Projection is the projection; Model its target spec's model.
	Projection Projection
	Model      Model
	// Report is the check of the projected trace (nil if Err says why).
	Report *check.Report
	// Text is the report's text (instances listed as Options.OnResult got
	// them, through a check.TextStream, then its summary).
	Text string
	// Err is an input error in the projected trace (a projection's bug,
	// or an event it could not read).
	Err error
}

// MonitorReport is a monitor's run over a trace.
type MonitorReport struct {
	Monitor    Monitor
	Violations []check.InstanceResult
	Timed      int
	Figures    []string
}

// Verdict is the monitor's verdict: violation if it found one, else
// valid.
func (m *MonitorReport) Verdict() check.Verdict {
	if len(m.Violations) > 0 {
		return check.Violation
	}
	return check.Valid
}

// Projected is what CheckProjections found in one trace.
type Projected struct {
	Reports  []ProjectedReport
	Monitors []MonitorReport
}

// CheckProjections reads the trace r (named name in reports) of spec src
// and checks each of src's projections against its target spec among
// specs, and runs src's monitors with bounds. opt configures the
// projected checks (OnResult is not used: each report's Text lists its
// instances; valid instances are listed when listValid is set). An
// error is returned for an unreadable trace; a projected trace's own
// input error is in its report.
func CheckProjections(ctx context.Context, specs []Spec, src *Spec, r io.Reader, name string, opt check.Options, bounds map[string]time.Duration, listValid bool) (*Projected, error) {
	out := &Projected{}
	type sink struct {
		proj Projector
		w    *io.PipeWriter
		enc  *json.Encoder
		dead bool
	}
	for _, p := range src.Projections {
		target := findSpec(specs, p.Spec)
		if target == nil {
			return nil, fmt.Errorf("spec %s: projection onto %q, which is not registered", src.Name, p.Spec)
		}
		out.Reports = append(out.Reports, ProjectedReport{Projection: p, Model: target.Model})
	}
	var sinks []*sink
	var wg sync.WaitGroup
	for i, p := range src.Projections {
		target := findSpec(specs, p.Spec)
		pr, pw := io.Pipe()
		s := &sink{proj: p.New(), w: pw}
		s.enc = json.NewEncoder(pw)
		sinks = append(sinks, s)
		wg.Add(1)
		go func(i int, pr *io.PipeReader, s *sink) {
			defer wg.Done()
			rep := &out.Reports[i]
			proj := s.proj
			file := name + " (projected onto " + p.Spec + ")"
			// A trace with nothing for the target (no response: nothing
			// for tts) is no input error: the first byte decides.
			br := bufio.NewReader(pr)
			if _, err := br.Peek(1); err != nil {
				rep.Report = &check.Report{File: file, Model: p.Spec}
				rep.Text = file + ": no events (nothing in the trace concerns " + p.Spec + ")\n"
				return
			}
			var text bytes.Buffer
			ts := check.NewTextStream(&text, file, p.Spec)
			ts.Valid = listValid
			ts.NoReplay = true
			o := opt
			o.Forget, o.OnResult = false, nil
			rep.Report, rep.Err = target.Model.Check(ctx, br, file, o)
			pr.CloseWithError(errors.New("projected check done")) // a writer still writing stops
			if rep.Report != nil {
				rep.Report.Model = p.Spec
				closedValid(rep.Report, proj)
				for _, in := range rep.Report.Instances {
					ts.Result(in)
				}
				if rep.Err == nil {
					_ = ts.End(rep.Report)
				} else {
					_ = ts.Flush()
				}
			}
			rep.Text = text.String()
		}(i, pr, s)
	}
	var runs []MonitorRun
	for _, m := range src.Monitors {
		runs = append(runs, m.New(bounds))
	}
	dec := trace.NewDecoderSize(r, name, opt.MaxLine)
	var rerr error
	for {
		raw, err := dec.Next()
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, trace.ErrTruncated) {
				rerr = err
			}
			break
		}
		e, err := raw.Event()
		if err != nil {
			rerr = err
			break
		}
		s := Source{Event: e, Pos: raw.Pos, Line: bytes.Clone(raw.Line)}
		for _, run := range runs {
			run.Event(s)
		}
		for _, k := range sinks {
			if k.dead {
				continue
			}
			for _, pe := range k.proj.Project(s) {
				if pe.V == 0 {
					pe.V = trace.Version
				}
				if err := k.enc.Encode(pe); err != nil {
					k.dead = true
					break
				}
			}
		}
	}
	for _, k := range sinks {
		k.w.Close()
	}
	wg.Wait()
	for i, run := range runs {
		v, timed, figs := run.End()
		out.Monitors = append(out.Monitors, MonitorReport{Monitor: src.Monitors[i], Violations: v, Timed: timed, Figures: figs})
	}
	if rerr != nil {
		return out, rerr
	}
	return out, nil
}

// closedValid counts, in rep, the instances the projector closed as
// windows and that ended incomplete (not inside a composite step nor on a
// truncated line) as valid.
func closedValid(rep *check.Report, proj Projector) {
	for i := range rep.Instances {
		in := &rep.Instances[i]
		if in.Verdict == check.Incomplete && proj.Closed(in.Instance) && in.Divergence == nil && !strings.Contains(in.Reason, "truncat") {
			in.Verdict, in.Reason = check.Valid, ""
		}
	}
}

func findSpec(specs []Spec, name string) *Spec {
	for i := range specs {
		if specs[i].Name == name {
			return &specs[i]
		}
	}
	return nil
}

// WriteText writes the projections' and monitors' part of check's text
// report for the trace name: each projected spec's report (its
// violations in full, its summary line), then each monitor's.
// A monitor that timed nothing is mentioned only with all (check
// --projections), so that a trace without times reads as before.
func (p *Projected) WriteText(w io.Writer, name string, all bool) error {
	var b strings.Builder
	for _, r := range p.Reports {
		if r.Err != nil {
			b.WriteString(r.Text)
			fmt.Fprintf(&b, "%s (projected onto %s): input error: %v\n", name, r.Projection.Spec, r.Err)
			continue
		}
		b.WriteString(r.Text)
	}
	for _, m := range p.Monitors {
		if m.Timed == 0 {
			if all {
				fmt.Fprintf(&b, "%s (%s): not checked (no event carries a time)\n", name, m.Monitor.Name)
			}
			continue
		}
		for _, v := range m.Violations {
			_ = v.WriteText(&b)
		}
		fmt.Fprintf(&b, "%s (%s): %s (%d instances timed, %d violation)\n", name, m.Monitor.Name, strings.ToUpper(m.Verdict().String()), m.Timed, len(m.Violations))
		for _, f := range m.Figures {
			fmt.Fprintf(&b, "  %s\n", f)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// Worst is the most severe verdict among the projected reports and
// monitors (an input error counts as a violation: Err says which).
func (p *Projected) Worst() check.Verdict {
	worst := check.Valid
	sev := func(v check.Verdict) int {
		switch v {
		case check.Violation:
			return 2
		case check.Incomplete:
			return 1
		}
		return 0
	}
	for _, r := range p.Reports {
		v := check.Violation
		if r.Err == nil && r.Report != nil {
			v = r.Report.Verdict()
		}
		if sev(v) > sev(worst) {
			worst = v
		}
	}
	for _, m := range p.Monitors {
		if sev(m.Verdict()) > sev(worst) {
			worst = m.Verdict()
		}
	}
	return worst
}

// Percentiles returns the p-th percentiles (0 < p <= 100) of ds, by the
// nearest-rank method, and the largest; ds is sorted in place.
func Percentiles(ds []time.Duration, ps ...float64) []time.Duration {
	if len(ds) == 0 {
		return make([]time.Duration, len(ps))
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	out := make([]time.Duration, len(ps))
	for i, p := range ps {
		k := int(p/100*float64(len(ds))+0.999999) - 1
		out[i] = ds[min(max(k, 0), len(ds)-1)]
	}
	return out
}

// boundFlag is check's repeatable --bound NAME=DURATION.
type boundFlag map[string]time.Duration

func (b boundFlag) String() string {
	var parts []string
	for k, v := range b {
		parts = append(parts, k+"="+v.String())
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

func (b boundFlag) Set(v string) error {
	name, d, ok := strings.Cut(v, "=")
	if !ok || name == "" {
		return fmt.Errorf("want NAME=DURATION, got %q", v)
	}
	dur, err := time.ParseDuration(d)
	if err != nil || dur <= 0 {
		return fmt.Errorf("%s: want a positive duration (250ms, 2s), got %q", name, d)
	}
	b[name] = dur
	return nil
}

// boundNames lists the bounds the registered specs' monitors take.
func (a *app) boundNames() string {
	var names []string
	for _, s := range a.specs {
		for _, m := range s.Monitors {
			for n, doc := range m.Bounds {
				names = append(names, n+": "+doc+" ["+s.Name+" "+m.Name+"]")
			}
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		return "none registered"
	}
	return strings.Join(names, "; ")
}

// project starts, when the trace's spec has projections (with
// --projections) or monitors, their check of the trace *r as check reads
// it: *r becomes a reader that also feeds them. wait returns what they
// found once the main check has read its input (nil if nothing ran).
func (c *checkRun) project(r *io.Reader, name string, m namedModel) (wait func() (*Projected, error)) {
	if m.spec == nil {
		return func() (*Projected, error) { return nil, nil }
	}
	spec := *m.spec
	if !c.projections {
		spec.Projections = nil
		if !m.timed { // no time in the trace's head: its monitors would time nothing
			spec.Monitors = nil
		}
	}
	if len(spec.Projections) == 0 && len(spec.Monitors) == 0 {
		return func() (*Projected, error) { return nil, nil }
	}
	pr, pw := io.Pipe()
	*r = io.TeeReader(*r, pw)
	var proj *Projected
	var err error
	done := make(chan struct{})
	go func() {
		defer close(done)
		proj, err = CheckProjections(context.Background(), c.app.specs, &spec, pr, name, check.Options{Last: c.opt.Last, MaxLine: c.opt.MaxLine}, c.bounds, !c.quiet && !c.live)
		_, _ = io.Copy(io.Discard, pr) // the main check may read on
	}()
	return func() (*Projected, error) {
		pw.Close()
		<-done
		return proj, err
	}
}

// writeJSON adds the projections' and monitors' fields to check --json's
// report: "projections" with --projections, "monitors" when a monitor
// timed an instance.
func (p *Projected) writeJSON(s *jsonStream, indent string, all bool) {
	type projJSON struct {
		Spec       string                 `json:"spec"`
		Verdict    string                 `json:"verdict"`
		Events     int                    `json:"events"`
		Valid      int                    `json:"valid"`
		Incomplete int                    `json:"incomplete"`
		Violation  int                    `json:"violation"`
		Instances  []check.InstanceResult `json:"instances,omitempty"`
		Exercised  []check.Transition     `json:"exercised,omitempty"`
		Error      string                 `json:"error,omitempty"`
	}
	if all && len(p.Reports) > 0 {
		var out []projJSON
		for _, r := range p.Reports {
			j := projJSON{Spec: r.Projection.Spec}
			if r.Err != nil || r.Report == nil {
				j.Verdict = "input error"
				if r.Err != nil {
					j.Error = r.Err.Error()
				}
			} else {
				j.Verdict = r.Report.Verdict().String()
				j.Events, j.Exercised = r.Report.Events, r.Report.Exercised
				j.Valid, j.Incomplete, j.Violation = r.Report.Count(check.Valid), r.Report.Count(check.Incomplete), r.Report.Count(check.Violation)
				for _, in := range r.Report.Instances {
					if in.Verdict != check.Valid {
						j.Instances = append(j.Instances, in)
					}
				}
			}
			out = append(out, j)
		}
		s.field(indent, "projections", out)
	}
	type monJSON struct {
		Monitor    string                 `json:"monitor"`
		Verdict    string                 `json:"verdict"`
		Timed      int                    `json:"timed"`
		Violations []check.InstanceResult `json:"violations,omitempty"`
		Figures    []string               `json:"figures,omitempty"`
	}
	var mons []monJSON
	for _, m := range p.Monitors {
		if m.Timed == 0 {
			continue
		}
		mons = append(mons, monJSON{Monitor: m.Monitor.Name, Verdict: m.Verdict().String(), Timed: m.Timed, Violations: m.Violations, Figures: m.Figures})
	}
	if len(mons) > 0 {
		s.field(indent, "monitors", mons)
	}
}

// ProjectedCoverage is the coverage of one projection's target spec by
// the projected traces.
type ProjectedCoverage struct {
	Spec     string          `json:"spec"`
	Coverage *check.Coverage `json:"coverage"`
}

// Coverage returns, for each projection whose check ran, which of its
// target spec's transitions the projected traces exercised, summed over
// the given results (several traces' CheckProjections of the same spec).
func Coverage(ctx context.Context, results ...*Projected) ([]ProjectedCoverage, error) {
	var out []ProjectedCoverage
	if len(results) == 0 {
		return nil, nil
	}
	for i, r := range results[0].Reports {
		var reps []*check.Report
		for _, p := range results {
			if i < len(p.Reports) && p.Reports[i].Report != nil {
				reps = append(reps, p.Reports[i].Report)
			}
		}
		cov, err := r.Model.Coverage(ctx, reps)
		if err != nil {
			return out, fmt.Errorf("coverage of %s: %w", r.Projection.Spec, err)
		}
		out = append(out, ProjectedCoverage{Spec: r.Projection.Spec, Coverage: cov})
	}
	return out, nil
}

// Missing lists the required transitions the traces did not exercise,
// as "FROM -ACTION-> TO".
func (c ProjectedCoverage) Missing() []string {
	skip := map[edgeKey]bool{}
	for _, n := range c.Coverage.NotRequired {
		skip[edgeKey{n.From, n.Action, n.To}] = true
	}
	var out []string
	for _, e := range c.Coverage.Edges {
		if e.Count == 0 && !skip[edgeKey{e.From, e.Action, e.To}] {
			out = append(out, e.From+" -"+e.Action+"-> "+e.To)
		}
	}
	return out
}

// edgeKey is a transition without its count.
type edgeKey struct{ From, Action, To string }
