package model

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
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
	KindSeq                 // <<a, b>>: sequences and tuples
	KindSet                 // {a, b}: kept sorted and without duplicates
	KindRecord              // [f |-> a]: kept sorted by field name
	KindFunc                // (k :> v @@ ...): kept sorted by key
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
// [Compare]. Its String form is TLA+ syntax, the same text TLC prints.
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

// Set returns the set of the given elements, sorted and without duplicates.
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

// Func returns the function mapping keys[i] to vals[i]. It returns an error if
// the slices differ in length.
func Func(keys, vals []Value) (Value, error) {
	if len(keys) != len(vals) {
		return Value{}, fmt.Errorf("model: function with %d keys and %d values", len(keys), len(vals))
	}
	pairs := make([]pair, len(keys))
	for i := range keys {
		pairs[i] = pair{keys[i], vals[i]}
	}
	v := fromPairs(pairs)
	v.kind = KindFunc
	return v, nil
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

// Compare orders values: first by kind, then by content. It is the order in
// which sets keep their elements.
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
	if c := slices.CompareFunc(a.keys, b.keys, Compare); c != 0 {
		return c
	}
	return slices.CompareFunc(a.elems, b.elems, Compare)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// String returns the value in TLA+ syntax, as TLC prints it.
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
		sb.WriteString(strconv.FormatInt(v.i, 10))
	case KindString:
		sb.WriteString(strconv.Quote(v.s))
	case KindSeq, KindSet:
		open, close := "<<", ">>"
		if v.kind == KindSet {
			open, close = "{", "}"
		}
		sb.WriteString(open)
		for i, e := range v.elems {
			if i > 0 {
				sb.WriteString(", ")
			}
			e.write(sb)
		}
		sb.WriteString(close)
	case KindRecord:
		sb.WriteString("[")
		for i, k := range v.keys {
			if i > 0 {
				sb.WriteString(", ")
			}
			sb.WriteString(k.s)
			sb.WriteString(" |-> ")
			v.elems[i].write(sb)
		}
		sb.WriteString("]")
	case KindFunc:
		if len(v.keys) == 0 {
			sb.WriteString("<<>>") // TLC prints the empty function as the empty sequence
			return
		}
		sb.WriteString("(")
		for i, k := range v.keys {
			if i > 0 {
				sb.WriteString(" @@ ")
			}
			k.write(sb)
			sb.WriteString(" :> ")
			v.elems[i].write(sb)
		}
		sb.WriteString(")")
	default:
		sb.WriteString("<invalid>")
	}
}
