package check

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"sort"
	"strconv"
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
	// ErrArgs: an event gives arguments to an action that takes none
	// (Init, or an action whose model.Action.Args is nil), or arguments
	// that are not values.
	ErrArgs = errors.New("bad arguments")
)

// InputError is an error in the input rather than in the behaviour it
// records: malformed lines, names the spec does not have, values of the
// wrong type, sequence numbers out of order. Its text is one line that
// starts with file:line.
type InputError struct {
	Pos trace.Pos
	// Doc is the ITF document, counted from 1, when the input is ITF
	// (docs/itf.md); Pos.Line is then the line of the ITF input.
	Doc int
	Err error
}

// Error returns "file:line: what" ("file:doc:line: what" in the second
// and later documents of an ITF stream).
func (e *InputError) Error() string {
	var pe *trace.PosError
	if errors.As(e.Err, &pe) && e.Doc == 0 {
		return e.Err.Error()
	}
	return where(e.Pos.File, e.Doc, e.Pos.Line) + ": " + e.Err.Error()
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
	// OnResult, if set, receives each instance's result as soon as it is
	// final, and the report then counts the instance (Report.Streamed)
	// instead of listing it, so that a check's memory does not grow with
	// the instances it has reported: a violation at once (its Events and
	// LastLine as of the violating event; later events of the instance
	// are still counted in Report.Events, not checked), an instance that
	// Forget drops when it drops it (instead of counting it in
	// Report.Forgotten), and every other instance at Close, in order of
	// first appearance. A check that stops on an input error or on
	// cancellation does not report the instances still open.
	OnResult func(InstanceResult)
}

func (o Options) last() int {
	if o.Last < 0 {
		return 0
	}
	return cmp.Or(o.Last, DefaultLast)
}

// Step describes one accepted event, for [Options.OnStep].
type Step struct {
	Pos      trace.Pos
	Instance string
	Seq      uint64
	Action   string
	// Args are the event's arguments in TLA+ syntax (TLC's), if it gives
	// any.
	Args    []string
	Part    string
	Stutter bool
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
	c.readsFrom(r)
	c.itf, _ = r.(trace.ITFSource)
	dec := trace.NewDecoderSize(r, name, opt.MaxLine)
	for n := 0; ; n++ {
		if n&1023 == 0 {
			if err := ctx.Err(); err != nil {
				return c.abort(), err
			}
		}
		ev, err := dec.Next()
		if err == io.EOF {
			break
		}
		if c.itf != nil && ev != nil {
			ev.Pos.Line = c.fromITF(ev.Pos.Line)
		}
		if errors.Is(err, trace.ErrTruncated) {
			c.Truncated(ev.Pos, ev.Line)
			break
		}
		if err != nil {
			return c.abort(), c.decodeError(dec.Pos(), err)
		}
		if err := c.Feed(ev); err != nil {
			return c.abort(), err
		}
	}
	return c.Close(), nil
}

// fromITF returns the line of the ITF input where the state of the
// NDJSON's line n starts, and makes its document the current one, when
// the input is ITF converted to NDJSON; otherwise n.
func (c *Checker[S]) fromITF(n int) int {
	if c.itf == nil {
		return n
	}
	p, ok := c.itf.ITFPos(n)
	if !ok {
		return n
	}
	c.doc = p.Doc
	return p.Line
}

// decodeError returns the decoder's error err at pos as an input error,
// at the ITF's line when the input is ITF.
func (c *Checker[S]) decodeError(pos trace.Pos, err error) error {
	if c.itf == nil {
		return &InputError{Pos: pos, Err: err}
	}
	pos.Line = c.fromITF(pos.Line)
	var pe *trace.PosError
	if errors.As(err, &pe) {
		err = pe.Err // it names the NDJSON's line
	}
	return &InputError{Pos: pos, Doc: c.doc, Err: err}
}

