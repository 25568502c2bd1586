package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The Informal Trace Format (ITF) of Apalache and Quint, ADR-015
// (https://apalache-mc.org/docs/adr/015adr-trace.html). docs/itf.md says how
// an ITF document maps to trace events and back.

// ITF variables that Quint's model-based testing mode (quint run --mbt) adds
// to every state: the action that produced the state, and the values its
// nondeterministic choices picked. They are not spec variables.
const (
	ITFActionTaken = "mbt::actionTaken"
	ITFNondetPicks = "mbt::nondetPicks"
)

// ITFFormatDescription is the ADR that defines the format; written into the
// "#meta" of every document [WriteITF] writes.
const ITFFormatDescription = "https://apalache-mc.org/docs/adr/015adr-trace.html"

// maxSafeInt is the largest integer ADR-015 writes as a plain JSON number
// (2^53 - 1, the largest integer a JavaScript reader holds exactly).
const maxSafeInt = 1<<53 - 1

// Errors an ITF document can produce. Every error ReadITF and ParseITF
// return wraps one of them.
var (
	// ErrITF: the document is not a well-formed ITF trace (not a JSON
	// object, no "states", a state that is not an object, ...).
	ErrITF = errors.New("malformed ITF document")
	// ErrITFValue: a value is not one of ADR-015's encodings (a fraction, a
	// null, an unknown "#" key, a malformed "#bigint" or "#map").
	ErrITFValue = errors.New("malformed ITF value")
	// ErrITFNoAction: a state after the first carries no
	// "mbt::actionTaken", so the action of its step is unknown. Quint writes
	// it with `quint run --mbt`; Apalache does not write it.
	ErrITFNoAction = errors.New("ITF state without mbt::actionTaken")
	// ErrITFInstances: the events given to EventsToITF belong to more than
	// one instance; an ITF document holds one behaviour.
	ErrITFInstances = errors.New("events of several instances in one ITF document")
	// ErrTooLarge: an input that is read whole into memory (an ITF
	// document) is larger than the reader's bound (DefaultMaxITF unless
	// told otherwise).
	ErrTooLarge = errors.New("input too large")
)

// DefaultMaxITF is the largest ITF document, in bytes, that [ParseITF],
// [ReadITF] and [AsNDJSON] read: 256 MiB. A document is read whole and
// decoded into memory (several times its size), so its size is bounded
// like an NDJSON line's; [ParseITFSize] and [AsNDJSONSize] take another
// bound.
const DefaultMaxITF = 256 << 20

// tooLarge is the error for an input past the bound max.
func tooLarge(what string, max int64) error {
	return fmt.Errorf("%w: %s is larger than the bound of %d bytes", ErrTooLarge, what, max)
}

// MaxReader returns a reader that reads r but fails, with an error
// wrapping [ErrTooLarge] that names what and max, as soon as r turns out
// to hold more than max bytes: it reads no further than that.
func MaxReader(r io.Reader, max int64, what string) io.Reader {
	return &capReader{r: r, limit: max, what: what, max: max}
}

// capReader reads r up to the absolute offset limit; past it, if r has
// more, it fails with ErrTooLarge. The byte it reads to tell is kept for
// a later Read, should the limit be raised.
type capReader struct {
	r       io.Reader
	n       int64 // bytes returned so far
	limit   int64
	what    string
	max     int64
	probe   [1]byte
	pending bool // probe holds a byte read ahead
}

