package model

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// Kind is the sort of a [Value].
type Kind uint8

// The kinds of value a spec variable can hold. They cover what TLC prints and
// what the Informal Trace Format carries.
const (
	KindInvalid Kind = iota // the zero Value
	KindBool                // TRUE, FALSE
	KindInt                 // a 64-bit integer
	KindString              // "text"
	KindSeq                 // <<a, b>>: sequences and tuples (functions on 1..n)
	KindSet                 // {a, b}: kept in TLC's order and without duplicates
	KindRecord              // [f |-> a]: functions on strings, kept sorted by field name
	KindFunc                // (k :> v @@ ...): every other function, kept in TLC's order of keys
)

var kindNames = [...]string{"invalid", "bool", "int", "string", "seq", "set", "record", "func"}

// String returns the kind's name.
func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Value is an immutable spec value. Construct one with [Bool], [Int], [Str],
// [Seq], [Set], [Record] or [Func]; compare with [Value.Equal] or
// [Compare]. Its String form is TLA+ syntax, the text TLC prints
// (see [Value.String]).
type Value struct {
	kind  Kind
	b     bool
	i     int64
	s     string
	elems []Value // Seq, Set elements; Record and Func values
	keys  []Value // Record field names (as strings) and Func keys
}

// Bool returns a boolean value.
func Bool(b bool) Value { return Value{kind: KindBool, b: b} }

// Int returns an integer value.
func Int(i int64) Value { return Value{kind: KindInt, i: i} }

// Str returns a string value.
func Str(s string) Value { return Value{kind: KindString, s: s} }

// Seq returns a sequence (or tuple) of the given elements.
func Seq(elems ...Value) Value { return Value{kind: KindSeq, elems: slices.Clone(elems)} }

// Set returns the set of the given elements, in TLC's order (see [Compare])
// and without duplicates.
func Set(elems ...Value) Value {
	e := slices.Clone(elems)
	slices.SortFunc(e, Compare)
	e = slices.CompactFunc(e, Value.Equal)
	return Value{kind: KindSet, elems: e}
}

// Field is one field of a record, or one key/value pair of a function.
type Field struct {
	Name  string
	Value Value
}

// Record returns the record with the given fields. A field named twice keeps
// its last value.
func Record(fields ...Field) Value {
	pairs := make([]pair, len(fields))
	for i, f := range fields {
		pairs[i] = pair{Str(f.Name), f.Value}
	}
	v := fromPairs(pairs)
	v.kind = KindRecord
	return v
}

// Func returns the function mapping keys[i] to vals[i]; a key given twice
// keeps its last value. It returns an error if the slices differ in length.
//
// In TLA+ a sequence is a function on 1..n and a record a function on
// strings, and TLC prints such functions as sequences and records. So does
// Func: a function whose domain is 1..n, or empty, is the sequence
// (KindSeq), and one whose domain holds only strings is the record
// (KindRecord), equal to the value [Seq] or [Record] builds.
func Func(keys, vals []Value) (Value, error) {
	if len(keys) != len(vals) {
		return Value{}, fmt.Errorf("model: function with %d keys and %d values", len(keys), len(vals))
	}
	pairs := make([]pair, len(keys))
	for i := range keys {
		pairs[i] = pair{keys[i], vals[i]}
	}
	v := fromPairs(pairs)
	switch {
	case isSeqDomain(v.keys):
		return Value{kind: KindSeq, elems: v.elems}, nil
	case allStrings(v.keys):
		v.kind = KindRecord
	default:
		v.kind = KindFunc
	}
	return v, nil
}

// isSeqDomain reports whether sorted keys are 1..len(keys).
func isSeqDomain(keys []Value) bool {
	for i, k := range keys {
		if k.kind != KindInt || k.i != int64(i+1) {
			return false
		}
	}
	return true
}

func allStrings(keys []Value) bool {
	for _, k := range keys {
		if k.kind != KindString {
			return false
		}
	}
	return true
}