// readsFrom lets the checker read r's lines again when r can (a regular
// file, a bytes.Reader): an instance's last matched events are then kept
// as positions in r, a few bytes each, and read back for a divergence
// report, instead of as copies of the lines.
func (c *Checker[S]) readsFrom(r io.Reader) {
	rs, ok := r.(interface {
		io.ReaderAt
		io.Seeker
	})
	if !ok {
		return
	}
	if base, err := rs.Seek(0, io.SeekCurrent); err == nil { // it fails on a pipe
		c.src, c.srcBase = rs, base
	}
}

// abort closes a check cut short by an error: with OnResult, the
// instances still open are not reported.
func (c *Checker[S]) abort() *Report {
	c.aborted = true
	return c.Close()
}

// Checker validates a stream of events incrementally: feed it events as
// they arrive and close it at the end of the stream. It holds what belongs
// to the stream: its instances (candidate states, open composite step,
// last matched events), their divergence reports and results (streamed as
// they become final with Options.OnResult), and how often each transition
// fitted an event; what it needs to know of the spec it asks a memo of the
// spec's answers, which no event changes. Memory is bounded by the number
// of live instances, not by the number of events. A Checker is not safe
// for concurrent use, except through [Checker.Emit] and [Checker.Close].
type Checker[S comparable] struct {
	spec   *specMemo[S]
	opt    Options
	name   string
	last   int
	values valueCache

	insts *instTable[S]
	order []*instance[S]

	cons constraint
	// unknown says what of the event was #unserializable ("state.x", "an
	// argument"), if anything.
	unknown string
	// args are the event's arguments, nil if it gives none (or they are
	// #unserializable); at the end of a composite step, the composite's.
	args []model.Value
	next []S
	seen map[S]struct{} // addCandidate's set, empty between steps

	src     io.ReaderAt // the input, if it can be read again (readsFrom)
	srcBase int64       // the input's offset in src where the check began
	// itf is the input when it is ITF converted to NDJSON (Check): events
	// are then named by the ITF's lines, and doc is the document of the
	// event being checked.
	itf trace.ITFSource
	doc int

	events    int
	taken     []int // how often each transition (transInfo.id) fitted an event alone
	ambiguous int
	forgotten int
	streamed  Tally
	dropped   int // forgotten instances still in order
	finishing []finishing[S]
	fhead     int
	truncated *Truncation
	aborted   bool
	closed    *Report

	mu      sync.Mutex // Emit only
	emitted int
	line    []byte
}

// New returns a Checker for sp. It returns an error if sp is unusable
// (no variables, no initial state).
func New[S comparable](sp *model.Spec[S], opt Options) (*Checker[S], error) {
	spec, err := newSpecMemo(sp)
	if err != nil {
		return nil, err
	}
	return &Checker[S]{spec: spec, opt: opt, name: cmp.Or(opt.Name, "-"), last: opt.last(),
		insts: newInstTable[S](), cons: newConstraint(len(sp.Vars))}, nil
}

// instance is the state of one instance. It is kept small (96 bytes for
// the bundled specs; with the instance table, the name and the recent
// events about 150 bytes an instance, see BenchmarkCheckInstances): a
// trace may hold a million instances at once. What only some instances
// need (a violation's report, an open composite step) hangs off pointers;
// the usual single candidate state is kept inline; the last matched events
// are packed in one byte slice, as positions in the input when it can be
// read again.
type instance[S comparable] struct {
	name      string
	lastSeq   uint64
	events    int
	firstLine int
	lastLine  int
	// recent packs the last matched events, oldest first (see remember).
	recent []byte
	x      *instanceExtra[S]
	// finishedAt is the low 32 bits of the event count when the instance
	// last became finished (Forget), valid while fFinishing is set: an
	// entry of Checker.finishing is at most Linger events old, far less
	// than 2^32, so the low bits tell whether it is still current.
	finishedAt uint32
	nrecent    int32 // events in recent
	verdict    Verdict
	flags      uint8
	// one is the candidate state when there is one (fOne); several are in
	// x.more (fMany); none once the instance violated the spec.
	one [1]S
}