func (c *capReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if c.n >= c.limit {
		if !c.pending {
			n, err := io.ReadFull(c.r, c.probe[:])
			if n == 0 {
				if err == io.ErrUnexpectedEOF {
					err = io.EOF
				}
				return 0, err
			}
			c.pending = true
		}
		return 0, tooLarge(c.what, c.max)
	}
	if c.pending {
		c.pending = false
		p[0] = c.probe[0]
		c.n++
		return 1, nil
	}
	if room := c.limit - c.n; int64(len(p)) > room {
		p = p[:room]
	}
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// ITF is one ITF document: a finite behaviour of one instance.
type ITF struct {
	// Meta is the document's "#meta": free-form; tracecheck writes
	// "format", "format-description", "source" and "instance".
	Meta map[string]any `json:"#meta,omitempty"`
	// Params names the spec's parameters (constants), if any.
	Params []string `json:"params,omitempty"`
	// Vars names the variables every state gives a value to.
	Vars []string `json:"vars"`
	// States are the behaviour's states, each a map from variable name to
	// ITF value, with the state's own "#meta" under that key.
	States []map[string]any `json:"states"`
	// Loop, if set, is the index of the state a lasso loops back to. It is
	// read but not used: tracecheck checks finite traces.
	Loop *int `json:"loop,omitempty"`
}

// IsITF reports whether the input buffered in br starts with an ITF
// document rather than an NDJSON trace: its first JSON object has one of
// ITF's top-level keys ("states", "vars", "#meta", "params", "loop") before
// any key of a trace event. It only peeks, so br still holds the whole
// input afterwards, and it reads no further than it must to decide: on a
// live pipe, the first key of the first line is enough.
func IsITF(br *bufio.Reader) bool {
	n := 1
	for {
		peek, err := br.Peek(n)
		if itf, decided := sniffITF(peek); decided {
			return itf
		}
		if err != nil || n >= br.Size() {
			return false
		}
		n = max(n+1, br.Buffered())
	}
}

// sniffITF looks at the first top-level keys of the object that starts
// data; decided is false if data ends before they tell.
func sniffITF(data []byte) (itf, decided bool) {
	dec := json.NewDecoder(bytes.NewReader(data))
	more := func(err error) (bool, bool) {
		var syn *json.SyntaxError
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || (errors.As(err, &syn) && syn.Offset >= int64(len(data))) {
			return false, false // the object goes on beyond data
		}
		return false, true // not JSON: not ITF
	}
	tok, err := dec.Token()
	if err != nil {
		return more(err)
	}
	if tok != json.Delim('{') {
		return false, true
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return more(err)
		}
		switch tok {
		case "states", "vars", "#meta", "params", "loop":
			return true, true
		case "v", "instance", "seq", "action", "args", "state", "part", "stutter", "time", "detail":
			return false, true
		case json.Delim('}'):
			return false, true
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return more(err)
		}
	}
}

// ParseITF reads one ITF document from r and checks its shape and every
// value's encoding. Numbers are kept exactly (as [json.Number]). A
// document larger than [DefaultMaxITF] is an error wrapping [ErrTooLarge].
func ParseITF(r io.Reader) (*ITF, error) { return ParseITFSize(r, DefaultMaxITF) }

// ParseITFSize is [ParseITF] with a bound on the document's size in bytes
// (max <= 0 means [DefaultMaxITF]).
func ParseITFSize(r io.Reader, max int64) (*ITF, error) {
	if max <= 0 {
		max = DefaultMaxITF
	}
	data, err := io.ReadAll(MaxReader(r, max, "the ITF document"))
	if err != nil {
		return nil, fmt.Errorf("trace: read ITF: %w", err)
	}
	return parseITF(data)
}

func parseITF(data []byte) (*ITF, error) {
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrITF, err)
	}
	if raw == nil {
		return nil, fmt.Errorf("%w: not a JSON object", ErrITF)
	}
	if _, ok := raw["states"]; !ok {
		return nil, fmt.Errorf("%w: no \"states\"", ErrITF)
	}
	var doc ITF
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(&doc); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrITF, err)
	}
	if doc.Loop != nil && (*doc.Loop < 0 || *doc.Loop >= len(doc.States)) {
		return nil, fmt.Errorf("%w: loop index %d out of range", ErrITF, *doc.Loop)
	}
	for i, st := range doc.States {
		if st == nil {
			return nil, fmt.Errorf("%w: state %d is not an object", ErrITF, i)
		}
		for k, v := range st {
			if k == "#meta" {
				if _, ok := v.(map[string]any); !ok {
					return nil, fmt.Errorf("%w: state %d: \"#meta\" is not an object", ErrITF, i)
				}
				continue
			}
			if err := CheckITFValue(v); err != nil {
				return nil, fmt.Errorf("state %d, variable %q: %w", i, k, err)
			}
		}
	}
	return &doc, nil
}

