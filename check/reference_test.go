package check_test

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"pgregory.net/rapid"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/model/program"
	"github.com/tracecheck/tracecheck/model/session"
)

// The reference check: a deliberately simple second implementation of the
// checker's semantics over model.Explore's graph (state IDs and edges
// instead of the engine's cached successor functions), as etcd-raft's
// quorum/quick_test.go checks its fast code against a simple one. Random
// traces, mostly valid but with dropped variables, wrong values, wrong
// actions, stutters and composites, and, for a spec with parameterised
// actions, with right, wrong and no arguments, must get the same verdict
// and the same first bad line from both.

type refEvent struct {
	instance string
	seq      int
	action   string
	args     []model.Value // nil: none
	part     string
	stutter  bool
	vars     map[int]model.Value // variable index -> value
	line     int
}

func (e refEvent) json(sp []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `{"v":1,"instance":%q,"seq":%d,"action":%q,`, e.instance, e.seq, e.action)
	if e.args != nil {
		b.WriteString(`"args":[`)
		for i, v := range e.args {
			if i > 0 {
				b.WriteString(",")
			}
			b.WriteString(valueJSON(v))
		}
		b.WriteString("],")
	}
	b.WriteString(`"state":{`)
	first := true
	for i, name := range sp {
		v, ok := e.vars[i]
		if !ok {
			continue
		}
		if !first {
			b.WriteString(",")
		}
		first = false
		fmt.Fprintf(&b, "%q:%s", name, valueJSON(v))
	}
	b.WriteString("}")
	if e.part != "" {
		fmt.Fprintf(&b, `,"part":%q`, e.part)
	}
	if e.stutter {
		b.WriteString(`,"stutter":true`)
	}
	b.WriteString("}")
	return b.String()
}

func valueJSON(v model.Value) string {
	if i, ok := v.AsInt(); ok {
		return strconv.FormatInt(i, 10)
	}
	if s, ok := v.AsString(); ok {
		return strconv.Quote(s)
	}
	if x, ok := v.AsBool(); ok {
		return strconv.FormatBool(x)
	}
	panic("valueJSON: unsupported " + v.Kind().String())
}

type refResult struct {
	verdict check.Verdict
	line    int
}

// reference checks events (already in stream order) against the graph.
func reference[S comparable](sp *model.Spec[S], g *model.Graph[S], events []refEvent) map[string]refResult {
	vals := make([][]model.Value, len(g.States))
	for i, s := range g.States {
		vals[i] = sp.Valuation(s)
	}
	fits := func(id int, cons map[int]model.Value) bool {
		for i, v := range cons {
			if !vals[id][i].Equal(v) {
				return false
			}
		}
		return true
	}
	type inst struct {
		cands    map[int]bool
		started  bool
		res      refResult
		comp     string
		compVar  map[int]model.Value
		compArgs []model.Value
	}
	insts := map[string]*inst{}
	var order []string
	for _, e := range events {
		in := insts[e.instance]
		if in == nil {
			in = &inst{}
			insts[e.instance] = in
			order = append(order, e.instance)
		}
		if in.res.verdict == check.Violation {
			continue
		}
		bad := func() { in.res = refResult{check.Violation, e.line} }
		switch {
		case !in.started:
			in.started = true
			if e.action != "Init" {
				bad()
				continue
			}
			in.cands = map[int]bool{}
			for _, id := range g.Init {
				if fits(id, e.vars) && sp.Check(g.States[id]) == "" {
					in.cands[id] = true
				}
			}
			if len(in.cands) == 0 {
				bad()
			}
		case e.action == "Init":
			bad()
		case e.stutter:
			next := map[int]bool{}
			for id := range in.cands {
				ok := true
				for i, v := range e.vars {
					want := vals[id][i]
					if w, set := in.compVar[i]; set && in.comp != "" {
						want = w
					}
					if !want.Equal(v) {
						ok = false
					}
				}
				if ok {
					next[id] = true
				}
			}
			if len(next) == 0 {
				bad()
			} else {
				in.cands = next
			}
		case e.part == "" && in.comp != "":
			bad()
		case e.part == "begin":
			if in.comp != "" {
				bad()
				continue
			}
			enabled := false
			for _, ed := range g.Edges {
				if in.cands[ed.From] && ed.Action == e.action && refTakes(sp, g, ed, e.args) {
					enabled = true
				}
			}
			if !enabled {
				bad()
				continue
			}
			in.comp, in.compVar, in.compArgs = e.action, map[int]model.Value{}, e.args
			for i, v := range e.vars {
				in.compVar[i] = v
			}
		case e.part == "step" || e.part == "end":
			if in.comp != e.action {
				bad()
				continue
			}
			if e.args != nil {
				if in.compArgs != nil && !slices.EqualFunc(in.compArgs, e.args, model.Value.Equal) {
					bad()
					continue
				}
				in.compArgs = e.args
			}
			for i, v := range e.vars {
				in.compVar[i] = v
			}
			if e.part == "end" {
				cons, args := in.compVar, in.compArgs
				in.comp, in.compVar, in.compArgs = "", nil, nil
				if !refStep(sp, g, in.cands, e.action, args, cons, fits) {
					bad()
				}
			}
		default:
			if !refStep(sp, g, in.cands, e.action, e.args, e.vars, fits) {
				bad()
			}
		}
	}
	out := map[string]refResult{}
	for _, name := range order {
		in := insts[name]
		if in.res.verdict == check.Violation {
			out[name] = in.res
			continue
		}
		v := check.Valid
		if in.comp != "" || len(in.cands) == 0 {
			v = check.Incomplete
		}
		for id := range in.cands {
			s := g.States[id]
			stop := sp.Terminal != nil && sp.Terminal(s)
			if !stop {
				n, self := 0, 0
				for _, ed := range g.Edges {
					if ed.From == id {
						n++
						if ed.To == id {
							self++
						}
					}
				}
				stop = n > 0 && n == self
			}
			if !stop {
				v = check.Incomplete
			}
		}
		out[name] = refResult{v, 0}
	}
	return out
}