type pair struct{ k, v Value }

func fromPairs(pairs []pair) Value {
	slices.SortStableFunc(pairs, func(a, b pair) int { return Compare(a.k, b.k) })
	var v Value
	for i, p := range pairs {
		if i+1 < len(pairs) && pairs[i+1].k.Equal(p.k) {
			continue // last one wins
		}
		v.keys = append(v.keys, p.k)
		v.elems = append(v.elems, p.v)
	}
	return v
}

// Kind reports the value's kind.
func (v Value) Kind() Kind { return v.kind }

// AsBool returns a boolean's value; ok is false for other kinds.
func (v Value) AsBool() (b, ok bool) { return v.b, v.kind == KindBool }

// AsInt returns an integer's value; ok is false for other kinds.
func (v Value) AsInt() (i int64, ok bool) { return v.i, v.kind == KindInt }

// AsString returns a string's value; ok is false for other kinds.
func (v Value) AsString() (s string, ok bool) { return v.s, v.kind == KindString }

// Elems returns the elements of a sequence or set (nil for other kinds).
func (v Value) Elems() []Value {
	if v.kind == KindSeq || v.kind == KindSet {
		return v.elems
	}
	return nil
}

// Fields returns a record's fields sorted by name, or a function's pairs
// sorted by key with each key in its String form. It is nil for other kinds.
func (v Value) Fields() []Field {
	if v.kind != KindRecord && v.kind != KindFunc {
		return nil
	}
	out := make([]Field, len(v.keys))
	for i, k := range v.keys {
		name := k.s
		if v.kind == KindFunc {
			name = k.String()
		}
		out[i] = Field{name, v.elems[i]}
	}
	return out
}

// Keys returns a function's or record's keys (record keys are strings).
func (v Value) Keys() []Value { return v.keys }

// Equal reports whether two values are the same.
func (v Value) Equal(w Value) bool { return Compare(v, w) == 0 }