// CheckITFValue reports whether v, as decoded from JSON with numbers as
// [json.Number] (or int, int64, uint64), is an ITF value: a boolean, a
// string, an integer, an array (a sequence), {"#bigint": "-?[0-9]+"},
// {"#tup": [...]}, {"#set": [...]}, {"#map": [[k, v], ...]},
// {"#unserializable": "..."}, or an object whose keys do not start with
// "#" (a record). A failure wraps [ErrITFValue].
func CheckITFValue(v any) error {
	switch v := v.(type) {
	case bool, string, int, int64, uint64:
		return nil
	case json.Number:
		if _, ok := new(big.Int).SetString(v.String(), 10); !ok {
			return fmt.Errorf("%w: %s is not an integer", ErrITFValue, v)
		}
		return nil
	case float64:
		if v != float64(int64(v)) {
			return fmt.Errorf("%w: %v is not an integer", ErrITFValue, v)
		}
		return nil
	case []any:
		for i, e := range v {
			if err := CheckITFValue(e); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
		return nil
	case map[string]any:
		return checkITFObject(v)
	case nil:
		return fmt.Errorf("%w: null", ErrITFValue)
	}
	return fmt.Errorf("%w: unexpected %T", ErrITFValue, v)
}

func checkITFObject(m map[string]any) error {
	for k := range m {
		if !strings.HasPrefix(k, "#") {
			continue
		}
		if len(m) != 1 {
			return fmt.Errorf("%w: %q beside other keys", ErrITFValue, k)
		}
		body := m[k]
		switch k {
		case "#bigint":
			s, ok := body.(string)
			if !ok {
				return fmt.Errorf("%w: #bigint of %T, want a string", ErrITFValue, body)
			}
			if _, ok := ParseBigint(s); !ok {
				return fmt.Errorf("%w: #bigint %q", ErrITFValue, s)
			}
			return nil
		case "#tup", "#set":
			elems, ok := body.([]any)
			if !ok {
				return fmt.Errorf("%w: %s of %T, want an array", ErrITFValue, k, body)
			}
			return CheckITFValue(elems)
		case "#map":
			pairs, ok := body.([]any)
			if !ok {
				return fmt.Errorf("%w: #map of %T, want an array of pairs", ErrITFValue, body)
			}
			for i, p := range pairs {
				kv, ok := p.([]any)
				if !ok || len(kv) != 2 {
					return fmt.Errorf("%w: #map entry %d is not a [key, value] pair", ErrITFValue, i)
				}
				if err := CheckITFValue(kv); err != nil {
					return fmt.Errorf("#map entry %d: %w", i, err)
				}
			}
			return nil
		case "#unserializable":
			if _, ok := body.(string); !ok {
				return fmt.Errorf("%w: #unserializable of %T, want a string", ErrITFValue, body)
			}
			return nil
		}
		return fmt.Errorf("%w: unknown key %q", ErrITFValue, k)
	}
	for k, e := range m {
		if err := CheckITFValue(e); err != nil {
			return fmt.Errorf("field %q: %w", k, err)
		}
	}
	return nil
}

// ParseBigint parses the digits of an ITF "#bigint" ("-?[0-9]+", no sign
// "+", no spaces). The integer may be of any size.
func ParseBigint(s string) (*big.Int, bool) {
	t := strings.TrimPrefix(s, "-")
	if t == "" {
		return nil, false
	}
	for _, c := range t {
		if c < '0' || c > '9' {
			return nil, false
		}
	}
	return new(big.Int).SetString(s, 10)
}

// ReadITF reads one ITF document from r and returns its states as trace
// events, one an ITF state, in order. The events' instance is the
// document's "#meta"."instance" if it has one (tracecheck writes it), else
// instance; it is an error if both are empty.
//
// The first state becomes the Init event, unless its "#meta" marks it a
// stutter event: then, as for every later state, the action is its
// "mbt::actionTaken"; a later state without one is an error wrapping
// [ErrITFNoAction]. "mbt::nondetPicks" goes to the event's Detail under the
// same key. A state's "#meta" supplies seq (else its position), part,
// stutter, time, detail and args when tracecheck wrote them. Values are kept in
// their ITF encodings, which are those of the trace format; see
// docs/itf.md.
func ReadITF(r io.Reader, instance string) ([]Event, error) {
	doc, err := ParseITF(r)
	if err != nil {
		return nil, err
	}
	return doc.Events(instance)
}

// Events converts the document's states to trace events, as [ReadITF]
// describes.
func (doc *ITF) Events(instance string) ([]Event, error) {
	if s, ok := doc.Meta["instance"].(string); ok && s != "" {
		instance = s
	}
	if instance == "" {
		return nil, fmt.Errorf("%w: no instance: the document's #meta has none and none was given", ErrITF)
	}
	events := make([]Event, 0, len(doc.States))
	for i, st := range doc.States {
		e := Event{V: Version, Instance: instance, Seq: uint64(i), State: map[string]any{}}
		meta, _ := st["#meta"].(map[string]any)
		if err := applyStateMeta(&e, meta); err != nil {
			return nil, fmt.Errorf("%w: state %d: %w", ErrITF, i, err)
		}
		for k, v := range st {
			switch k {
			case "#meta", ITFActionTaken:
			case ITFNondetPicks:
				if e.Detail == nil {
					e.Detail = map[string]any{}
				}
				e.Detail[ITFNondetPicks] = v
			default:
				e.State[k] = v
			}
		}
		action, hasAction := st[ITFActionTaken]
		name, isString := action.(string)
		if hasAction && !isString {
			return nil, fmt.Errorf("%w: state %d: %s is %T, want a string", ErrITF, i, ITFActionTaken, action)
		}
		switch {
		case i == 0 && e.Stutter && hasAction:
			// A stutter event's action is free text, not a step: a
			// behaviour that starts with one (a trace whose first event is
			// a stutter, exported) reads back as it was written.
			e.Action = name
		case i == 0:
			e.Action = InitAction
			if hasAction && name != InitAction {
				// Quint names the initial step after its init action
				// ("init"); keep the name for the way back.
				if e.Detail == nil {
					e.Detail = map[string]any{}
				}
				e.Detail[ITFActionTaken] = name
			}
		case !hasAction:
			return nil, fmt.Errorf("state %d: %w (the action of each step is needed; Quint writes it with `quint run --mbt`)", i, ErrITFNoAction)
		default:
			e.Action = name
		}
		if i > 0 && e.Seq <= events[i-1].Seq {
			return nil, fmt.Errorf("%w: state %d: seq %d does not increase (previous %d)", ErrITF, i, e.Seq, events[i-1].Seq)
		}
		events = append(events, e)
	}
	return events, nil
}

// applyStateMeta copies the event fields tracecheck keeps in a state's
// "#meta" into e.
func applyStateMeta(e *Event, meta map[string]any) error {
	if meta == nil {
		return nil
	}
	if v, ok := meta["seq"]; ok {
		n, err := metaUint(v)
		if err != nil {
			return fmt.Errorf("#meta seq: %w", err)
		}
		e.Seq = n
	}
	if v, ok := meta["part"]; ok {
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("#meta part is %T, want a string", v)
		}
		e.Part = s
	}
	if v, ok := meta["stutter"]; ok {
		b, ok := v.(bool)
		if !ok {
			return fmt.Errorf("#meta stutter is %T, want a boolean", v)
		}
		e.Stutter = b
	}
	if v, ok := meta["time"]; ok {
		s, ok := v.(string)
		if !ok {
			return fmt.Errorf("#meta time is %T, want an RFC 3339 string", v)
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return fmt.Errorf("#meta time: %w", err)
		}
		e.Time = t
	}
	if v, ok := meta["detail"]; ok {
		d, ok := v.(map[string]any)
		if !ok {
			return fmt.Errorf("#meta detail is %T, want an object", v)
		}
		e.Detail = d
	}
	if v, ok := meta["args"]; ok {
		a, ok := v.([]any)
		if !ok {
			return fmt.Errorf("#meta args is %T, want an array", v)
		}
		for i, x := range a {
			if err := CheckITFValue(x); err != nil {
				return fmt.Errorf("#meta args[%d]: %w", i, err)
			}
		}
		if len(a) > 0 {
			e.Args = a
		}
	}
	return nil
}

