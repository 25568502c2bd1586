package check

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"

	"github.com/tracecheck/tracecheck/model"
	"github.com/tracecheck/tracecheck/trace"
)

// Errors for bad input. Every input error [Check] or [Checker.Feed]
// returns satisfies errors.Is(err, ErrInput) and names file:line; the more
// specific sentinels below (and the trace package's ErrSyntax, ErrField,
// ErrVersion, ErrEmpty, ErrBinary, ErrLineTooLong) tell which.
var (
	// ErrInput matches every input error.
	ErrInput = errors.New("input error")
	// ErrUnknownAction: an event names an action the spec does not have.
	ErrUnknownAction = errors.New("unknown action")
	// ErrUnknownVariable: an event's state names a variable the spec does
	// not have.
	ErrUnknownVariable = errors.New("unknown variable")
	// ErrValue: a state value is malformed (a float, null, an unknown ITF
	// form) or of the wrong kind for its variable.
	ErrValue = errors.New("bad value")
	// ErrSequence: an instance's sequence number repeats or goes backwards.
	ErrSequence = errors.New("sequence number does not increase")
)

// InputError is an error in the input rather than in the behaviour it
// records: malformed lines, names the spec does not have, values of the
// wrong type, sequence numbers out of order. Its text is one line that
// starts with file:line.
type InputError struct {
	Pos trace.Pos
	Err error
}

// Error returns "file:line: what".
func (e *InputError) Error() string {
	var pe *trace.PosError
	if errors.As(e.Err, &pe) {
		return e.Err.Error()
	}
	return e.Pos.String() + ": " + e.Err.Error()
}

// Unwrap returns the underlying error.
func (e *InputError) Unwrap() error { return e.Err }

// Is makes every InputError match [ErrInput].
func (e *InputError) Is(target error) bool { return target == ErrInput }

// DefaultLinger is Options.Linger's default.
const DefaultLinger = 10000

// DefaultLast is the number of matched events a divergence report shows
// when Options.Last is zero.
const DefaultLast = 5

// Options configure a check. The zero value is ready to use.
type Options struct {
	// Name names the stream in positions and in the report when events
	// come through [Checker.Feed] or [Checker.Emit] (default "-"); Check
	// uses its own name argument instead.
	Name string
	// Last is how many of an instance's last matched events a divergence
	// report shows: 0 means DefaultLast, negative means none.
	Last int
	// MaxLine bounds a line's length in bytes; 0 means trace.DefaultMaxLine.
	MaxLine int
	// Forget drops an instance as soon as it is finished: valid so far and
	// in states where the spec may stop and can only stutter (a torn-down
	// session, a published run). Memory is then bounded by the instances
	// still live, as a long-running monitor needs; the report counts the
	// forgotten instances (Report.Forgotten) instead of listing them. A
	// later event of a forgotten instance is checked as a new instance's
	// (so anything but Init is a violation): to let late stutter events
	// and self-loops through, an instance is forgotten only after Linger
	// more events of the stream have passed with it still finished.
	Forget bool
	// Linger is how many events of the stream a finished instance is kept
	// for before Forget drops it; 0 means DefaultLinger.
	Linger int
	// OnStep, if set, is called after each accepted event (replay uses it).
	OnStep func(Step)
	// OnViolation, if set, is called as soon as an instance violates the
	// spec, before the stream ends: a live monitor on a pipe reports there.
	OnViolation func(InstanceResult)
}

func (o Options) last() int {
	switch {
	case o.Last == 0:
		return DefaultLast
	case o.Last < 0:
		return 0
	}
	return o.Last
}

// Step describes one accepted event, for [Options.OnStep].
type Step struct {
	Pos      trace.Pos
	Instance string
	Seq      uint64
	Action   string
	Part     string
	Stutter  bool
	// States are the candidate states after the event (Spec.Format), and
	// Enabled the actions enabled in each. Inside an open composite step
	// they are the states before it.
	States  []string
	Enabled [][]string
}