// instance flags.
const (
	fOne       = 1 << iota // one candidate, in one
	fMany                  // several candidates, in x.more
	fTrunc                 // the trace ends on a partial line of it
	fForgotten             // dropped by Forget
	fReported              // its result went to OnResult
	fFinishing             // finishedAt is set
)

func (in *instance[S]) is(f uint8) bool { return in.flags&f != 0 }

// instanceExtra holds what few instances need.
type instanceExtra[S comparable] struct {
	more      []S         // the candidates when there are several (fMany)
	comp      *composite  // the open composite step
	uncertain string      // why a valid ending would be only incomplete
	div       *Divergence // the violation, until it is reported
}

func (in *instance[S]) extra() *instanceExtra[S] {
	if in.x == nil {
		in.x = &instanceExtra[S]{}
	}
	return in.x
}

func (in *instance[S]) uncertain() string {
	if in.x == nil {
		return ""
	}
	return in.x.uncertain
}

// comp returns the open composite step, or nil.
func (in *instance[S]) comp() *composite {
	if in.x == nil {
		return nil
	}
	return in.x.comp
}

// cands returns the candidate states. The slice is the instance's own:
// valid until the candidates change.
func (in *instance[S]) cands() []S {
	switch {
	case in.flags&fOne != 0:
		return in.one[:]
	case in.flags&fMany != 0:
		return in.x.more
	}
	return nil
}

// setCands makes next (a scratch slice, or cands() itself) the
// candidates.
func (in *instance[S]) setCands(next []S) {
	in.flags &^= fOne | fMany
	switch len(next) {
	case 0:
		if in.x != nil {
			in.x.more = nil
		}
	case 1:
		in.one[0] = next[0]
		in.flags |= fOne
	default:
		x := in.extra()
		x.more = append(x.more[:0], next...)
		in.flags |= fMany
	}
}

type composite struct {
	act  int
	name string
	pos  trace.Pos
	cons constraint
	// args are the arguments a part gave (all parts that give them give
	// the same), nil if none did.
	args     []model.Value
	argsLine int // the line of the first part that gave them
}

func (c *Checker[S]) inputErr(pos trace.Pos, format string, args ...any) error {
	return &InputError{Pos: pos, Doc: c.doc, Err: fmt.Errorf(format, args...)}
}

// readState fills c.cons from the event's state.
func (c *Checker[S]) readState(r *trace.Raw) error {
	c.cons.reset()
	c.unknown = ""
	for _, m := range r.State {
		i, ok := c.spec.vars.find(m.Name)
		if !ok {
			return c.unknownVariable(r, m.Name)
		}
		v, err := c.values.get(m.Value)
		if errors.Is(err, ErrUnserializable) {
			if c.unknown == "" {
				c.unknown = "state." + string(m.Name)
			}
			continue
		}
		if err != nil {
			return c.inputErr(r.Pos, "state.%s: %w", m.Name, err)
		}
		if k := c.spec.varKind[i]; v.Kind() != k {
			return c.wrongKind(r, m, v.Kind(), k)
		}
		c.cons.put(i, v)
	}
	return nil
}

// The input errors of readState and Feed, out of their way.

func (c *Checker[S]) unknownVariable(r *trace.Raw, name []byte) error {
	return c.inputErr(r.Pos, "%w %s in state (the %s spec has %s)", ErrUnknownVariable, clipValue(strconv.Quote(string(name))), c.spec.Name, strings.Join(c.spec.Vars, ", "))
}

func (c *Checker[S]) wrongKind(r *trace.Raw, m trace.RawVar, got, want model.Kind) error {
	return c.inputErr(r.Pos, "%w: state.%s is %s %s, the spec's %s is %s", ErrValue, m.Name, got, clip(string(m.Value)), m.Name, kindName(want))
}

func (c *Checker[S]) unknownAction(r *trace.Raw) error {
	return c.inputErr(r.Pos, "%w %s (the %s spec has %s)", ErrUnknownAction, clipValue(strconv.Quote(string(r.Action))), c.spec.Name, strings.Join(c.spec.actions.names, ", "))
}

