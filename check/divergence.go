package check

import (
	"fmt"
	"slices"
	"strings"

	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/trace"
)

// Divergence is where and why an instance left the spec: the first event
// that no behaviour of the spec explains, with what the spec allowed
// instead.
type Divergence struct {
	File string `json:"file"`
	Line int    `json:"line"`
	// Doc is set when the input is ITF (docs/itf.md): the document,
	// counted from 1, of the event; Line is then the line of the ITF input
	// where the event's state starts.
	Doc      int    `json:"doc,omitempty"`
	Instance string `json:"instance"`
	Seq      uint64 `json:"seq"`
	Action   string `json:"action"`
	// Args are the event's arguments, each in TLA+ syntax as TLC prints
	// it ("r2" for the JSON "r2"), when it gives any; for a composite
	// step, those its parts gave.
	Args []string `json:"args,omitempty"`
	// Event is the offending line as written.
	Event string `json:"event"`
	// Kind classifies the failure; in JSON it is its String ("guard",
	// "state", ...).
	Kind DivergenceKind `json:"kind"`
	// Reason says in one line why the event does not fit.
	Reason string `json:"reason"`
	// Candidates are the states the instance could have been in before
	// the event, with what the spec allowed there.
	Candidates []Candidate `json:"candidates"`
	// Diff is a -want +got diff of the state: the spec's closest
	// successor (or, when no successor exists, the state before) against
	// the event's state. When the event's state agrees with that state on
	// every variable it carries, a -want +got diff would show nothing:
	// Diff then says so and why the state does not fit (the guard that
	// fails there, in the spec's words, or what the state breaks), and
	// lists the state.
	Diff string `json:"diff,omitempty"`
	// Fits names the actions enabled before the event whose successor has
	// the event's state, and changes a variable the event carries: what
	// the code probably did instead. An action whose successor the
	// event's state only fits because the event leaves out what the
	// action changes is not named: that would be true of any state.
	Fits []string `json:"fits,omitempty"`
	// Recent are the instance's last matched events, oldest first.
	Recent []Recent `json:"recent,omitempty"`
}

// DivergenceKind classifies a divergence: what about the event does not
// fit. The zero DivergenceKind is not a kind.
type DivergenceKind uint8

// The kinds of divergence.
const (
	KindGuard     DivergenceKind = iota + 1 // the event's action is not enabled in any candidate state
	KindState                               // the action is enabled, but no successor has the event's state
	KindInvariant                           // the successors that have the event's state break an invariant
	KindProperty                            // the steps to those successors break an action property
	KindInit                                // the first event is not Init or fits no initial state, or Init comes later
	KindStutter                             // a stutter event changes spec variables
	KindComposite                           // a composite step's parts are out of order, or another action comes inside it
	KindArgs                                // the event's arguments name no step from a candidate, or the event's state is the successor of a step with other arguments
	KindDomain                              // a variable of the event's state has a value no reachable state of the spec has (a misspelled name, a number out of range)
	KindTiming                              // the events' times break a timing property (a cli.Monitor's: teardown slower than its join timeout, say)
)

var kindNames = [...]string{KindGuard: "guard", KindState: "state", KindInvariant: "invariant",
	KindProperty: "property", KindInit: "init", KindStutter: "stutter", KindComposite: "composite", KindArgs: "args",
	KindDomain: "domain", KindTiming: "timing"}

// String returns "guard", "state", "invariant", "property", "init",
// "stutter", "composite", "args", "domain" or "timing".
func (k DivergenceKind) String() string { return enumName(kindNames[:], int(k), "DivergenceKind") }

// MarshalText renders the kind as its String.
func (k DivergenceKind) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText parses a kind's String, so that a JSON report reads back.
func (k *DivergenceKind) UnmarshalText(text []byte) error {
	i := slices.Index(kindNames[1:], string(text))
	if i < 0 {
		return fmt.Errorf("check: unknown divergence kind %q", text)
	}
	*k = DivergenceKind(i + 1)
	return nil
}