// Check validates the trace read from r (named name in positions) against
// sp and reports a verdict per instance. The error is non-nil only for
// input errors (errors.Is(err, ErrInput)) or cancellation; the report then
// covers the events before the error. A trace whose last line was cut off
// is not an input error: the report records the truncation and the
// affected instance is incomplete.
func Check[S comparable](ctx context.Context, sp *model.Spec[S], r io.Reader, name string, opt Options) (*Report, error) {
	c, err := New(sp, opt)
	if err != nil {
		return nil, err
	}
	c.name = name
	dec := trace.NewDecoderSize(r, name, opt.MaxLine)
	for n := 0; ; n++ {
		if n&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return c.Close(), err
			}
		}
		ev, err := dec.Next()
		if err == io.EOF {
			break
		}
		if errors.Is(err, trace.ErrTruncated) {
			c.Truncated(ev.Pos, ev.Line)
			break
		}
		if err != nil {
			return c.Close(), &InputError{dec.Pos(), err}
		}
		if err := c.Feed(ev); err != nil {
			return c.Close(), err
		}
	}
	return c.Close(), nil
}

// Checker validates a stream of events incrementally: feed it events as
// they arrive and close it at the end of the stream. Its memory is bounded
// by the number of instances seen, not by the number of events. A Checker
// is not safe for concurrent use, except through [Checker.Emit] and
// [Checker.Close].
type Checker[S comparable] struct {
	sp      *model.Spec[S]
	opt     Options
	name    string
	last    int
	varIdx  map[string]int
	varKind []model.Kind
	actIdx  map[string]int
	inits   []S

	values valueCache
	succ   map[succKey[S]]*succEntry[S]
	valn   map[S][]model.Value
	stop   map[S]bool
	quiet  map[S]bool
	invBad map[S]bool
	trans  map[transKey[S]]*transInfo

	insts map[string]*instance[S]
	order []*instance[S]

	cons       constraint
	unknownVar string // a variable of the event that was #unserializable
	next       []S
	seen       map[S]struct{} // addCandidate's set, empty between steps

	events    int
	ambiguous int
	forgotten int
	dropped   int // forgotten instances still in order
	finishing []finishing[S]
	fhead     int
	truncated *trace.Pos
	truncInst string
	closed    *Report

	mu      sync.Mutex // Emit only
	emitted int
	line    []byte
}

type succKey[S comparable] struct {
	s   S
	act int
}

type succEntry[S comparable] struct {
	guard string
	next  []S
	vals  [][]model.Value // valuation of each successor
	info  []*transInfo    // the transition to each successor, once taken
	ok    []uint8         // stepOK or stepBad once judged, else 0
}

type transKey[S comparable] struct {
	from S
	act  int
	to   S
}

type transInfo struct {
	count int
	bad   string // "invariant X" or "property Y", or ""
}

// constraint is an event's (partial) state: the values of the variables
// it names.
type constraint struct {
	idx  []int
	vals []model.Value // indexed by variable
	set  []bool
}

func (c *constraint) reset() {
	for _, i := range c.idx {
		c.set[i] = false
	}
	c.idx = c.idx[:0]
}

func (c *constraint) put(i int, v model.Value) {
	if !c.set[i] {
		c.set[i] = true
		c.idx = append(c.idx, i)
	}
	c.vals[i] = v
}

func (c *constraint) clone() constraint {
	d := constraint{idx: append([]int(nil), c.idx...), vals: append([]model.Value(nil), c.vals...),
		set: append([]bool(nil), c.set...)}
	return d
}

// New returns a Checker for sp. It returns an error if sp is unusable
// (no variables, no initial state).
func New[S comparable](sp *model.Spec[S], opt Options) (*Checker[S], error) {
	if sp == nil || len(sp.Vars) == 0 || sp.Valuation == nil || sp.Init == nil {
		return nil, errors.New("check: spec without variables, valuation or initial states")
	}
	name := opt.Name
	if name == "" {
		name = "-"
	}
	c := &Checker[S]{sp: sp, opt: opt, name: name, last: opt.last(),
		varIdx: make(map[string]int), actIdx: make(map[string]int),
		succ: make(map[succKey[S]]*succEntry[S]), valn: make(map[S][]model.Value),
		stop: make(map[S]bool), quiet: make(map[S]bool), invBad: make(map[S]bool), trans: make(map[transKey[S]]*transInfo),
		insts: make(map[string]*instance[S])}
	for i, v := range sp.Vars {
		c.varIdx[v] = i
	}
	for i, a := range sp.Actions {
		c.actIdx[a.Name] = i
	}
	c.inits = sp.Init()
	if len(c.inits) == 0 {
		return nil, errors.New("check: spec has no initial state")
	}
	c.varKind = make([]model.Kind, len(sp.Vars))
	for i, v := range c.valuation(c.inits[0]) {
		c.varKind[i] = v.Kind()
	}
	n := len(sp.Vars)
	c.cons = constraint{vals: make([]model.Value, n), set: make([]bool, n)}
	return c, nil
}