// Compare orders values: first by kind, then as TLC orders values of one
// kind, which is the order in which sets keep their elements and functions
// their keys, and so the order String prints them in. FALSE comes before
// TRUE and integers go by value. Sequences, sets, records and functions go
// by size first (the shorter first, as TLC's compareTo does), then key by
// key (record field names, function domains), then element by element.
// Strings, and so record field names, go by their bytes: TLC orders them by
// when it first met them (its UniqueString tokens), which depends on the
// spec's text and not on the value, and which no order on values can
// reproduce.
func Compare(a, b Value) int {
	if c := cmp.Compare(a.kind, b.kind); c != 0 {
		return c
	}
	switch a.kind {
	case KindBool:
		return cmp.Compare(boolInt(a.b), boolInt(b.b))
	case KindInt:
		return cmp.Compare(a.i, b.i)
	case KindString:
		return strings.Compare(a.s, b.s)
	}
	if c := cmp.Compare(len(a.elems), len(b.elems)); c != 0 {
		return c
	}
	for i := range a.keys { // records and functions: as many keys as elements
		if c := Compare(a.keys[i], b.keys[i]); c != 0 {
			return c
		}
	}
	for i := range a.elems {
		if c := Compare(a.elems[i], b.elems[i]); c != 0 {
			return c
		}
	}
	return 0
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// String returns the value in TLA+ syntax as TLC prints it (the toString
// of TLC's values): TRUE and FALSE; integers in decimal; strings in double
// quotes with TLC's escapes \" \\ \t \n \f \r and every other byte as
// itself; sequences <<a, b>>; sets {a, b}; records [a |-> 1, b |-> 2];
// other functions (k :> v @@ ...), with their elements, fields and keys in
// the order of [Compare]. As TLC does, it prints the empty sequence (and
// the empty function) <<>> and the empty record [], and a record one of
// whose field names is not a TLA+ name (letters, digits and underscores,
// with a letter; not WF_ or SF_ followed by more) as the function it is:
// ("a b" :> 1). The invalid (zero) Value prints as <invalid>.
//
// It is the one printer of TLA+ values in tracecheck: models, divergence
// reports, counterexamples, charts and the conformance gate all print
// through it, and conform.ParseTLAValue reads what it prints of a valid
// value whose strings are UTF-8 back to an equal value.
func (v Value) String() string {
	var sb strings.Builder
	v.write(&sb)
	return sb.String()
}

func (v Value) write(sb *strings.Builder) {
	switch v.kind {
	case KindBool:
		if v.b {
			sb.WriteString("TRUE")
		} else {
			sb.WriteString("FALSE")
		}
	case KindInt:
		var buf [20]byte
		sb.Write(strconv.AppendInt(buf[:0], v.i, 10))
	case KindString:
		writeString(sb, v.s)
	case KindSeq, KindSet:
		open, closing := "<<", ">>"
		if v.kind == KindSet {
			open, closing = "{", "}"
		}
		sb.WriteString(open)
		for i, e := range v.elems {
			if i > 0 {
				sb.WriteString(", ")
			}
			e.write(sb)
		}
		sb.WriteString(closing)
	case KindRecord:
		if !v.namesOnly() {
			v.writeFunc(sb)
			return
		}
		sb.WriteByte('[')
		for i, k := range v.keys {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(k.s)
			sb.WriteString(" |-> ")
			v.elems[i].write(sb)
		}
		sb.WriteByte(']')
	case KindFunc:
		v.writeFunc(sb)
	default:
		sb.WriteString("<invalid>")
	}
}

// writeFunc writes a record or function as (k :> v @@ ...).
func (v Value) writeFunc(sb *strings.Builder) {
	if len(v.keys) == 0 {
		sb.WriteString("<<>>")
		return
	}
	sb.WriteByte('(')
	for i, k := range v.keys {
		if i > 0 {
			sb.WriteString(" @@ ")
		}
		k.write(sb)
		sb.WriteString(" :> ")
		v.elems[i].write(sb)
	}
	sb.WriteByte(')')
}

// writeString writes s quoted as TLC's StringValue.PrintVersion does: only
// " \ tab, newline, form feed and carriage return are escaped.
func writeString(sb *strings.Builder, s string) {
	sb.WriteByte('"')
	start := 0
	for i := 0; i < len(s); i++ {
		var esc string
		switch s[i] {
		case '"':
			esc = `\"`
		case '\\':
			esc = `\\`
		case '\t':
			esc = `\t`
		case '\n':
			esc = `\n`
		case '\f':
			esc = `\f`
		case '\r':
			esc = `\r`
		default:
			continue
		}
		sb.WriteString(s[start:i])
		sb.WriteString(esc)
		start = i + 1
	}
	sb.WriteString(s[start:])
	sb.WriteByte('"')
}

// namesOnly reports whether every field name of a record is a name as
// TLC's FcnRcdValue.isName has it, so that the record prints as [f |-> v].
func (v Value) namesOnly() bool {
	for _, k := range v.keys {
		if !isName(k.s) {
			return false
		}
	}
	return true
}

// isName reports whether TLC prints s as a record field name, [s |-> v],
// rather than as a function key, ("s" :> v): whether s is letters, digits
// and underscores (letters and digits of Unicode's Basic Multilingual
// Plane), with at least one letter, and does not begin with WF_ or SF_
// followed by more.
func isName(s string) bool {
	letter := false
	for _, r := range s {
		switch {
		case r == '_':
		case r > 0xFFFF: // Java's Character.isLetterOrDigit(char) sees a surrogate
			return false
		case unicode.IsLetter(r):
			letter = true
		case unicode.IsDigit(r):
		default:
			return false
		}
	}
	return letter && (len(s) < 4 || !strings.HasPrefix(s, "WF_") && !strings.HasPrefix(s, "SF_"))
}