func clip(s string) string {
	if len(s) > 40 {
		return s[:40] + "..."
	}
	return s
}

// kindName names a kind of value with its article: "an int", "a string".
func kindName(k model.Kind) string {
	name := k.String()
	if name != "" && strings.ContainsRune("aeiou", rune(name[0])) {
		return "an " + name
	}
	return "a " + name
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
	// An event named Init is the instance's Init, stutter or not, as TLC's
	// trace validation (spec/TraceProgram.tla) reads it too: a stutter
	// event's action is free text, but not that one.
	isInit := string(r.Action) == trace.InitAction
	if !r.Stutter && !isInit {
		a, ok := c.spec.actions.find(r.Action)
		if !ok {
			return c.unknownAction(r)
		}
		act = a
	}
	if isInit && r.Part != nil {
		return c.inputErr(r.Pos, "%w: Init cannot be part of a composite step", trace.ErrField)
	}
	c.args = nil
	if r.Args != nil {
		if err := c.readArgs(r, act, isInit); err != nil {
			return err
		}
	}
	in, h, slot := c.insts.find(r.Instance)
	if in == nil {
		in = c.newInstance(string(r.Instance), r.Pos)
		c.insts.insert(h, slot, in)
	} else if r.Seq <= in.lastSeq {
		what := "goes backwards"
		if r.Seq == in.lastSeq {
			what = "repeats"
		}
		return c.inputErr(r.Pos, "%w: instance %s: seq %d %s (previous %d at line %d)", ErrSequence, clipID(trace.Printable(in.name)), r.Seq, what, in.lastSeq, in.lastLine)
	}
	c.events++
	in.lastSeq = r.Seq
	in.events++
	in.lastLine = r.Pos.Line
	if in.verdict != Violation {
		c.step(in, r, act, isInit)
	}
	if c.opt.Forget {
		c.expire()
	}
	return nil
}

// readArgs sets c.args to the event's arguments (act is its action, -1
// for a stutter event).
func (c *Checker[S]) readArgs(r *trace.Raw, act int, isInit bool) error {
	switch {
	case isInit:
		return c.inputErr(r.Pos, "%w: %s takes no arguments", ErrArgs, trace.InitAction)
	case act < 0:
		return c.inputErr(r.Pos, "%w: a stutter event takes no arguments", ErrArgs)
	case c.spec.Actions[act].Args == nil:
		return c.inputErr(r.Pos, "%w: action %s of spec %s takes no arguments", ErrArgs, c.spec.Actions[act].Name, c.spec.Name)
	}
	v, err := c.values.get(r.Args)
	switch {
	case errors.Is(err, ErrUnserializable):
		if c.unknown == "" { // the action alone, and the instance uncertain
			c.unknown = "an argument"
		}
		return nil
	case err != nil:
		return c.inputErr(r.Pos, "%w: args: %w", ErrArgs, err)
	case v.Kind() != model.KindSeq:
		return c.inputErr(r.Pos, "%w: args is not an array: %s", ErrArgs, clip(string(r.Args)))
	}
	c.args = v.Elems()
	return nil
}