func metaUint(v any) (uint64, error) {
	switch v := v.(type) {
	case json.Number:
		return strconv.ParseUint(v.String(), 10, 64)
	case float64:
		if v < 0 || v != float64(uint64(v)) {
			return 0, fmt.Errorf("%v is not a natural number", v)
		}
		return uint64(v), nil
	case int:
		if v < 0 {
			return 0, fmt.Errorf("%d is negative", v)
		}
		return uint64(v), nil
	case uint64:
		return v, nil
	}
	return 0, fmt.Errorf("%T is not a number", v)
}

// EventsToITF returns the ITF document of events, which must all belong to
// one instance (else the error wraps [ErrITFInstances]).
//
// "vars" lists the variables the events carry, in the order they first
// appear (each event's in sorted order), then "mbt::actionTaken", and
// "mbt::nondetPicks" if an event's Detail has it. Every state carries
// "mbt::actionTaken", and the variables its event carries — an event with a
// partial state gives a partial ITF state, which strict ITF readers refuse;
// tracecheck reads it back as the same partial state. The event's seq,
// part, stutter, time, detail and args go to the state's "#meta". Values are
// copied as they are, except that plain integers beyond ±(2^53-1) are
// written as {"#bigint": "..."}, as ADR-015 asks.
func EventsToITF(events []Event) (*ITF, error) {
	doc := &ITF{Vars: []string{}, States: make([]map[string]any, 0, len(events))}
	seen := map[string]bool{}
	picks := false
	for i, e := range events {
		if e.Instance != events[0].Instance {
			return nil, fmt.Errorf("%w: %q and %q", ErrITFInstances, events[0].Instance, e.Instance)
		}
		keys := slices.Sorted(mapKeys(e.State))
		st := make(map[string]any, len(keys)+2)
		for _, k := range keys {
			if k == "#meta" || k == ITFActionTaken || k == ITFNondetPicks {
				return nil, fmt.Errorf("%w: event %d: variable %q is reserved by ITF", ErrITF, i, k)
			}
			if !seen[k] {
				seen[k] = true
				doc.Vars = append(doc.Vars, k)
			}
			st[k] = toITFValue(e.State[k])
		}
		meta := map[string]any{"index": i, "seq": e.Seq}
		if e.Part != "" {
			meta["part"] = e.Part
		}
		if e.Stutter {
			meta["stutter"] = true
		}
		if !e.Time.IsZero() {
			meta["time"] = e.Time.Format(time.RFC3339Nano)
		}
		if len(e.Args) > 0 {
			meta["args"] = toITFValue(e.Args)
		}
		action := e.Action
		var detail map[string]any
		for k, v := range e.Detail {
			switch {
			case k == ITFNondetPicks:
				st[ITFNondetPicks] = v
				picks = true
			case k == ITFActionTaken && i == 0:
				if s, ok := v.(string); ok {
					action = s
					continue
				}
				fallthrough
			default:
				if detail == nil {
					detail = map[string]any{}
				}
				detail[k] = v
			}
		}
		if detail != nil {
			meta["detail"] = detail
		}
		st["#meta"] = meta
		st[ITFActionTaken] = action
		doc.States = append(doc.States, st)
	}
	doc.Vars = append(doc.Vars, ITFActionTaken)
	if picks {
		doc.Vars = append(doc.Vars, ITFNondetPicks)
	}
	doc.Meta = map[string]any{
		"format":             "ITF",
		"format-description": ITFFormatDescription,
		"source":             "tracecheck",
	}
	if len(events) > 0 {
		doc.Meta["instance"] = events[0].Instance
	}
	return doc, nil
}

func mapKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// toITFValue copies v, writing plain integers beyond ADR-015's safe range
// as #bigint.
func toITFValue(v any) any {
	switch v := v.(type) {
	case json.Number:
		if n, err := v.Int64(); err == nil && n >= -maxSafeInt && n <= maxSafeInt {
			return v
		}
		if b, ok := new(big.Int).SetString(v.String(), 10); ok {
			return map[string]any{"#bigint": b.String()}
		}
		return v
	case int:
		return toITFValue(json.Number(strconv.Itoa(v)))
	case int64:
		return toITFValue(json.Number(strconv.FormatInt(v, 10)))
	case uint64:
		return toITFValue(json.Number(strconv.FormatUint(v, 10)))
	case float64:
		if v == float64(int64(v)) && (v > maxSafeInt || v < -maxSafeInt) {
			return map[string]any{"#bigint": strconv.FormatInt(int64(v), 10)}
		}
		return v
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = toITFValue(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(v))
		for k, e := range v {
			out[k] = toITFValue(e)
		}
		return out
	}
	return v
}

// WriteITF writes events, which must belong to one instance, to w as one
// ITF document (indented JSON, ended by a newline). See [EventsToITF].
func WriteITF(w io.Writer, events []Event) error {
	doc, err := EventsToITF(events)
	if err != nil {
		return err
	}
	return doc.Write(w)
}

// Write writes the document to w as indented JSON ended by a newline. Each
// state's keys are in sorted order, so "#meta" comes first.
func (doc *ITF) Write(w io.Writer) error {
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return fmt.Errorf("trace: encode ITF: %w", err)
	}
	if _, err := w.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("trace: write ITF: %w", err)
	}
	return nil
}

// SplitInstances groups events by instance, keeping each instance's events
// in order; the instances are in order of first appearance.
func SplitInstances(events []Event) (names []string, byInstance map[string][]Event) {
	byInstance = map[string][]Event{}
	for _, e := range events {
		if _, ok := byInstance[e.Instance]; !ok {
			names = append(names, e.Instance)
		}
		byInstance[e.Instance] = append(byInstance[e.Instance], e)
	}
	return names, byInstance
}

