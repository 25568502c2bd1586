package model

import (
	"slices"
	"testing"
)

func mustFunc(t *testing.T, keys, vals []Value) Value {
	t.Helper()
	f, err := Func(keys, vals)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestValueString pins String to TLC's toString, at the TLC revision that
// wrote the retained reports (cc6b616): StringValue.PrintVersion for
// strings, SetEnumValue.normalize and the compareTo methods for the order
// of elements, FcnRcdValue.toString for functions. conform's
// TestPrintLikeTLC checks it against the retained TLC output itself.
func TestValueString(t *testing.T) {
	f := mustFunc(t, []Value{Int(2), Int(0)}, []Value{Str("b"), Str("a")})
	tests := []struct {
		name string
		v    Value
		want string
	}{
		{"true", Bool(true), "TRUE"},
		{"false", Bool(false), "FALSE"},
		{"negative", Int(-3), "-3"},
		{"min int", Int(-9223372036854775808), "-9223372036854775808"},
		{"string", Str("Ready"), `"Ready"`},
		{"quote and backslash", Str(`say "hi" \o/`), `"say \"hi\" \\o/"`},
		{"TLC's escapes", Str("a\tb\nc\fd\re"), `"a\tb\nc\fd\re"`},
		// TLC escapes nothing else: strconv.Quote's \a, \x00, \u00ad and
		// \xff are not TLA+ and not what TLC prints.
		{"bell as itself", Str("bell\a"), "\"bell\a\""},
		{"NUL as itself", Str("\x00"), "\"\x00\""},
		{"soft hyphen as itself", Str("\u00ad"), "\"\u00ad\""},
		{"non-ASCII as itself", Str("héllo ✓"), `"héllo ✓"`},
		{"invalid UTF-8 as itself", Str("\xff"), "\"\xff\""},
		{"empty string", Str(""), `""`},
		{"seq", Seq(Int(1), Str("x")), `<<1, "x">>`},
		{"empty seq", Seq(), "<<>>"},
		{"set", Set(Int(3), Int(1), Int(3)), "{1, 3}"},
		{"empty set", Set(), "{}"},
		{"booleans", Set(Bool(true), Bool(false)), "{FALSE, TRUE}"},
		// TLC's compareTo: the shorter sequence, set, record or function
		// first, then element by element.
		{"set of seqs", Set(Seq(Int(1), Int(1)), Seq(Int(2)), Seq()), "{<<>>, <<2>>, <<1, 1>>}"},
		{"set of sets", Set(Set(Int(1), Int(3)), Set(Int(2))), "{{2}, {1, 3}}"},
		{"set of records", Set(Record(Field{"a", Int(1)}, Field{"b", Int(2)}), Record(Field{"c", Int(1)})), "{[c |-> 1], [a |-> 1, b |-> 2]}"},
		{"record", Record(Field{"b", Int(2)}, Field{"a", Bool(false)}), "[a |-> FALSE, b |-> 2]"},
		{"empty record", Record(), "[]"},
		{"record with a non-name field", Record(Field{"c", Int(2)}, Field{"a b", Int(1)}), `("a b" :> 1 @@ "c" :> 2)`},
		{"record field without a letter", Record(Field{"_1", Int(1)}), `("_1" :> 1)`},
		{"record field WF_", Record(Field{"WF_x", Int(1)}), `("WF_x" :> 1)`},
		{"record field SF_", Record(Field{"SF_x", Int(1)}), `("SF_x" :> 1)`},
		{"record field WF_ alone", Record(Field{"WF_", Int(1)}), `[WF_ |-> 1]`},
		{"record field non-ASCII", Record(Field{"été_2", Int(1)}), `[été_2 |-> 1]`},
		{"record field outside the BMP", Record(Field{"𝒜", Int(1)}), `("𝒜" :> 1)`},
		{"function", f, `(0 :> "a" @@ 2 :> "b")`},
		{"function on 1..n", mustFunc(t, []Value{Int(2), Int(1)}, []Value{Str("b"), Str("a")}), `<<"a", "b">>`},
		{"function on strings", mustFunc(t, []Value{Str("b"), Str("a")}, []Value{Int(2), Int(1)}), `[a |-> 1, b |-> 2]`},
		{"empty function", mustFunc(t, nil, nil), "<<>>"},
		{"function on seqs", mustFunc(t, []Value{Seq(Int(1), Int(1)), Seq(Int(2))}, []Value{Int(1), Int(2)}), "(<<2>> :> 2 @@ <<1, 1>> :> 1)"},
		{"nested", Seq(Set(Record(Field{"a", Set()})), Str("x\"y")), `<<{[a |-> {}]}, "x\"y">>`},
		{"invalid", Value{}, "<invalid>"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.v.String(); got != tt.want {
				t.Errorf("String() = %s, want %s", got, tt.want)
			}
		})
	}
}