// step checks the event r of in, which has not violated the spec.
func (c *Checker[S]) step(in *instance[S], r *trace.Raw, act int, isInit bool) {
	if c.unknown != "" && in.uncertain() == "" {
		in.extra().uncertain = fmt.Sprintf("%s at line %d is #unserializable, so the trace could not be checked in full", c.unknown, r.Pos.Line)
	}
	switch {
	case in.events == 1:
		if !isInit {
			what := clipID(string(r.Action))
			if r.Stutter {
				what = "the stutter event " + clipValue(strconv.Quote(string(r.Action)))
			}
			c.violate(in, r, KindInit, fmt.Sprintf("the instance's first event is %s, want %s", what, trace.InitAction))
			return
		}
		c.initial(in, r)
	case isInit:
		also := ""
		if r.Stutter {
			also = "; a stutter event named Init is an Init too"
		}
		c.violate(in, r, KindInit, fmt.Sprintf("%s after the instance started (first event at line %d%s)", trace.InitAction, in.firstLine, also))
	case r.Stutter:
		c.stutter(in, r)
	case r.Part != nil:
		c.part(in, r, act)
	case in.comp() != nil:
		comp := in.comp()
		c.violate(in, r, KindComposite, fmt.Sprintf("%s inside the open composite step %s (begun at line %d)", r.Action, comp.name, comp.pos.Line))
	default:
		if c.advance(in, act, &c.cons) {
			c.violateStep(in, r, act, &c.cons)
		}
	}
	if in.verdict == Violation {
		return
	}
	c.remember(in, r)
	if c.opt.OnStep != nil {
		c.opt.OnStep(c.stepInfo(in, r))
	}
	if c.opt.Forget {
		in.flags &^= fFinishing
		if in.comp() == nil && in.uncertain() == "" && c.finished(in) {
			in.flags |= fFinishing
			in.finishedAt = uint32(c.events)
			c.finishing = append(c.finishing, finishing[S]{in, c.events})
		}
	}
}

type finishing[S comparable] struct {
	in *instance[S]
	at int
}

// expire forgets the instances that have been finished for Linger events.
func (c *Checker[S]) expire() {
	linger := cmp.Or(max(c.opt.Linger, 0), DefaultLinger)
	linger = min(linger, 1<<31) // instance.finishedAt keeps 32 bits
	for c.fhead < len(c.finishing) && c.finishing[c.fhead].at+linger <= c.events {
		f := c.finishing[c.fhead]
		c.finishing[c.fhead] = finishing[S]{}
		c.fhead++
		in := f.in
		if !in.is(fForgotten) && in.is(fFinishing) && in.finishedAt == uint32(f.at) && in.verdict != Violation {
			c.forget(in)
		}
	}
	if c.fhead > 64 && c.fhead > len(c.finishing)/2 {
		c.finishing, c.fhead = slices.Delete(c.finishing, 0, c.fhead), 0
	}
}

// Live returns the number of instances the checker holds state for: all
// instances seen, less those forgotten (Options.Forget).
func (c *Checker[S]) Live() int { return c.insts.Len() }

// finished reports whether every candidate of in is a state where the spec
// may stop and no action leads anywhere else.
func (c *Checker[S]) finished(in *instance[S]) bool {
	for _, s := range in.cands() {
		if !c.spec.stopping(s).finished {
			return false
		}
	}
	return len(in.cands()) > 0
}

func (c *Checker[S]) forget(in *instance[S]) {
	if c.opt.OnResult != nil {
		c.report(c.result(in))
		in.flags |= fReported
	} else {
		c.forgotten++
	}
	c.insts.delete(in)
	in.flags |= fForgotten
	in.flags &^= fOne | fMany
	in.recent, in.x = nil, nil
	c.dropped++
	if c.dropped > 64 && c.dropped > len(c.order)/2 {
		c.order = slices.DeleteFunc(c.order, func(x *instance[S]) bool { return x.is(fForgotten) })
		c.dropped = 0
	}
}

func (c *Checker[S]) newInstance(name string, pos trace.Pos) *instance[S] {
	in := &instance[S]{name: name, firstLine: pos.Line}
	c.order = append(c.order, in)
	return in
}