// instance is the live state of one instance.
type instance[S comparable] struct {
	res        InstanceResult
	lastSeq    uint64
	cands      []S
	comp       *composite
	ring       []recent
	ringN      int
	trunc      bool
	forgotten  bool
	finishedAt int    // the event count when it last became finished (Forget)
	uncertain  string // why a valid ending would be only incomplete
}

type composite struct {
	act  int
	name string
	pos  trace.Pos
	cons constraint
}

type recent struct {
	line int
	text []byte
}

func (c *Checker[S]) inputErr(pos trace.Pos, format string, args ...any) error {
	return &InputError{pos, fmt.Errorf(format, args...)}
}

func (c *Checker[S]) valuation(s S) []model.Value {
	if v, ok := c.valn[s]; ok {
		return v
	}
	if len(c.valn) >= maxCache {
		clear(c.valn)
	}
	v := c.sp.Valuation(s)
	c.valn[s] = v
	return v
}

func (c *Checker[S]) successors(s S, act int) *succEntry[S] {
	k := succKey[S]{s, act}
	if e, ok := c.succ[k]; ok {
		return e
	}
	a := &c.sp.Actions[act]
	e := &succEntry[S]{guard: a.Guard(s)}
	if e.guard == "" {
		a.Next(s, func(t S) { e.next = append(e.next, t) })
	}
	for _, t := range e.next {
		e.vals = append(e.vals, c.valuation(t))
	}
	e.info = make([]*transInfo, len(e.next)) // filled as transitions are taken
	e.ok = make([]uint8, len(e.next))        // filled as successors are judged
	if len(c.succ) >= maxCache {
		clear(c.succ)
	}
	c.succ[k] = e
	return e
}

func (c *Checker[S]) transition(k transKey[S]) *transInfo {
	if ti, ok := c.trans[k]; ok {
		return ti
	}
	ti := &transInfo{}
	if inv := c.sp.Check(k.to); inv != "" {
		ti.bad = "invariant " + inv
	} else if p := c.sp.CheckStep(k.from, c.sp.Actions[k.act].Name, k.to); p != "" {
		ti.bad = "property " + p
	}
	c.trans[k] = ti // bounded by the spec's transitions: kept for coverage
	return ti
}

// mayStop reports whether the spec may stop in s: s is declared Terminal,
// or every enabled action only stutters there (Program's Terminated).
func (c *Checker[S]) mayStop(s S) bool {
	if v, ok := c.stop[s]; ok {
		return v
	}
	v := c.sp.Terminal != nil && c.sp.Terminal(s)
	if !v {
		enabled := false
		only := true
		for a := range c.sp.Actions {
			e := c.successors(s, a)
			if e.guard != "" {
				continue
			}
			enabled = true
			for _, t := range e.next {
				if t != s {
					only = false
				}
			}
		}
		v = enabled && only
	}
	if len(c.stop) >= maxCache {
		clear(c.stop)
	}
	c.stop[s] = v
	return v
}

func (c *Checker[S]) matches(t S, cons *constraint) bool {
	return cons.matches(c.valuation(t))
}

// matches reports whether a full valuation agrees with the constraint.
func (c *constraint) matches(vals []model.Value) bool {
	for _, i := range c.idx {
		if !vals[i].Equal(c.vals[i]) {
			return false
		}
	}
	return true
}

// readState fills c.cons from the event's state.
func (c *Checker[S]) readState(r *trace.Raw) error {
	c.cons.reset()
	c.unknownVar = ""
	for _, m := range r.State {
		i, ok := c.varIndex(m.Name)
		if !ok {
			return c.inputErr(r.Pos, "%w %q in state (the %s spec has %s)", ErrUnknownVariable, m.Name, c.sp.Name, strings.Join(c.sp.Vars, ", "))
		}
		v, err := c.values.get(m.Value)
		if errors.Is(err, ErrUnserializable) {
			if c.unknownVar == "" {
				c.unknownVar = string(m.Name)
			}
			continue
		}
		if err != nil {
			return c.inputErr(r.Pos, "state.%s: %w", m.Name, err)
		}
		if k := c.varKind[i]; v.Kind() != k {
			return c.inputErr(r.Pos, "%w: state.%s is %s %s, the spec's %s is a %s", ErrValue, m.Name, v.Kind(), clip(string(m.Value)), m.Name, k)
		}
		c.cons.put(i, v)
	}
	return nil
}