// Candidate is one state the instance may have been in before a divergent
// event.
type Candidate struct {
	State   string   `json:"state"`
	Enabled []string `json:"enabled"`
	// Why says why the event's action did not fit from this state: the
	// failing guard, the variables that differ, or the broken property.
	Why []string `json:"why"`
}

// Recent is one matched event of a divergence report.
type Recent struct {
	Line int `json:"line"`
	// Doc is the event's ITF document when the input is ITF, as in
	// Divergence.
	Doc   int    `json:"doc,omitempty"`
	Event string `json:"event"`
}

// maxCandidates bounds the candidates a report lists.
const maxCandidates = 8

// violate reports the event r of in as a divergence of kind KindInit,
// KindStutter or KindComposite: one that is not about a step of an action.
func (c *Checker[S]) violate(in *instance[S], r *trace.Raw, kind DivergenceKind, reason string) {
	d := c.divergence(in, r, kind, reason)
	// The states listed, the prefix of their label, and what a candidate
	// and the diff compare with the event's state, if anything.
	states, prefix, what, want := in.cands(), "", "", ""
	switch {
	case kind == KindInit && in.events == 1:
		states, prefix, what, want = c.spec.inits, "(initial) ", "initial state", "initial state"
	case kind == KindStutter:
		what, want = "state", "unchanged state"
		d.Fits = c.fits(states, -1, &c.cons)
	}
	// What a stutter event must leave unchanged: the state before, with
	// what the open composite step has set so far.
	vals := c.spec.valuation
	if comp := in.comp(); kind == KindStutter && comp != nil {
		vals = func(s S) []model.Value {
			v := slices.Clone(c.spec.valuation(s))
			for _, i := range comp.cons.idx {
				v[i] = comp.cons.vals[i]
			}
			return v
		}
		what = "state (with what the open composite " + comp.name + " has set)"
		want = "unchanged state, with what the open composite " + comp.name + " has set"
	}
	for _, s := range states[:min(len(states), maxCandidates)] {
		cd := Candidate{State: prefix + c.spec.Format(s), Enabled: nonNil(c.spec.Enabled(s))}
		if what != "" {
			cd.Why = c.differs(vals(s), &c.cons, what)
		}
		d.Candidates = append(d.Candidates, cd)
	}
	if want != "" && len(states) > 0 {
		same := ""
		if kind == KindInit && in.events == 1 {
			same = "the event's state agrees with an initial state on every variable it carries, but " + reason + "; the initial state"
		}
		d.Diff = c.diff(vals(states[0]), &c.cons, want, same)
	}
	if kind == KindInit && in.events == 1 {
		c.domainKind(d, &c.cons)
	}
	c.finish(in, d)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// violateStep reports that act with the state cons, and the event's
// arguments c.args if it gives any, fits no candidate.
func (c *Checker[S]) violateStep(in *instance[S], r *trace.Raw, act int, cons *constraint) {
	a, args := &c.spec.Actions[act], c.args
	name := label(a.Name, args) // the step the event names: RMPrepare("r2"), or RMPrepare
	// best is the state the diff shows: a successor that act reaches
	// with the event's arguments (rank 0), else one it reaches with
	// others (rank 1), else the state before (rank 2); of those, the
	// closest to the event's state.
	type best struct {
		vals  []model.Value
		rank  int
		n     int
		label string
		same  string // why the state does not fit, should the event's state agree with it
	}
	var b *best
	better := func(rank, n int) bool { return b == nil || rank < b.rank || rank == b.rank && n < b.n }
	guardOnly, badStep := true, ""
	// With arguments: the argument lists act is taken with from the
	// candidates, those of the steps to the event's state, and whether
	// any step is taken with the event's.
	var taken, toState [][]model.Value
	argsStep := false
	d := c.divergence(in, r, 0, "")
	for i, s := range in.cands() {
		e := c.spec.successors(s, act)
		var why []string
		if e.guard != "" {
			why = append(why, fmt.Sprintf("%s is not enabled: guard %s is false", a.Name, e.guard))
			if better(2, 1<<30) {
				b = &best{c.spec.valuation(s), 2, 1 << 30, "state before (" + a.Name + " not enabled)",
					fmt.Sprintf("the event's state agrees with the state before on every variable it carries, and %s is not enabled there (guard %s is false); the state before", a.Name, e.guard)}
			}
		} else {
			guardOnly = false
			if len(e.next) == 0 {
				why = append(why, a.Name+" has no successor here")
			}
			var here, others [][]model.Value // with arguments: the lists taken here, and those of successors not shown
			for j, t := range e.next {
				vals := e.vals[j]
				n := cons.countDiffs(vals)
				explain := i < maxCandidates && j < maxCandidates // the report shows a few
				// other: the step is taken with other arguments than the event's.
				other := false
				var lists [][]model.Value
				if args != nil {
					lists = c.spec.argsOf(e, j)
					other = !fitsArgs(lists, args)
					argsStep = argsStep || !other
					here = addArgs(here, lists)
					taken = addArgs(taken, lists)
				}
				switch {
				case n == 0 && !other:
					ti := c.spec.transition(e, j)
					if explain || badStep == "" {
						why = append(why, fmt.Sprintf("the step to %s breaks %s", c.spec.Format(t), ti.bad))
					}
					badStep = ti.bad
					if better(0, 0) {
						what := "that state breaks " + ti.bad
						if !strings.HasPrefix(ti.bad, "invariant") {
							what = "the step to it breaks " + ti.bad
						}
						b = &best{vals, 0, 0, "spec's successor after " + name,
							fmt.Sprintf("the event's state agrees with the spec's successor after %s on every variable it carries, but %s; the successor", name, what)}
					}
				case n == 0: // the event's state, reached with other arguments
					toState = addArgs(toState, lists)
					step := labels(a.Name, lists)
					if explain {
						why = append(why, fmt.Sprintf("the step %s, not %s, has the event's state: to %s", step, name, c.spec.Format(t)))
					}
					if better(1, 0) {
						b = &best{vals, 1, 0, "spec's successor after " + step,
							fmt.Sprintf("the event's state agrees with the spec's successor after %s on every variable it carries, but the event's arguments are %s; the successor", step, argList(args))}
					}
				case other:
					others = addArgs(others, lists)
					if better(1, n) {
						b = &best{vals, 1, n, "spec's successor after " + labels(a.Name, lists), ""}
					}
				default:
					if explain {
						why = append(why, c.differs(vals, cons, "successor")...)
					}
					if better(0, n) {
						b = &best{vals, 0, n, "spec's successor after " + name, ""}
					}
				}
			}
			if len(e.next) > maxCandidates && i < maxCandidates {
				why = append(why, fmt.Sprintf("(%d more successors not shown)", len(e.next)-maxCandidates))
			}
			switch {
			case args == nil || len(e.next) == 0:
			case !fitsArgs(here, args):
				why = append(why, fmt.Sprintf("%s is not a step here: %s is taken here with %s", name, a.Name, argLists(here)))
			case len(others) > 0:
				why = append(why, fmt.Sprintf("(the successors for the arguments %s not shown)", argLists(others)))
			}
		}
		if i < maxCandidates {
			d.Candidates = append(d.Candidates, Candidate{State: c.spec.Format(s), Enabled: nonNil(c.spec.Enabled(s)), Why: why})
		}
	}
	d.Fits = c.fits(in.cands(), act, cons)
	switch {
	case strings.HasPrefix(badStep, "invariant"):
		d.Kind = KindInvariant
		d.Reason = fmt.Sprintf("%s reaches a state that breaks %s", name, badStep)
	case badStep != "":
		d.Kind = KindProperty
		d.Reason = fmt.Sprintf("the %s step breaks %s", name, badStep)
	case guardOnly:
		d.Kind = KindGuard
		d.Reason = fmt.Sprintf("%s is not enabled in any candidate state", a.Name)
	case args != nil && !argsStep && len(toState) > 0 && len(toState) < len(taken): // the state tells which
		d.Kind = KindArgs
		d.Reason = fmt.Sprintf("%s is not a step from any candidate: the event's state is the successor after %s", name, labels(a.Name, toState))
	case args != nil && !argsStep:
		d.Kind = KindArgs
		d.Reason = fmt.Sprintf("%s is not a step from any candidate: %s is taken there with %s", name, a.Name, argLists(taken))
	case len(toState) > 0:
		d.Kind = KindArgs
		d.Reason = fmt.Sprintf("no %s successor has the event's state, the successor after %s has it", name, labels(a.Name, toState))
	default:
		d.Kind = KindState
		d.Reason = fmt.Sprintf("no %s successor has the event's state", name)
		c.domainKind(d, cons)
	}
	if string(r.Part) == trace.PartEnd {
		d.Reason += " (composite step merged from its parts)"
	}
	if b != nil {
		d.Diff = c.diff(b.vals, cons, b.label, b.same)
	}
	c.finish(in, d)
}

// takes reports whether act is taken with the arguments args from one of
// cands.
func (c *Checker[S]) takes(cands []S, act int, args []model.Value) bool {
	for _, s := range cands {
		e := c.spec.successors(s, act)
		for j := range e.next {
			if fitsArgs(c.spec.argsOf(e, j), args) {
				return true
			}
		}
	}
	return false
}

// maxArgLists bounds the argument lists a divergence report names.
const maxArgLists = 8

// addArgs adds to set the argument lists of lists it does not hold,
// keeping at most maxArgLists+1 (the one more says that there are more).
func addArgs(set, lists [][]model.Value) [][]model.Value {
	for _, l := range lists {
		if len(set) <= maxArgLists && !fitsArgs(set, l) {
			set = append(set, l)
		}
	}
	return set
}

// argList renders an argument list as TLC writes it in a label:
// ("r1", 2), each value clipped.
func argList(args []model.Value) string {
	var b strings.Builder
	b.WriteByte('(')
	for i, v := range args {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(clipValue(v.String()))
	}
	b.WriteByte(')')
	return b.String()
}

// argLists renders argument lists, in order: ("r1"), ("r3").
func argLists(lists [][]model.Value) string {
	if len(lists) == 0 {
		return "no arguments"
	}
	var out []string
	for i, l := range sortedArgs(lists) {
		if i == maxArgLists {
			out = append(out, "...")
			break
		}
		out = append(out, argList(l))
	}
	return strings.Join(out, ", ")
}

// label is the step an event names: the action, with its arguments if
// args is not nil, as TLC labels it (RMPrepare("r1")).
func label(action string, args []model.Value) string {
	if args == nil {
		return action
	}
	return action + argList(args)
}

// labels names the steps of action with the argument lists: RMPrepare("r1")
// or RMPrepare("r3").
func labels(action string, lists [][]model.Value) string {
	if len(lists) == 0 {
		return action
	}
	var out []string
	for i, l := range sortedArgs(lists) {
		if i == maxArgLists {
			out = append(out, "...")
			break
		}
		out = append(out, label(action, l))
	}
	return strings.Join(out, " or ")
}

// sortedArgs returns the argument lists in order (that of model.Compare,
// argument by argument), so that a report names them alike whatever order
// a spec finds its successors in.
func sortedArgs(lists [][]model.Value) [][]model.Value {
	return slices.SortedFunc(slices.Values(lists), func(a, b []model.Value) int {
		return slices.CompareFunc(a, b, model.Compare)
	})
}

// argStrings renders each argument in TLA+ syntax; nil for nil.
func argStrings(args []model.Value) []string {
	if args == nil {
		return nil
	}
	out := make([]string, len(args))
	for i, v := range args {
		out[i] = v.String()
	}
	return out
}

// fits names the actions other than skip whose successor, from one of the
// first candidates, has the state cons and differs from the candidate in
// a variable cons carries: an action that changes only variables the
// event leaves out would fit whatever the event said, so it tells
// nothing.
func (c *Checker[S]) fits(cands []S, skip int, cons *constraint) []string {
	var out []string
	for i, s := range cands {
		if i >= 4*maxCandidates {
			break
		}
		if cons.countDiffs(c.spec.valuation(s)) == 0 {
			continue // a successor that fits cons changes nothing cons carries
		}
		for ai, a := range c.spec.Actions {
			if ai != skip && !slices.Contains(out, a.Name) && slices.ContainsFunc(c.spec.successors(s, ai).vals, cons.matches) {
				out = append(out, a.Name)
			}
		}
	}
	return out
}

func (c *Checker[S]) divergence(in *instance[S], r *trace.Raw, kind DivergenceKind, reason string) *Divergence {
	d := &Divergence{File: r.Pos.File, Line: r.Pos.Line, Doc: c.doc, Instance: in.name, Seq: r.Seq,
		Action: string(r.Action), Args: argStrings(c.args), Event: string(r.Line), Kind: kind, Reason: reason}
	d.Recent = c.recentEvents(in)
	return d
}

// recentEvents unpacks in's last matched events (see remember), reading
// them from the input again if they were kept as positions.
func (c *Checker[S]) recentEvents(in *instance[S]) []Recent {
	var out []Recent
	for b := in.recent; len(b) > 0; {
		var e packedEvent
		e, b = c.unpack(b)
		text := string(e.text)
		if c.src != nil {
			text = c.reread(in.name, e.line, int64(e.off), e.n)
		}
		out = append(out, Recent{Line: e.line, Doc: e.doc, Event: text})
	}
	return out
}

// reread reads the event line of instance name at line (offset off,
// length l) from the input again, and says so if it is no longer there.
func (c *Checker[S]) reread(name string, line int, off int64, l int) string {
	buf := make([]byte, l)
	n, err := c.src.ReadAt(buf, c.srcBase+off)
	if n == l {
		err = nil
	}
	if err != nil {
		return fmt.Sprintf("(the line cannot be read again: %v)", err)
	}
	if r, err := trace.ParseEvent(buf, trace.Pos{File: c.name, Line: line}); err != nil || string(r.Instance) != name {
		return "(the line changed in the input since it was checked)"
	}
	return string(buf)
}

func (c *Checker[S]) finish(in *instance[S], d *Divergence) {
	in.verdict = Violation
	in.setCands(nil)
	if in.x != nil {
		in.x.comp = nil
	}
	in.recent, in.nrecent = nil, 0
	res := InstanceResult{Instance: in.name, Verdict: Violation, Events: in.events, FirstLine: in.firstLine,
		LastLine: in.lastLine, Reason: d.Reason, Divergence: d}
	if c.opt.OnViolation != nil {
		c.opt.OnViolation(res)
	}
	if c.opt.OnResult != nil {
		c.report(res)
		in.flags |= fReported
		in.x = nil
		return
	}
	in.extra().div = d
}

// differs lists the variables where vals and cons disagree.
func (c *Checker[S]) differs(vals []model.Value, cons *constraint, what string) []string {
	var out []string
	for _, i := range cons.idx {
		if !vals[i].Equal(cons.vals[i]) {
			out = append(out, fmt.Sprintf("%s differs in %s"+specHas+"%s"+eventHas+"%s", what, c.spec.Vars[i], vals[i], cons.vals[i]))
		}
	}
	return out
}

// diff renders a -want +got diff of want (a full state) against got (the
// event's possibly partial state). If they agree on every variable got
// carries, a diff would show nothing: it is then same, the reason the
// state want does not fit, over the state.
func (c *Checker[S]) diff(want []model.Value, got *constraint, label, same string) string {
	var sb strings.Builder
	if same != "" && got.countDiffs(want) == 0 {
		sb.WriteString(same + ":\n")
	} else {
		fmt.Fprintf(&sb, "-want +got (want: %s; got: the event's state)\n", label)
	}
	for i, name := range c.spec.Vars {
		switch {
		case !got.set[i]:
			fmt.Fprintf(&sb, "  %s = %s%s\n", name, want[i], notInEvent)
		case want[i].Equal(got.vals[i]):
			fmt.Fprintf(&sb, "  %s = %s\n", name, want[i])
		default:
			fmt.Fprintf(&sb, "- %s = %s\n+ %s = %s\n", name, want[i], name, got.vals[i])
		}
	}
	return sb.String()
}