// ITFMetaTruncated is the document "#meta" key under which `tracecheck
// export --itf` records that the NDJSON trace it read ended on a partial
// line ("file:line"); [AsNDJSON] turns it back into a partial last line,
// so a checker still reports the instance as incomplete.
const ITFMetaTruncated = "truncated"

// ITFPos is where a state starts in an ITF input: what a report names
// instead of the NDJSON line [AsNDJSON] wrote for the state.
type ITFPos struct {
	// Doc is the document the state is in, counted from 1 in a stream of
	// documents.
	Doc int
	// Line is the line of the input, counted from 1 from where the reader
	// was when AsNDJSON got it, where the state's object starts (its "{").
	// It counts the lines of the whole input, not of the document.
	Line int
}

// ITFSource is the reader [AsNDJSON] returns for ITF input: NDJSON that
// also says where each of its lines comes from in the ITF, so that a
// checker can name the ITF's lines instead of the NDJSON's.
type ITFSource interface {
	io.Reader
	// ITFPos returns where the state written as the NDJSON's line n
	// (counted from 1) starts in the ITF input; for the partial line that
	// ends the NDJSON of a document recorded as truncated
	// ([ITFMetaTruncated]), where that document starts; and for the line
	// after the last written when the next document cannot be read, where
	// that document starts, if it got that far. ok is false for a line not
	// written yet or written long ago: the positions of the last
	// 16,384 lines written are kept, far more than a reader buffers ahead.
	ITFPos(n int) (pos ITFPos, ok bool)
	// Peek returns the next n bytes of the NDJSON without reading them, as
	// [bufio.Reader.Peek] does (fewer, with the error, at the end of the
	// input or on an error), so that a caller can look ahead without
	// hiding the ITFSource behind a buffer.
	Peek(n int) ([]byte, error)
}

// itfPosKept is how many lines' positions an itfStream keeps.
const itfPosKept = 1 << 14

// AsNDJSON returns the trace in r as NDJSON for a [Decoder]. If r starts
// with an ITF document ([IsITF]), r is read as a stream of one or more
// ITF documents one after another (as `tracecheck export --itf` writes
// several instances to standard output), and their states are returned as
// NDJSON events, one line a state, document after document; itf is then
// true, and out is an [ITFSource], which says where in r each line's
// state starts. A document that names no instance of its own gets
// instance, the k-th such document after the first instance + "#k".
// Otherwise r's bytes are returned as they are. A document recorded as
// truncated ([ITFMetaTruncated]) ends the NDJSON with a partial line of
// its instance, as the original NDJSON ended.
//
// Documents are read and converted one at a time, as the NDJSON is read:
// memory is bounded by the largest document, and each document by
// [DefaultMaxITF] (an error wrapping [ErrTooLarge]). The first document is
// read before AsNDJSON returns, so that an error in it is returned here;
// an error in a later one comes from the returned reader's Read.
func AsNDJSON(r io.Reader, instance string) (out io.Reader, itf bool, err error) {
	return AsNDJSONSize(r, instance, DefaultMaxITF)
}

// AsNDJSONSize is [AsNDJSON] with a bound on each ITF document's size in
// bytes (max <= 0 means [DefaultMaxITF]).
func AsNDJSONSize(r io.Reader, instance string, max int64) (out io.Reader, itf bool, err error) {
	if max <= 0 {
		max = DefaultMaxITF
	}
	br := bufio.NewReaderSize(r, 64<<10)
	if !IsITF(br) {
		return br, false, nil
	}
	s := &itfStream{br: br, max: max, instance: instance, line: 1}
	s.w = NewWriter(&s.buf)
	if err := s.next(); err != nil {
		return nil, true, err
	}
	return s, true, nil
}

// itfStream converts a stream of ITF documents to NDJSON as it is read.
// It splits the stream into documents itself, so that it knows the line
// where each starts: it skips the white space between them, counting its
// newlines, and gathers a document's bytes up to the brace that closes it
// (docScanner), for json.Unmarshal to read whole.
type itfStream struct {
	br       *bufio.Reader
	raw      []byte // the document being read
	line     int    // the line where br is
	max      int64
	instance string
	k        int      // documents read
	events   []Event  // the current document's events not yet written
	at       []ITFPos // where each of them starts in the input
	docAt    ITFPos   // where the current document starts
	w        *Writer
	buf      bytes.Buffer
	cut      []byte // the partial line that ends the NDJSON, if any
	cutAt    ITFPos // where the document that records the cut starts
	done     bool
	err      error
	failAt   ITFPos   // where the document that could not be read starts, if known
	lines    int      // NDJSON lines written
	pos      []ITFPos // where the last lines written start: line n at (n-1) % itfPosKept
}

