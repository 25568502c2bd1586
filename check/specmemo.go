package check

import (
	"errors"
	"fmt"
	"strings"

	"github.com/tracecheck/tracecheck/model"
)

// specMemo answers the checker's questions about a spec and remembers the
// answers: a state's valuation, what an action does there (the guard that
// disables it, or its successors), whether a step breaks an invariant or
// a property, whether the spec may stop in a state and what an instance
// that ends there reports; and, looked up once, the spec's names and
// initial states. Every answer is a pure function of the spec, whatever
// the trace, so a memo may forget one and compute it again (see memo).
// The spec's own methods (Format, Enabled, Check...) are not remembered.
// What belongs to one stream of events is the [Checker]'s.
type specMemo[S comparable] struct {
	*model.Spec[S]
	vars, actions nameIndex
	varKind       []model.Kind    // each variable's kind, as in the first initial state
	inits         []S             // the initial states
	initVals      [][]model.Value // the valuation of each initial state
	initBad       []string        // the invariant each initial state breaks, or ""
	domains       domains         // the variables' values, found when a report first needs them

	valn  memo[S, []model.Value]
	succ  memo[succKey[S], *succEntry[S]]
	stops memo[S, stopping]
	ends  memo[S, *endInfo]
	// lastEnd is the last state looked up in ends: often the next.
	lastEnd struct {
		s  S
		in *endInfo
	}
	// trans has no bound: a transition keeps its transInfo, and the id
	// that the checker counts it by, for good. Only transitions between
	// states of the trace get there.
	trans memo[transKey[S], *transInfo]
}

func newSpecMemo[S comparable](sp *model.Spec[S]) (*specMemo[S], error) {
	if sp == nil || len(sp.Vars) == 0 || sp.Valuation == nil || sp.Init == nil {
		return nil, errors.New("check: spec without variables, valuation or initial states")
	}
	q := &specMemo[S]{Spec: sp, vars: newNameIndex(sp.Vars), inits: sp.Init(),
		valn: newMemo(sp.Valuation, memoBound)}
	q.succ = newMemo(q.newSuccEntry, memoBound)
	q.stops = newMemo(q.newStopping, memoBound)
	q.ends = newMemo(q.newEndInfo, memoBound)
	q.trans = newMemo(q.newTransInfo, 0)
	names := make([]string, len(sp.Actions))
	for i, a := range sp.Actions {
		names[i] = a.Name
	}
	q.actions = newNameIndex(names)
	if len(q.inits) == 0 {
		return nil, errors.New("check: spec has no initial state")
	}
	for _, s := range q.inits {
		vals := sp.Valuation(s)
		if len(vals) != len(sp.Vars) {
			return nil, fmt.Errorf("check: spec %s: an initial state has %d values for %d variables", sp.Name, len(vals), len(sp.Vars))
		}
		q.initVals = append(q.initVals, vals)
		q.initBad = append(q.initBad, sp.Check(s))
	}
	for _, v := range q.initVals[0] {
		q.varKind = append(q.varKind, v.Kind())
	}
	return q, nil
}

// nameIndex finds a name's index in a list of names (a spec's variables
// or actions).
type nameIndex struct {
	names []string
	idx   map[string]int
}

func newNameIndex(names []string) nameIndex {
	x := nameIndex{names: names, idx: make(map[string]int, len(names))}
	for i, n := range names {
		x.idx[n] = i
	}
	return x
}

// find returns name's index: a linear scan beats hashing for the few names
// specs have.
func (x *nameIndex) find(name []byte) (int, bool) {
	if len(x.names) <= 16 {
		for i, n := range x.names {
			if n == string(name) {
				return i, true
			}
		}
		return 0, false
	}
	i, ok := x.idx[string(name)]
	return i, ok
}

// valuation returns the values of s's variables, in the order of Vars.
func (q *specMemo[S]) valuation(s S) []model.Value { return q.valn.of(s) }

type succKey[S comparable] struct {
	s   S
	act int
}

// succEntry is what an action does in a state: the guard that disables it,
// or its successors.
type succEntry[S comparable] struct {
	key   succKey[S]
	guard string
	next  []S
	vals  [][]model.Value // the valuation of each successor
	trans []*transInfo    // the transition to each successor, once asked for
}

// successors returns what the action act does in s.
func (q *specMemo[S]) successors(s S, act int) *succEntry[S] {
	return q.succ.of(succKey[S]{s, act})
}