// remember records r as in's latest matched event, dropping the oldest
// beyond the last c.last. The events are packed into in.recent, oldest
// first, each as uvarints: its line number, its ITF document if the input
// is ITF, then either its offset and length in the input (when c.src can
// read it again) or its length followed by the line's bytes.
func (c *Checker[S]) remember(in *instance[S], r *trace.Raw) {
	if c.last == 0 {
		return
	}
	if int(in.nrecent) >= c.last {
		_, rest := c.unpack(in.recent)
		in.recent = in.recent[:copy(in.recent, rest)]
		in.nrecent--
	}
	var head [4 * binary.MaxVarintLen64]byte
	b := binary.AppendUvarint(head[:0], uint64(r.Pos.Line))
	if c.itf != nil {
		b = binary.AppendUvarint(b, uint64(c.doc))
	}
	if c.src != nil {
		b = binary.AppendUvarint(b, uint64(r.Off))
		b = binary.AppendUvarint(b, uint64(len(r.Line)))
		in.recent = append(in.recent, b...)
	} else {
		b = binary.AppendUvarint(b, uint64(len(r.Line)))
		if in.recent == nil { // one allocation of the right size for the first
			in.recent = make([]byte, 0, len(b)+len(r.Line))
		}
		in.recent = append(append(in.recent, b...), r.Line...)
	}
	in.nrecent++
}

// packedEvent is one event packed in instance.recent (see remember).
type packedEvent struct {
	line, doc, off, n int    // off: where in the input, if it was kept as a position
	text              []byte // the line, if it was kept as a copy
}

// unpack returns the first event packed in b, and the rest of b.
func (c *Checker[S]) unpack(b []byte) (e packedEvent, rest []byte) {
	next := func() int {
		v, n := binary.Uvarint(b)
		b = b[n:]
		return int(v)
	}
	e.line = next()
	if c.itf != nil {
		e.doc = next()
	}
	positions := c.src != nil
	if positions {
		e.off = next()
	}
	e.n = next()
	if !positions {
		e.text, b = b[:e.n], b[e.n:]
	}
	return e, b
}

func (c *Checker[S]) initial(in *instance[S], r *trace.Raw) {
	var bad string
	next := c.next[:0]
	for i, s := range c.spec.inits {
		if !c.cons.matches(c.spec.initVals[i]) {
			continue
		}
		if inv := c.spec.initBad[i]; inv != "" {
			bad = "invariant " + inv
			continue
		}
		next = append(next, s)
	}
	in.setCands(next)
	c.next = next[:0]
	if len(next) == 0 {
		reason := "the state is not an initial state of the spec"
		if bad != "" {
			reason = "the initial state breaks " + bad
		}
		c.violate(in, r, KindInit, reason)
	}
}