var _ ITFSource = (*itfStream)(nil)

func (s *itfStream) Read(p []byte) (int, error) {
	for s.buf.Len() == 0 {
		if s.err != nil {
			return 0, s.err
		}
		s.fill()
	}
	return s.buf.Read(p)
}

// Peek implements [ITFSource].
func (s *itfStream) Peek(n int) ([]byte, error) {
	for s.buf.Len() < n && s.err == nil {
		s.fill()
	}
	if b := s.buf.Bytes(); len(b) < n {
		return b, s.err
	}
	return s.buf.Bytes()[:n], nil
}

// ITFPos implements [ITFSource].
func (s *itfStream) ITFPos(n int) (ITFPos, bool) {
	switch {
	case n == s.lines+1 && s.err != nil && s.err != io.EOF && s.failAt.Line > 0:
		return s.failAt, true
	case n < 1 || n > s.lines || n <= s.lines-len(s.pos):
		return ITFPos{}, false
	}
	return s.pos[(n-1)%itfPosKept], true
}

// wrote records that the next NDJSON line's state starts at p.
func (s *itfStream) wrote(p ITFPos) {
	if len(s.pos) < itfPosKept {
		s.pos = append(s.pos, p)
	} else {
		s.pos[s.lines%itfPosKept] = p
	}
	s.lines++
}

// fill writes the next event (or the final partial line) into s.buf, or
// sets s.err.
func (s *itfStream) fill() {
	switch {
	case len(s.events) > 0:
		if err := s.w.Emit(s.events[0]); err != nil {
			s.err = err
			return
		}
		s.wrote(s.at[0])
		s.events[0] = Event{}
		s.events, s.at = s.events[1:], s.at[1:]
	case !s.done:
		if err := s.next(); err != nil {
			s.err = err
		}
	case s.cut != nil:
		s.buf.Write(s.cut)
		s.wrote(s.cutAt)
		s.cut = nil
	default:
		s.err = io.EOF
	}
}

// next reads the next document into s.events, or sets s.done at the end.
// A document may take up to max bytes, and so may the white space before
// it.
func (s *itfStream) next() error {
	switch err := s.skipSpace(); {
	case err == io.EOF && s.k > 0:
		s.done = true
		return nil
	case err == io.EOF:
		return fmt.Errorf("%w: document 1: %w", ErrITF, io.ErrUnexpectedEOF)
	case err != nil:
		s.failAt = ITFPos{Doc: s.k + 1, Line: s.line} // where the reader stopped
		return fmt.Errorf("document %d: %w", s.k+1, err)
	}
	s.docAt = ITFPos{Doc: s.k + 1, Line: s.line}
	raw, err := s.document()
	if err != nil {
		s.failAt = s.docAt
		return fmt.Errorf("document %d: %w", s.k+1, err)
	}
	s.k++
	s.line += bytes.Count(raw, newline)
	doc, err := parseITF(raw)
	if err != nil {
		s.failAt = s.docAt
		return fmt.Errorf("document %d: %w", s.k, err)
	}
	name := s.instance
	if _, own := doc.Meta["instance"].(string); !own && s.k > 1 {
		name = fmt.Sprintf("%s#%d", s.instance, s.k-1)
	}
	events, err := doc.Events(name)
	if err != nil {
		s.failAt = s.docAt
		return fmt.Errorf("document %d: %w", s.k, err)
	}
	if _, ok := doc.Meta[ITFMetaTruncated]; ok && len(events) > 0 {
		inst, _ := json.Marshal(events[0].Instance)
		s.cut = fmt.Appendf(nil, `{"v":%d,"instance":%s`, Version, inst)
		s.cutAt = s.docAt
	}
	s.events = events
	s.at = s.at[:0]
	starts := stateStarts(raw)
	if len(starts) != len(events) { // cannot be: raw is the document just parsed
		starts = nil
	}
	line, from := s.docAt.Line, 0
	for i := range events {
		if starts != nil {
			line += bytes.Count(raw[from:starts[i]], newline)
			from = starts[i]
		}
		s.at = append(s.at, ITFPos{Doc: s.k, Line: line})
	}
	if cap(s.raw) > 1<<20 { // a large document's buffer is not kept for the next
		s.raw = nil
	}
	return nil
}

var newline = []byte{'\n'}

// chunk returns what br holds buffered, reading more if it holds nothing.
func (s *itfStream) chunk() ([]byte, error) {
	if s.br.Buffered() == 0 {
		if _, err := s.br.Peek(1); err != nil {
			return nil, err
		}
	}
	return s.br.Peek(s.br.Buffered())
}