func TestValueEqual(t *testing.T) {
	if !Set(Int(1), Int(2)).Equal(Set(Int(2), Int(1), Int(1))) {
		t.Error("sets are unordered and without duplicates")
	}
	if Seq(Int(1), Int(2)).Equal(Seq(Int(2), Int(1))) {
		t.Error("sequences are ordered")
	}
	if Int(1).Equal(Str("1")) || Bool(false).Equal(Int(0)) {
		t.Error("kinds differ")
	}
	if !Record(Field{"a", Int(1)}, Field{"a", Int(2)}).Equal(Record(Field{"a", Int(2)})) {
		t.Error("a repeated field keeps its last value")
	}
	if _, err := Func([]Value{Int(1)}, nil); err == nil {
		t.Error("mismatched function accepted")
	}
	if Seq(Int(1)).Equal(Set(Int(1))) {
		t.Error("seq equals set")
	}
}

// TestFuncIsSeqOrRecord: as in TLA+, a function on 1..n is a sequence and a
// function on strings a record.
func TestFuncIsSeqOrRecord(t *testing.T) {
	tests := []struct {
		name       string
		keys, vals []Value
		want       Value
		kind       Kind
	}{
		{"1..2", []Value{Int(2), Int(1)}, []Value{Str("b"), Str("a")}, Seq(Str("a"), Str("b")), KindSeq},
		{"empty", nil, nil, Seq(), KindSeq},
		{"strings", []Value{Str("y"), Str("x")}, []Value{Int(2), Int(1)}, Record(Field{"x", Int(1)}, Field{"y", Int(2)}), KindRecord},
		{"strings, not names", []Value{Str("a b")}, []Value{Int(1)}, Record(Field{"a b", Int(1)}), KindRecord},
		{"repeated key", []Value{Int(1), Int(1)}, []Value{Int(1), Int(2)}, Seq(Int(2)), KindSeq},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := mustFunc(t, tt.keys, tt.vals)
			if f.Kind() != tt.kind || !f.Equal(tt.want) {
				t.Errorf("Func = %s (%s), want %s (%s)", f, f.Kind(), tt.want, tt.kind)
			}
		})
	}
	for _, keys := range [][]Value{{Int(0), Int(1)}, {Int(2)}, {Int(1), Int(3)}, {Int(1), Str("a")}} {
		if f := mustFunc(t, keys, make([]Value, len(keys))); f.Kind() != KindFunc {
			t.Errorf("Func on %v is a %s, want a func", keys, f.Kind())
		}
	}
}

// TestCompareTLCOrder: within a kind, Compare is TLC's compareTo (strings
// aside, which TLC orders by when it met them).
func TestCompareTLCOrder(t *testing.T) {
	ordered := [][]Value{
		{Bool(false), Bool(true)},
		{Int(-5), Int(0), Int(3)},
		{Str(""), Str("B"), Str("a"), Str("ab"), Str("b")},
		{Seq(), Seq(Int(9)), Seq(Int(1), Int(1)), Seq(Int(1), Int(2)), Seq(Int(0), Int(0), Int(0))},
		{Set(), Set(Int(9)), Set(Int(1), Int(2))},
		{Record(), Record(Field{"z", Int(0)}), Record(Field{"a", Int(1)}, Field{"b", Int(0)}), Record(Field{"a", Int(1)}, Field{"c", Int(0)})},
		{mustFunc(t, []Value{Int(9)}, []Value{Int(0)}), mustFunc(t, []Value{Int(0), Int(1)}, []Value{Int(5), Int(5)}), mustFunc(t, []Value{Int(0), Int(2)}, []Value{Int(0), Int(0)})},
	}
	for _, vs := range ordered {
		if !slices.IsSortedFunc(vs, Compare) {
			t.Errorf("not in TLC's order: %v", vs)
		}
		for i := range vs {
			for j := range vs {
				if got, want := Compare(vs[i], vs[j]), cmpInt(i, j); got != want {
					t.Errorf("Compare(%s, %s) = %d, want %d", vs[i], vs[j], got, want)
				}
			}
		}
	}
}

func cmpInt(a, b int) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}