// advance moves in's candidates along act to the successors that match
// cons and keep every invariant and property, and, if the event gives
// arguments (c.args), that act reaches with them. It reports whether none
// did.
func (c *Checker[S]) advance(in *instance[S], act int, cons *constraint) (failed bool) {
	next := c.next[:0]
	var first *transInfo // the transition that fitted, if only one did
	matched := 0         // 0, 1, or 2 for "more than one transition"
	for _, s := range in.cands() {
		e := c.spec.successors(s, act)
		for j, t := range e.next {
			if !cons.matches(e.vals[j]) {
				continue
			}
			ti := c.spec.transition(e, j)
			if ti.bad != "" || c.args != nil && !c.fitsArgs(e, j) {
				continue
			}
			switch {
			case matched == 0:
				first, matched = ti, 1
			case matched == 1 && first != ti:
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
	c.next = next[:0]
	if len(next) == 0 {
		return true
	}
	if matched == 1 {
		if first.id >= len(c.taken) {
			c.taken = append(c.taken, make([]int, first.id+1-len(c.taken))...)
		}
		c.taken[first.id]++
	} else {
		c.ambiguous++
	}
	in.setCands(next)
	return false
}

// fitsArgs reports whether the event's arguments are those of a step
// from e's state to its j-th successor. It is out of advance's loop, which
// events without arguments run.
func (c *Checker[S]) fitsArgs(e *succEntry[S], j int) bool {
	return fitsArgs(c.spec.argsOf(e, j), c.args)
}

// addCandidate appends t to next unless it is there: a linear scan for
// the usual few candidates, a set once there are many, so that wide
// nondeterminism with partial states stays linear.
func (c *Checker[S]) addCandidate(next []S, t S) []S {
	if len(next) < 32 {
		if slices.Contains(next, t) {
			return next
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
	comp := in.comp()
	fits := func(s S) bool {
		vals := c.spec.valuation(s)
		for _, i := range c.cons.idx {
			want := vals[i]
			if comp != nil && comp.cons.set[i] {
				want = comp.cons.vals[i]
			}
			if !want.Equal(c.cons.vals[i]) {
				return false
			}
		}
		return true
	}
	keep := c.next[:0]
	for _, s := range in.cands() {
		if fits(s) {
			keep = append(keep, s)
		}
	}
	c.next = keep[:0]
	switch {
	case len(keep) == 0: // keep the candidates for the report
		c.violate(in, r, KindStutter, fmt.Sprintf("stutter event %s changes spec variables", clipValue(strconv.Quote(string(r.Action)))))
	case len(keep) < len(in.cands()):
		in.setCands(keep)
	}
}

func (c *Checker[S]) part(in *instance[S], r *trace.Raw, act int) {
	name := c.spec.Actions[act].Name
	comp := in.comp()
	switch string(r.Part) {
	case trace.PartBegin:
		if comp != nil {
			c.violate(in, r, KindComposite, fmt.Sprintf("composite %s begins inside the open composite %s (begun at line %d)", name, comp.name, comp.pos.Line))
			return
		}
		if !slices.ContainsFunc(in.cands(), func(s S) bool { return c.spec.successors(s, act).guard == "" }) ||
			c.args != nil && !c.takes(in.cands(), act, c.args) {
			c.violateStep(in, r, act, &c.cons) // not enabled (with those arguments)
			return
		}
		in.extra().comp = &composite{act: act, name: name, pos: r.Pos, cons: c.cons.clone(), args: c.args, argsLine: r.Pos.Line}
	default:
		if comp == nil {
			c.violate(in, r, KindComposite, fmt.Sprintf("part %q of %s without a begin", r.Part, name))
			return
		}
		if comp.act != act {
			c.violate(in, r, KindComposite, fmt.Sprintf("part of %s inside the open composite %s (begun at line %d)", name, comp.name, comp.pos.Line))
			return
		}
		if c.args != nil {
			if comp.args != nil && !sameArgs(comp.args, c.args) {
				c.violate(in, r, KindComposite, fmt.Sprintf("part of %s inside the open composite %s (arguments given at line %d)", label(name, c.args), label(name, comp.args), comp.argsLine))
				return
			}
			if comp.args == nil {
				comp.args, comp.argsLine = c.args, r.Pos.Line
			}
		}
		for _, i := range c.cons.idx {
			comp.cons.put(i, c.cons.vals[i])
		}
		if string(r.Part) == trace.PartEnd {
			in.x.comp = nil
			c.args = comp.args // the step's, whichever part gave them
			if c.advance(in, act, &comp.cons) {
				c.violateStep(in, r, act, &comp.cons)
			}
		}
	}
}

// Truncated records that the stream's last line (at pos, partial text
// line) has no newline: the writer stopped before the line's end, so the
// line is not checked, even if it holds a whole event, and its instance,
// or every instance if the partial line does not say which, is
// incomplete.
func (c *Checker[S]) Truncated(pos trace.Pos, line []byte) {
	c.truncated = &Truncation{File: pos.File, Line: pos.Line, Doc: c.doc}
	if c.doc == 0 {
		_, err := trace.ParseEvent(line, pos)
		c.truncated.Whole = err == nil
	}
	name, ok := trace.PeekInstance(line)
	if !ok {
		for _, in := range c.order {
			in.flags |= fTrunc
		}
		return
	}
	c.truncated.Instance = name
	in, h, slot := c.insts.find([]byte(name))
	if in == nil {
		in = c.newInstance(name, pos)
		c.insts.insert(h, slot, in)
		in.lastLine = pos.Line
	}
	in.flags |= fTrunc
}

// Close ends the stream and returns the report: each instance's verdict
// is final. With Options.OnResult, the instances not yet reported are
// reported now, in order of first appearance. Close may be called more
// than once.
func (c *Checker[S]) Close() *Report {
	c.mu.Lock() // against a concurrent Emit
	defer c.mu.Unlock()
	if c.closed != nil {
		return c.closed
	}
	rep := &Report{File: c.name, Model: c.spec.Name, Events: c.events, Ambiguous: c.ambiguous}
	if c.truncated != nil {
		t := *c.truncated
		rep.Truncated = &t
	}
	for _, in := range c.order {
		if in.flags&(fForgotten|fReported) != 0 {
			continue
		}
		if c.opt.OnResult == nil {
			rep.Instances = append(rep.Instances, c.result(in))
		} else if !c.aborted {
			c.report(c.result(in))
		}
	}
	if c.opt.OnResult != nil { // reported: the memory can go
		c.insts, c.order, c.finishing = newInstTable[S](), nil, nil
	}
	rep.Forgotten = c.forgotten
	rep.Streamed = c.streamed
	for k, ti := range c.spec.trans.all() {
		if ti.id < len(c.taken) && c.taken[ti.id] > 0 {
			rep.Exercised = append(rep.Exercised, Transition{From: c.spec.Format(k.from),
				Action: c.spec.Actions[k.act].Name, To: c.spec.Format(k.to), Count: c.taken[ti.id]})
		}
	}
	sort.Slice(rep.Exercised, func(i, j int) bool { return rep.Exercised[i].less(rep.Exercised[j]) })
	c.closed = rep
	return rep
}

// result is in's result as it stands: final at the end of the stream.
func (c *Checker[S]) result(in *instance[S]) InstanceResult {
	res := InstanceResult{Instance: in.name, Verdict: in.verdict, Events: in.events,
		FirstLine: in.firstLine, LastLine: in.lastLine}
	if in.verdict == Violation {
		if in.x != nil && in.x.div != nil {
			res.Reason, res.Divergence = in.x.div.Reason, in.x.div
		}
		return res
	}
	res.Verdict, res.Reason = c.final(in)
	cands := in.cands()
	if len(cands) == 1 { // the usual case: no allocation
		e := c.spec.end(cands[0])
		res.Final, res.FinalValues = e.final, e.vals
		return res
	}
	for _, s := range cands {
		e := c.spec.end(s)
		res.Final = append(res.Final, e.format)
		res.FinalValues = append(res.FinalValues, e.vals[0])
	}
	return res
}

// report passes res to Options.OnResult and counts it.
func (c *Checker[S]) report(res InstanceResult) {
	c.streamed.add(res.Verdict)
	c.opt.OnResult(res)
}

func (c *Checker[S]) final(in *instance[S]) (Verdict, string) {
	switch {
	case in.is(fTrunc):
		return Incomplete, c.truncated.reason()
	case in.comp() != nil:
		comp := in.comp()
		return Incomplete, fmt.Sprintf("the trace ends inside the composite step %s begun at line %d", comp.name, comp.pos.Line)
	case len(in.cands()) == 0:
		return Incomplete, "no event checked"
	}
	for _, s := range in.cands() {
		if e := c.spec.end(s); !e.stop {
			return Incomplete, e.why
		}
	}
	if u := in.uncertain(); u != "" {
		return Incomplete, u
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
		return &InputError{Pos: trace.Pos{File: c.name, Line: c.emitted}, Err: err}
	}
	return c.Feed(r)
}

var _ trace.Sink = (*Checker[int])(nil)

func (c *Checker[S]) stepInfo(in *instance[S], r *trace.Raw) Step {
	st := Step{Pos: r.Pos, Instance: in.name, Seq: r.Seq, Action: string(r.Action),
		Args: argStrings(c.args), Part: string(r.Part), Stutter: r.Stutter}
	for _, s := range in.cands() {
		st.States = append(st.States, c.spec.Format(s))
		st.Enabled = append(st.Enabled, c.spec.Enabled(s))
	}
	return st
}