// skipSpace skips the white space before the next document, counting
// its lines. It returns io.EOF if the input ends first.
func (s *itfStream) skipSpace() error {
	var skipped int64
	for {
		b, err := s.chunk()
		if err != nil {
			return err
		}
		n := len(b) - len(bytes.TrimLeft(b, " \t\r\n"))
		s.line += bytes.Count(b[:n], newline)
		s.br.Discard(n)
		if skipped += int64(n); skipped > s.max {
			return tooLarge("an ITF document", s.max)
		}
		if n < len(b) {
			return nil
		}
	}
}

// document reads the document that starts where br is: the bytes up to
// the brace that closes its first, up to max of them.
func (s *itfStream) document() ([]byte, error) {
	s.raw = s.raw[:0]
	var sc docScanner
	for {
		b, err := s.chunk()
		if err == io.EOF {
			return nil, fmt.Errorf("%w: %w", ErrITF, io.ErrUnexpectedEOF)
		}
		if err != nil {
			return nil, err
		}
		if len(s.raw) == 0 && b[0] != '{' {
			return nil, fmt.Errorf("%w: want a JSON object, not %q", ErrITF, b[0])
		}
		n, end := sc.scan(b)
		if int64(len(s.raw)+n) > s.max {
			return nil, tooLarge("an ITF document", s.max)
		}
		s.raw = append(s.raw, b[:n]...)
		s.br.Discard(n)
		if end {
			return s.raw, nil
		}
	}
}

// docScanner finds where a JSON value ends, fed its bytes a chunk at a
// time: it follows strings (and their escapes) and the nesting of objects
// and arrays. Anything else it leaves to the JSON parser.
type docScanner struct {
	depth    int
	str, esc bool
}

// scan reads b, the value's next bytes, and returns how many of them are
// the value's, and whether the value ends there.
func (sc *docScanner) scan(b []byte) (n int, end bool) {
	for i, c := range b {
		switch {
		case sc.esc:
			sc.esc = false
		case sc.str:
			switch c {
			case '\\':
				sc.esc = true
			case '"':
				sc.str = false
			}
		case c == '"':
			sc.str = true
		case c == '{' || c == '[':
			sc.depth++
		case c == '}' || c == ']':
			if sc.depth--; sc.depth == 0 {
				return i + 1, true
			}
		}
	}
	return len(b), false
}

// stateStarts returns the offset in doc, a well-formed JSON object, of
// each element of its "states" array: of the last member whose name is
// "states" in any case, as encoding/json decodes an ITF.
func stateStarts(doc []byte) []int {
	var starts []int
	i := skipSpace(doc, 0)
	if i >= len(doc) || doc[i] != '{' {
		return nil
	}
	for i++; ; {
		i = skipSpace(doc, i)
		if i >= len(doc) || doc[i] == '}' {
			return starts
		}
		if doc[i] == ',' {
			i++
			continue
		}
		end := skipValue(doc, i)
		var name string
		if json.Unmarshal(doc[i:end], &name) != nil {
			return nil
		}
		i = skipSpace(doc, end)
		if i >= len(doc) || doc[i] != ':' {
			return nil
		}
		i = skipSpace(doc, i+1)
		if !strings.EqualFold(name, "states") || i >= len(doc) || doc[i] != '[' {
			i = skipValue(doc, i)
			continue
		}
		starts = starts[:0:0]
		for i++; ; {
			i = skipSpace(doc, i)
			if i >= len(doc) {
				return nil
			}
			if doc[i] == ']' {
				i++
				break
			}
			if doc[i] == ',' {
				i++
				continue
			}
			starts = append(starts, i)
			i = skipValue(doc, i)
		}
	}
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\r' || b[i] == '\n') {
		i++
	}
	return i
}

// skipValue returns the offset just after the JSON value that starts at
// b[i], in well-formed JSON.
func skipValue(b []byte, i int) int {
	depth := 0
	for i < len(b) {
		switch b[i] {
		case '"':
			i++
			for i < len(b) && b[i] != '"' {
				if b[i] == '\\' {
					i++
				}
				i++
			}
			i++ // the closing quote
			if depth == 0 {
				return i
			}
			continue
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 { // the end of a number or literal
				return i
			}
			depth--
			if depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\r', '\n', ':':
			if depth == 0 { // the end of a number or literal
				return i
			}
		}
		i++
	}
	return i
}