// varIndex finds a variable by name: a linear scan beats hashing for the
// few variables specs have.
func (c *Checker[S]) varIndex(name []byte) (int, bool) {
	if len(c.sp.Vars) <= 16 {
		for i, v := range c.sp.Vars {
			if v == string(name) {
				return i, true
			}
		}
		return 0, false
	}
	i, ok := c.varIdx[string(name)]
	return i, ok
}

func (c *Checker[S]) actionIndex(name []byte) (int, bool) {
	if len(c.sp.Actions) <= 16 {
		for i := range c.sp.Actions {
			if c.sp.Actions[i].Name == string(name) {
				return i, true
			}
		}
		return 0, false
	}
	i, ok := c.actIdx[string(name)]
	return i, ok
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// Feed checks one event. It returns an error only for bad input (see
// [InputError]); a violation is recorded in the instance's result (and
// reported through Options.OnViolation) and later events of that instance
// are counted but not checked.
func (c *Checker[S]) Feed(r *trace.Raw) error {
	if c.closed != nil {
		return errors.New("check: Feed after Close")
	}
	if err := c.readState(r); err != nil {
		return err
	}
	act := -1
	isInit := string(r.Action) == trace.InitAction
	if !r.Stutter && !isInit {
		a, ok := c.actionIndex(r.Action)
		if !ok {
			return c.inputErr(r.Pos, "%w %q (the %s spec has %s)", ErrUnknownAction, r.Action, c.sp.Name, c.actionList())
		}
		act = a
	}
	if isInit && r.Part != nil {
		return c.inputErr(r.Pos, "%w: Init cannot be part of a composite step", trace.ErrField)
	}
	in := c.insts[string(r.Instance)]
	if in == nil {
		in = c.newInstance(string(r.Instance), r.Pos)
	} else if r.Seq <= in.lastSeq {
		what := "goes backwards"
		if r.Seq == in.lastSeq {
			what = "repeats"
		}
		return c.inputErr(r.Pos, "%w: instance %s: seq %d %s (previous %d at line %d)", ErrSequence, trace.Printable(in.res.Instance), r.Seq, what, in.lastSeq, in.res.LastLine)
	}
	c.events++
	in.lastSeq = r.Seq
	in.res.Events++
	in.res.LastLine = r.Pos.Line
	if in.res.Verdict == Violation {
		return nil
	}
	if c.unknownVar != "" && in.uncertain == "" {
		in.uncertain = fmt.Sprintf("state.%s at line %d is #unserializable, so the trace could not be checked in full", c.unknownVar, r.Pos.Line)
	}
	switch {
	case in.res.Events == 1:
		if !isInit {
			c.violate(in, r, act, "init", fmt.Sprintf("the instance's first event is %s, want %s", r.Action, trace.InitAction))
			return nil
		}
		c.initial(in, r)
	case isInit:
		c.violate(in, r, act, "init", fmt.Sprintf("%s after the instance started (first event at line %d)", trace.InitAction, in.res.FirstLine))
	case r.Stutter:
		c.stutter(in, r)
	case r.Part != nil:
		c.part(in, r, act)
	case in.comp != nil:
		c.violate(in, r, act, "composite", fmt.Sprintf("%s inside the open composite step %s (begun at line %d)", r.Action, in.comp.name, in.comp.pos.Line))
	default:
		if c.advance(in, act, &c.cons) {
			c.violateStep(in, r, act, &c.cons)
		}
	}
	if in.res.Verdict == Violation {
		return nil
	}
	c.remember(in, r)
	if c.opt.OnStep != nil {
		c.opt.OnStep(c.stepInfo(in, r))
	}
	if c.opt.Forget {
		in.finishedAt = 0
		if in.comp == nil && in.uncertain == "" && c.finished(in) {
			in.finishedAt = c.events
			c.finishing = append(c.finishing, finishing[S]{in, c.events})
		}
		c.expire()
	}
	return nil
}

type finishing[S comparable] struct {
	in *instance[S]
	at int
}

// expire forgets the instances that have been finished for Linger events.
func (c *Checker[S]) expire() {
	linger := c.opt.Linger
	if linger <= 0 {
		linger = DefaultLinger
	}
	for c.fhead < len(c.finishing) && c.finishing[c.fhead].at+linger <= c.events {
		f := c.finishing[c.fhead]
		c.finishing[c.fhead] = finishing[S]{}
		c.fhead++
		if !f.in.forgotten && f.in.finishedAt == f.at && f.in.res.Verdict != Violation {
			c.forget(f.in)
		}
	}
	if c.fhead > 64 && c.fhead > len(c.finishing)/2 {
		n := copy(c.finishing, c.finishing[c.fhead:])
		clear(c.finishing[n:])
		c.finishing = c.finishing[:n]
		c.fhead = 0
	}
}

// Live returns the number of instances the checker holds state for: all
// instances seen, less those forgotten (Options.Forget).
func (c *Checker[S]) Live() int { return len(c.insts) }

// finished reports whether every candidate of in is a state where the spec
// may stop and no action leads anywhere else.
func (c *Checker[S]) finished(in *instance[S]) bool {
	for _, s := range in.cands {
		if !c.mayStop(s) {
			return false
		}
		q, ok := c.quiet[s]
		if !ok {
			q = true
			for a := range c.sp.Actions {
				for _, t := range c.successors(s, a).next {
					if t != s {
						q = false
					}
				}
			}
			if len(c.quiet) >= maxCache {
				clear(c.quiet)
			}
			c.quiet[s] = q
		}
		if !q {
			return false
		}
	}
	return len(in.cands) > 0
}

func (c *Checker[S]) forget(in *instance[S]) {
	delete(c.insts, in.res.Instance)
	in.forgotten = true
	in.cands, in.ring = nil, nil
	c.forgotten++
	c.dropped++
	if c.dropped > 64 && c.dropped > len(c.order)/2 {
		live := c.order[:0]
		for _, x := range c.order {
			if !x.forgotten {
				live = append(live, x)
			}
		}
		clear(c.order[len(live):])
		c.order = live
		c.dropped = 0
	}
}

func (c *Checker[S]) actionList() string {
	names := make([]string, len(c.sp.Actions))
	for i, a := range c.sp.Actions {
		names[i] = a.Name
	}
	return strings.Join(names, ", ")
}

func (c *Checker[S]) newInstance(name string, pos trace.Pos) *instance[S] {
	in := &instance[S]{res: InstanceResult{Instance: name, FirstLine: pos.Line}}
	if c.last > 0 {
		in.ring = make([]recent, c.last)
	}
	c.insts[name] = in
	c.order = append(c.order, in)
	return in
}

func (c *Checker[S]) remember(in *instance[S], r *trace.Raw) {
	if len(in.ring) == 0 {
		return
	}
	e := &in.ring[in.ringN%len(in.ring)]
	e.line = r.Pos.Line
	e.text = append(e.text[:0], r.Line...)
	in.ringN++
}

func (c *Checker[S]) initial(in *instance[S], r *trace.Raw) {
	var bad string
	for _, s := range c.inits {
		if !c.matches(s, &c.cons) {
			continue
		}
		if inv := c.sp.Check(s); inv != "" {
			bad = "invariant " + inv
			continue
		}
		in.cands = append(in.cands, s)
	}
	if len(in.cands) == 0 {
		reason := "the state is not an initial state of the spec"
		if bad != "" {
			reason = "the initial state breaks " + bad
		}
		c.violate(in, r, -1, "init", reason)
	}
}

// advance moves in's candidates along act to the successors that match
// cons and keep every invariant and property. It reports whether none did.
func (c *Checker[S]) advance(in *instance[S], act int, cons *constraint) (failed bool) {
	next := c.next[:0]
	var first transKey[S]
	var firstE *succEntry[S]
	firstJ, matched := 0, 0 // matched: 0, 1, or 2 for "more than one transition"
	for _, s := range in.cands {
		e := c.successors(s, act)
		if e.guard != "" {
			continue
		}
		for j, t := range e.next {
			if !cons.matches(e.vals[j]) {
				continue
			}
			if e.ok[j] == 0 {
				e.ok[j] = c.judge(s, act, t)
			}
			if e.ok[j] != stepOK {
				continue
			}
			switch {
			case matched == 0:
				first, firstE, firstJ, matched = transKey[S]{s, act, t}, e, j, 1
			case matched == 1 && (first.from != s || first.to != t):
				matched = 2
			}
			if len(next) == 0 {
				next = append(next, t)
			} else {
				next = c.addCandidate(next, t)
			}
		}
	}
	if c.seen != nil {
		clear(c.seen)
	}
	if len(next) == 0 {
		c.next = next
		return true
	}
	if matched == 1 {
		ti := firstE.info[firstJ]
		if ti == nil {
			ti = c.transition(first)
			firstE.info[firstJ] = ti
		}
		ti.count++
	} else {
		c.ambiguous++
	}
	in.cands, c.next = next, in.cands[:0]
	return false
}

// Step judgements, cached per successor in succEntry.ok.
const (
	stepOK  = 1 // every invariant and property holds
	stepBad = 2
)

// judge checks the invariants in t and the properties on the step.
func (c *Checker[S]) judge(s S, act int, t S) uint8 {
	bad, ok := c.invBad[t]
	if !ok {
		bad = c.sp.Check(t) != ""
		if len(c.invBad) >= maxCache {
			clear(c.invBad)
		}
		c.invBad[t] = bad
	}
	if bad || c.sp.CheckStep(s, c.sp.Actions[act].Name, t) != "" {
		return stepBad
	}
	return stepOK
}

// addCandidate appends t to next unless it is there: a linear scan for
// the usual few candidates, a set once there are many, so that wide
// nondeterminism with partial states stays linear.
func (c *Checker[S]) addCandidate(next []S, t S) []S {
	if len(next) < 32 {
		for _, u := range next {
			if u == t {
				return next
			}
		}
		return append(next, t)
	}
	if c.seen == nil {
		c.seen = make(map[S]struct{})
	}
	if len(c.seen) == 0 {
		for _, u := range next {
			c.seen[u] = struct{}{}
		}
	}
	if _, ok := c.seen[t]; ok {
		return next
	}
	c.seen[t] = struct{}{}
	return append(next, t)
}

func (c *Checker[S]) stutter(in *instance[S], r *trace.Raw) {
	fits := func(s S) bool {
		vals := c.valuation(s)
		for _, i := range c.cons.idx {
			want := vals[i]
			if in.comp != nil && in.comp.cons.set[i] {
				want = in.comp.cons.vals[i]
			}
			if !want.Equal(c.cons.vals[i]) {
				return false
			}
		}
		return true
	}
	n := 0
	for _, s := range in.cands {
		if fits(s) {
			n++
		}
	}
	if n == 0 { // keep the candidates for the report
		c.violate(in, r, -1, "stutter", fmt.Sprintf("stutter event %q changes spec variables", r.Action))
		return
	}
	if n < len(in.cands) {
		keep := in.cands[:0]
		for _, s := range in.cands {
			if fits(s) {
				keep = append(keep, s)
			}
		}
		in.cands = keep
	}
}

func (c *Checker[S]) part(in *instance[S], r *trace.Raw, act int) {
	name := c.sp.Actions[act].Name
	switch string(r.Part) {
	case trace.PartBegin:
		if in.comp != nil {
			c.violate(in, r, act, "composite", fmt.Sprintf("composite %s begins inside the open composite %s (begun at line %d)", name, in.comp.name, in.comp.pos.Line))
			return
		}
		enabled := false
		for _, s := range in.cands {
			if c.successors(s, act).guard == "" {
				enabled = true
				break
			}
		}
		if !enabled {
			c.violateStep(in, r, act, &c.cons)
			return
		}
		in.comp = &composite{act: act, name: name, pos: r.Pos, cons: c.cons.clone()}
	default:
		if in.comp == nil {
			c.violate(in, r, act, "composite", fmt.Sprintf("part %q of %s without a begin", r.Part, name))
			return
		}
		if in.comp.act != act {
			c.violate(in, r, act, "composite", fmt.Sprintf("part of %s inside the open composite %s (begun at line %d)", name, in.comp.name, in.comp.pos.Line))
			return
		}
		for _, i := range c.cons.idx {
			in.comp.cons.put(i, c.cons.vals[i])
		}
		if string(r.Part) == trace.PartEnd {
			comp := in.comp
			in.comp = nil
			if c.advance(in, act, &comp.cons) {
				c.violateStep(in, r, act, &comp.cons)
			}
		}
	}
}

// Truncated records that the stream's last line (at pos, partial text
// line) was cut off mid-line: its instance, or every instance if the
// partial line does not say which, is incomplete.
func (c *Checker[S]) Truncated(pos trace.Pos, line []byte) {
	c.truncated = &pos
	name, ok := trace.PeekInstance(line)
	if !ok {
		for _, in := range c.order {
			in.trunc = true
		}
		return
	}
	c.truncInst = name
	in := c.insts[name]
	if in == nil {
		in = c.newInstance(name, pos)
		in.res.LastLine = pos.Line
	}
	in.trunc = true
}

// Close ends the stream and returns the report: each instance's verdict
// is final. Close may be called more than once.
func (c *Checker[S]) Close() *Report {
	c.mu.Lock() // against a concurrent Emit
	defer c.mu.Unlock()
	if c.closed != nil {
		return c.closed
	}
	rep := &Report{File: c.name, Model: c.sp.Name, Events: c.events, Ambiguous: c.ambiguous}
	if c.truncated != nil {
		rep.Truncated = &Truncation{File: c.truncated.File, Line: c.truncated.Line, Instance: c.truncInst}
	}
	rep.Forgotten = c.forgotten
	for _, in := range c.order {
		if in.forgotten {
			continue
		}
		res := in.res
		if res.Verdict != Violation {
			res.Verdict, res.Reason = c.final(in)
		}
		if res.Verdict != Violation {
			for _, s := range in.cands {
				res.Final = append(res.Final, c.sp.Format(s))
				res.FinalValues = append(res.FinalValues, c.sp.Valuation(s))
			}
		}
		rep.Instances = append(rep.Instances, res)
	}
	for k, ti := range c.trans {
		if ti.count == 0 {
			continue
		}
		rep.Exercised = append(rep.Exercised, Transition{From: c.sp.Format(k.from),
			Action: c.sp.Actions[k.act].Name, To: c.sp.Format(k.to), Count: ti.count})
	}
	sort.Slice(rep.Exercised, func(i, j int) bool { return rep.Exercised[i].less(rep.Exercised[j]) })
	c.closed = rep
	return rep
}

func (c *Checker[S]) final(in *instance[S]) (Verdict, string) {
	switch {
	case in.trunc:
		return Incomplete, fmt.Sprintf("the trace is truncated at %s (a partial last line)", c.truncated)
	case in.comp != nil:
		return Incomplete, fmt.Sprintf("the trace ends inside the composite step %s begun at line %d", in.comp.name, in.comp.pos.Line)
	case len(in.cands) == 0:
		return Incomplete, "no event checked"
	}
	for _, s := range in.cands {
		if !c.mayStop(s) {
			enabled := c.sp.Enabled(s)
			what := "enabled: " + strings.Join(enabled, ", ")
			if len(enabled) == 0 {
				what = "no action is enabled and the state is not terminal (a deadlock)"
			}
			return Incomplete, fmt.Sprintf("the trace ends in a state where the spec does not stop: %s (%s)", c.sp.Format(s), what)
		}
	}
	if in.uncertain != "" {
		return Incomplete, in.uncertain
	}
	return Valid, ""
}

// Emit feeds an event written in-process, as a trace.Sink: a checker can
// sit directly behind an implementation's emitter as a live monitor. It
// is safe for concurrent use. Positions name the events in emission order.
func (c *Checker[S]) Emit(e trace.Event) error {
	if e.V == 0 {
		e.V = trace.Version
	}
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("check: encode event: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.emitted++
	c.line = append(c.line[:0], line...)
	r, err := trace.ParseEvent(c.line, trace.Pos{File: c.name, Line: c.emitted})
	if err != nil {
		return &InputError{trace.Pos{File: c.name, Line: c.emitted}, err}
	}
	return c.Feed(r)
}

var _ trace.Sink = (*Checker[int])(nil)

func (c *Checker[S]) stepInfo(in *instance[S], r *trace.Raw) Step {
	st := Step{Pos: r.Pos, Instance: in.res.Instance, Seq: r.Seq, Action: string(r.Action),
		Part: string(r.Part), Stutter: r.Stutter}
	for _, s := range in.cands {
		st.States = append(st.States, c.sp.Format(s))
		st.Enabled = append(st.Enabled, c.sp.Enabled(s))
	}
	return st
}