func (q *specMemo[S]) newSuccEntry(k succKey[S]) *succEntry[S] {
	a := &q.Actions[k.act]
	e := &succEntry[S]{key: k, guard: a.Guard(k.s)}
	if e.guard == "" {
		a.Next(k.s, func(t S) { e.next = append(e.next, t) })
	}
	for _, t := range e.next {
		e.vals = append(e.vals, q.valuation(t))
	}
	e.trans = make([]*transInfo, len(e.next))
	return e
}

type transKey[S comparable] struct {
	from S
	act  int
	to   S
}

// transInfo is a transition of the spec: its identity, whether it
// breaks an invariant or a property, and, once asked for, the arguments
// it is taken with.
type transInfo struct {
	id  int    // 0, 1, 2... in the order the transitions were first asked for
	bad string // "invariant X" or "property Y", or ""
	// args are the argument lists of the action's Args (asked for the
	// first time an event with arguments meets the transition), valid
	// once hasArgs is set.
	args    [][]model.Value
	hasArgs bool
}

// transition returns the transition from e's state under e's action to
// its j-th successor.
func (q *specMemo[S]) transition(e *succEntry[S], j int) *transInfo {
	if e.trans[j] == nil {
		e.trans[j] = q.trans.of(transKey[S]{e.key.s, e.key.act, e.next[j]})
	}
	return e.trans[j]
}

// argsOf returns the argument lists with which e's action steps from e's
// state to its j-th successor (model.Action.Args), asked of the spec once
// per transition. The action must have Args.
func (q *specMemo[S]) argsOf(e *succEntry[S], j int) [][]model.Value {
	ti := q.transition(e, j)
	if !ti.hasArgs {
		ti.args, ti.hasArgs = q.Actions[e.key.act].Args(e.key.s, e.next[j]), true
	}
	return ti.args
}

// fitsArgs reports whether args is one of lists.
func fitsArgs(lists [][]model.Value, args []model.Value) bool {
	for _, l := range lists {
		if sameArgs(l, args) {
			return true
		}
	}
	return false
}

// sameArgs reports whether two argument lists are equal.
func sameArgs(a, b []model.Value) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !a[i].Equal(b[i]) {
			return false
		}
	}
	return true
}

func (q *specMemo[S]) newTransInfo(k transKey[S]) *transInfo {
	ti := &transInfo{id: q.trans.len()}
	if inv := q.Check(k.to); inv != "" {
		ti.bad = "invariant " + inv
	} else if p := q.CheckStep(k.from, q.Actions[k.act].Name, k.to); p != "" {
		ti.bad = "property " + p
	}
	return ti
}

// stopping says whether the spec may stop in a state, and whether an
// instance there is finished.
type stopping struct {
	may      bool // the state is Terminal, or every enabled action only stutters there (Program's Terminated)
	finished bool // the spec may stop, and no action leads anywhere else
}

func (q *specMemo[S]) stopping(s S) stopping { return q.stops.of(s) }

func (q *specMemo[S]) newStopping(s S) stopping {
	enabled, only := false, true
	for a := range q.Actions {
		e := q.successors(s, a)
		enabled = enabled || e.guard == ""
		for _, t := range e.next {
			only = only && t == s
		}
	}
	may := (q.Terminal != nil && q.Terminal(s)) || (enabled && only)
	return stopping{may: may, finished: may && only}
}

// endInfo is what the checker reports of an instance that ends in a
// state: a million instances that end in the same state share it.
type endInfo struct {
	stop   bool            // the spec may stop there
	why    string          // if not, why the instance is incomplete
	format string          // Spec.Format
	final  []string        // {format}: Final when it is the only candidate
	vals   [][]model.Value // {Spec.Valuation}: FinalValues likewise
}

// end returns the endInfo of s.
func (q *specMemo[S]) end(s S) *endInfo {
	if e := q.lastEnd.in; e != nil && q.lastEnd.s == s {
		return e
	}
	e := q.ends.of(s)
	q.lastEnd.s, q.lastEnd.in = s, e
	return e
}

func (q *specMemo[S]) newEndInfo(s S) *endInfo {
	e := &endInfo{stop: q.stopping(s).may, format: q.Format(s)}
	e.final, e.vals = []string{e.format}, [][]model.Value{q.Valuation(s)}
	if !e.stop {
		enabled := q.Enabled(s)
		what := "enabled: " + strings.Join(enabled, ", ")
		if len(enabled) == 0 {
			what = "no action is enabled and the state is not terminal (a deadlock)"
		}
		e.why = fmt.Sprintf("the trace ends in a state where the spec does not stop: %s (%s)", e.format, what)
	}
	return e
}