// refTakes reports whether the edge is taken with the arguments args (nil:
// any).
func refTakes[S comparable](sp *model.Spec[S], g *model.Graph[S], ed model.Edge, args []model.Value) bool {
	if args == nil {
		return true
	}
	a, _ := sp.Action(ed.Action)
	return slices.ContainsFunc(a.Args(g.States[ed.From], g.States[ed.To]), func(l []model.Value) bool {
		return slices.EqualFunc(l, args, model.Value.Equal)
	})
}

// refStep replaces cands by the fitting successors under action (taken
// with args, if not nil), and reports whether there were any.
func refStep[S comparable](sp *model.Spec[S], g *model.Graph[S], cands map[int]bool, action string,
	args []model.Value, cons map[int]model.Value, fits func(int, map[int]model.Value) bool) bool {
	next := map[int]bool{}
	for _, ed := range g.Edges {
		if !cands[ed.From] || ed.Action != action || !fits(ed.To, cons) || !refTakes(sp, g, ed, args) {
			continue
		}
		from, to := g.States[ed.From], g.States[ed.To]
		if sp.Check(to) != "" || sp.CheckStep(from, action, to) != "" {
			continue
		}
		next[ed.To] = true
	}
	if len(next) == 0 {
		return false
	}
	clear(cands)
	for id := range next {
		cands[id] = true
	}
	return true
}

