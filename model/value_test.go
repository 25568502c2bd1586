package model

import "testing"

func TestValueString(t *testing.T) {
	f, err := Func([]Value{Int(2), Int(1)}, []Value{Str("b"), Str("a")})
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		v    Value
		want string
	}{
		{Bool(true), "TRUE"},
		{Int(-3), "-3"},
		{Str(`say "hi"`), `"say \"hi\""`},
		{Seq(Int(1), Str("x")), `<<1, "x">>`},
		{Set(Int(3), Int(1), Int(3)), "{1, 3}"},
		{Record(Field{"b", Int(2)}, Field{"a", Bool(false)}), "[a |-> FALSE, b |-> 2]"},
		{f, `(1 :> "a" @@ 2 :> "b")`},
		{Seq(), "<<>>"},
		{Set(), "{}"},
	}
	for _, c := range cases {
		if got := c.v.String(); got != c.want {
			t.Errorf("String() = %s, want %s", got, c.want)
		}
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