// genTrace draws a random trace of a few instances walking sp's graph,
// with random faults.
func genTrace[S comparable](t *rapid.T, sp *model.Spec[S], g *model.Graph[S]) []refEvent {
	vals := make([][]model.Value, len(g.States))
	for i, s := range g.States {
		vals[i] = sp.Valuation(s)
	}
	var actions []string
	for _, a := range sp.Actions {
		actions = append(actions, a.Name)
	}
	// The argument lists of each parameterised action's edges, for right
	// arguments, and all of them, for wrong ones.
	argsOf := func(ed model.Edge) [][]model.Value {
		a, _ := sp.Action(ed.Action)
		if a.Args == nil {
			return nil
		}
		return a.Args(g.States[ed.From], g.States[ed.To])
	}
	var allArgs [][]model.Value
	for _, ed := range g.Edges {
		allArgs = append(allArgs, argsOf(ed)...)
	}
	// args draws an event's arguments for a step of action along ed: none,
	// the edge's (mostly), or any (wrong, mostly).
	args := func(ed model.Edge, what string) []model.Value {
		a, _ := sp.Action(ed.Action)
		if a == nil || a.Args == nil || rapid.IntRange(0, 2).Draw(t, what+"-no-args") == 0 {
			return nil
		}
		if right := argsOf(ed); len(right) > 0 && rapid.IntRange(0, 7).Draw(t, what+"-wrong-args") != 0 {
			return rapid.SampledFrom(right).Draw(t, what+"-args")
		}
		if len(allArgs) == 0 {
			return nil
		}
		return rapid.SampledFrom(allArgs).Draw(t, what+"-any-args")
	}
	// The values each variable takes somewhere, for wrong values.
	domain := make([][]model.Value, len(sp.Vars))
	for _, vs := range vals {
		for i, v := range vs {
			seen := false
			for _, d := range domain[i] {
				seen = seen || d.Equal(v)
			}
			if !seen {
				domain[i] = append(domain[i], v)
			}
		}
	}
	state := func(id int, what string) map[int]model.Value {
		m := map[int]model.Value{}
		for i, v := range vals[id] {
			if rapid.IntRange(0, 9).Draw(t, what+"-drop") == 0 {
				continue // partial state
			}
			m[i] = v
		}
		if rapid.IntRange(0, 14).Draw(t, what+"-corrupt") == 0 {
			i := rapid.IntRange(0, len(sp.Vars)-1).Draw(t, what+"-var")
			m[i] = rapid.SampledFrom(domain[i]).Draw(t, what+"-val")
		}
		return m
	}
	nInst := rapid.IntRange(1, 3).Draw(t, "instances")
	perInst := make([][]refEvent, nInst)
	for k := range perInst {
		name := fmt.Sprintf("i%d", k)
		cur := rapid.SampledFrom(g.Init).Draw(t, "init")
		var evs []refEvent
		add := func(e refEvent) {
			e.instance = name
			evs = append(evs, e)
		}
		first := "Init"
		if rapid.IntRange(0, 19).Draw(t, "no-init") == 0 {
			first = rapid.SampledFrom(actions).Draw(t, "first")
		}
		add(refEvent{action: first, vars: state(cur, "init")})
		steps := rapid.IntRange(0, 8).Draw(t, "steps")
		for j := 0; j < steps; j++ {
			var out []model.Edge
			for _, ed := range g.Edges {
				if ed.From == cur {
					out = append(out, ed)
				}
			}
			if rapid.IntRange(0, 5).Draw(t, "stutter") == 0 {
				add(refEvent{action: "internal", stutter: true, vars: state(cur, "stutter")})
			}
			ed := model.Edge{From: cur, To: cur, Action: rapid.SampledFrom(actions).Draw(t, "any-action")}
			if len(out) > 0 && rapid.IntRange(0, 9).Draw(t, "wrong-action") != 0 {
				ed = rapid.SampledFrom(out).Draw(t, "edge")
			}
			to := state(ed.To, "step")
			if rapid.IntRange(0, 4).Draw(t, "composite") == 0 {
				split := map[int]model.Value{}
				rest := map[int]model.Value{}
				for i, v := range to {
					if rapid.Bool().Draw(t, "split") {
						split[i] = v
					} else {
						rest[i] = v
					}
				}
				add(refEvent{action: ed.Action, part: "begin", vars: split, args: args(ed, "begin")})
				if rapid.IntRange(0, 9).Draw(t, "interject") == 0 {
					add(refEvent{action: rapid.SampledFrom(actions).Draw(t, "interjected"), vars: map[int]model.Value{}})
				}
				if rapid.IntRange(0, 9).Draw(t, "open") == 0 {
					break // ends inside the composite
				}
				add(refEvent{action: ed.Action, part: "end", vars: rest, args: args(ed, "end")})
			} else {
				add(refEvent{action: ed.Action, vars: to, args: args(ed, "step")})
			}
			cur = ed.To
		}
		perInst[k] = evs
	}
	// Interleave, keeping each instance's order, with increasing seqs.
	var out []refEvent
	pos := make([]int, nInst)
	seq := make([]int, nInst)
	for {
		var live []int
		for k := range perInst {
			if pos[k] < len(perInst[k]) {
				live = append(live, k)
			}
		}
		if len(live) == 0 {
			break
		}
		k := rapid.SampledFrom(live).Draw(t, "next")
		e := perInst[k][pos[k]]
		pos[k]++
		seq[k] += rapid.IntRange(1, 3).Draw(t, "gap")
		e.seq = seq[k]
		e.line = len(out) + 1
		out = append(out, e)
	}
	return out
}

func differential[S comparable](t *testing.T, sp *model.Spec[S]) {
	res, err := model.Explore(context.Background(), sp, model.Options{})
	if err != nil {
		t.Fatal(err)
	}
	g := &res.Graph
	rapid.Check(t, func(rt *rapid.T) {
		events := genTrace(rt, sp, g)
		var b strings.Builder
		for _, e := range events {
			b.WriteString(e.json(sp.Vars))
			b.WriteString("\n")
		}
		rep, err := check.Check(context.Background(), sp, strings.NewReader(b.String()), "gen", check.Options{})
		if err != nil {
			rt.Fatalf("input error on a generated trace: %v\n%s", err, b.String())
		}
		want := reference(sp, g, events)
		if len(rep.Instances) != len(want) {
			rt.Fatalf("%d instances, reference has %d", len(rep.Instances), len(want))
		}
		for _, in := range rep.Instances {
			w := want[in.Instance]
			line := 0
			if in.Divergence != nil {
				line = in.Divergence.Line
			}
			if in.Verdict != w.verdict || line != w.line {
				var txt bytes.Buffer
				rep.WriteText(&txt)
				rt.Fatalf("instance %s: engine says %v at line %d, reference %v at line %d\ntrace:\n%s\nreport:\n%s",
					in.Instance, in.Verdict, line, w.verdict, w.line, b.String(), txt.String())
			}
		}
	})
}

func TestReferenceProgram(t *testing.T) { differential(t, program.Spec()) }
func TestReferenceSession(t *testing.T) { differential(t, session.Spec(session.Options{})) }
func TestReferenceSessionMutant(t *testing.T) {
	differential(t, session.Spec(session.Options{NoCompactionTeardown: true}))
}
func TestReferenceCounter(t *testing.T) { differential(t, counterSpec()) }
func TestReferenceArgs(t *testing.T)    { differential(t, argSpec()) }
