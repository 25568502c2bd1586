package conform

import (
	"errors"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/model"
)

func mustFunc(t testing.TB, keys, vals []model.Value) model.Value {
	t.Helper()
	f, err := model.Func(keys, vals)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestParseTLAValue(t *testing.T) {
	tests := []struct {
		in   string
		want model.Value
	}{
		{`TRUE`, model.Bool(true)},
		{` FALSE `, model.Bool(false)},
		{`0`, model.Int(0)},
		{`-42`, model.Int(-42)},
		{`9223372036854775807`, model.Int(9223372036854775807)},
		{`-9223372036854775808`, model.Int(-9223372036854775808)},
		{`"Ready"`, model.Str("Ready")},
		{`""`, model.Str("")},
		{`"a\"b\\c\nd\te\ff\rg"`, model.Str("a\"b\\c\nd\te\ff\rg")},
		{`"héllo ✓"`, model.Str("héllo ✓")},
		{`<<>>`, model.Seq()},
		{`<<1, "x", TRUE>>`, model.Seq(model.Int(1), model.Str("x"), model.Bool(true))},
		{`{}`, model.Set()},
		{`{3, 1, 2, 1}`, model.Set(model.Int(1), model.Int(2), model.Int(3))},
		{`[]`, model.Record()},
		{`[b |-> 2, a |-> <<>>]`, model.Record(model.Field{Name: "b", Value: model.Int(2)}, model.Field{Name: "a", Value: model.Seq()})},
		{`("a" :> 1 @@ "b" :> 2)`, mustFunc(t, []model.Value{model.Str("a"), model.Str("b")}, []model.Value{model.Int(1), model.Int(2)})},
		{`(<<1, 2>> :> {TRUE})`, mustFunc(t, []model.Value{model.Seq(model.Int(1), model.Int(2))}, []model.Value{model.Set(model.Bool(true))})},
		{"<< [name |-> \"a\", id |-> 1, tags |-> <<\"x\">>],\n   [name |-> \"b\", id |-> 2, tags |-> <<>>] >>",
			model.Seq(
				model.Record(model.Field{Name: "name", Value: model.Str("a")}, model.Field{Name: "id", Value: model.Int(1)}, model.Field{Name: "tags", Value: model.Seq(model.Str("x"))}),
				model.Record(model.Field{Name: "name", Value: model.Str("b")}, model.Field{Name: "id", Value: model.Int(2)}, model.Field{Name: "tags", Value: model.Seq()}))},
		{`{<<{[a |-> {}]}>>}`, model.Set(model.Seq(model.Set(model.Record(model.Field{Name: "a", Value: model.Set()}))))},
		{`[été_2 |-> 1]`, model.Record(model.Field{Name: "été_2", Value: model.Int(1)})},
		// A function on 1..n is a sequence, one on strings a record, in TLA+
		// as in TLC.
		{`(2 :> "b" @@ 1 :> "a")`, model.Seq(model.Str("a"), model.Str("b"))},
		{`("a" :> 1 @@ "b c" :> 2)`, model.Record(model.Field{Name: "a", Value: model.Int(1)}, model.Field{Name: "b c", Value: model.Int(2)})},
		{"<< \"x\",\n   [ v |-> 1,\n     state |-> [] ] >>", model.Seq(model.Str("x"), model.Record(model.Field{Name: "v", Value: model.Int(1)}, model.Field{Name: "state", Value: model.Record()}))},
	}
	for _, tt := range tests {
		got, err := ParseTLAValue(tt.in)
		if err != nil {
			t.Errorf("ParseTLAValue(%q): %v", tt.in, err)
			continue
		}
		if !got.Equal(tt.want) {
			t.Errorf("ParseTLAValue(%q) = %s, want %s", tt.in, got, tt.want)
		}
		back, err := ParseTLAValue(got.String())
		if err != nil || !back.Equal(got) {
			t.Errorf("round trip of %q via %q: %v, %v", tt.in, got, back, err)
		}
	}
}

func TestParseTLAValueMalformed(t *testing.T) {
	tests := []struct {
		name, in string
		want     error
	}{
		{"empty", ``, ErrSyntax},
		{"blank", " \n\t", ErrSyntax},
		{"garbage", `@#!`, ErrSyntax},
		{"truncated string", `"abc`, ErrSyntax},
		{"truncated escape", `"abc\`, ErrSyntax},
		{"bad escape", `"a\qb"`, ErrSyntax},
		{"unicode escape", `"\u0041"`, ErrSyntax},
		{"invalid UTF-8", "\"\xff\"", ErrSyntax},
		{"lone minus", `-`, ErrSyntax},
		{"minus then letter", `-x`, ErrSyntax},
		{"integer overflow", `9223372036854775808`, ErrSyntax},
		{"truncated sequence", `<<1, 2`, ErrSyntax},
		{"unbalanced sequence", `<<1, 2}`, ErrSyntax},
		{"trailing comma", `<<1, >>`, ErrSyntax},
		{"missing comma", `{1 2}`, ErrSyntax},
		{"unbalanced set", `{1, 2>>`, ErrSyntax},
		{"extra closer", `{1}}`, ErrSyntax},
		{"truncated record", `[a |-> 1`, ErrSyntax},
		{"record without arrow", `[a = 1]`, ErrSyntax},
		{"record duplicate field", `[a |-> 1, a |-> 2]`, ErrSyntax},
		{"record bad field", `[1 |-> 2]`, ErrSyntax},
		{"truncated function", `("a" :> 1 @@`, ErrSyntax},
		{"function without arrow", `("a" 1)`, ErrSyntax},
		{"empty function", `()`, ErrSyntax},
		{"function duplicate key", `(1 :> 2 @@ 1 :> 3)`, ErrSyntax},
		{"function wrong separator", `(1 :> 2, 3 :> 4)`, ErrSyntax},
		{"two values", `1 2`, ErrSyntax},
		{"too deep", strings.Repeat("<<", maxDepth+2) + strings.Repeat(">>", maxDepth+2), ErrSyntax},
		{"model value", `a1`, ErrUnsupported},
		{"lowercase boolean", `true`, ErrUnsupported},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, err := ParseTLAValue(tt.in)
			if !errors.Is(err, tt.want) {
				t.Fatalf("ParseTLAValue(%q) = %v, %v; want an error wrapping %v", tt.in, v, err, tt.want)
			}
		})
	}
}

func TestParseState(t *testing.T) {
	want := model.Record(
		model.Field{Name: "phase", Value: model.Str("Ready")},
		model.Field{Name: "verified", Value: model.Bool(false)},
		model.Field{Name: "published", Value: model.Bool(false)})
	for _, in := range []string{
		"/\\ published = FALSE\n/\\ verified = FALSE\n/\\ phase = \"Ready\"",
		`/\ phase = "Ready" /\ verified = FALSE /\ published = FALSE`,
		"  /\\ phase =\n  \"Ready\"\n/\\ verified = FALSE /\\ published = FALSE\n",
	} {
		got, err := ParseState(in)
		if err != nil {
			t.Errorf("ParseState(%q): %v", in, err)
			continue
		}
		if !got.Equal(want) {
			t.Errorf("ParseState(%q) = %s", in, FormatState(got))
		}
	}
	got, err := ParseState(`x = 0`)
	if err != nil || !got.Equal(model.Record(model.Field{Name: "x", Value: model.Int(0)})) {
		t.Errorf("ParseState(x = 0) = %v, %v", got, err)
	}
	if s := FormatState(want); s != `/\ phase = "Ready" /\ published = FALSE /\ verified = FALSE` {
		t.Errorf("FormatState = %s", s)
	}
}

func TestParseStateMalformed(t *testing.T) {
	tests := []struct{ name, in string }{
		{"empty", ""},
		{"garbage", "%%%"},
		{"no value", `/\ x =`},
		{"no equals", `/\ x 1`},
		{"twice", `/\ x = 1 /\ x = 2`},
		{"bare then more", `x = 1 y = 2`},
		{"conjunct without name", `/\ = 1`},
		{"dangling conjunction", `/\ x = 1 /\`},
		{"truncated value", `/\ x = <<1`},
		{"bad escape", `/\ x = "\z"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if v, err := ParseState(tt.in); !errors.Is(err, ErrSyntax) {
				t.Fatalf("ParseState(%q) = %v, %v; want ErrSyntax", tt.in, v, err)
			}
		})
	}
}

// FuzzParseTLAValue checks that ParseTLAValue never panics, and that
// whatever it accepts model.Value.String prints back to text it reads as the
// same value, and prints again identically.
func FuzzParseTLAValue(f *testing.F) {
	for _, s := range []string{
		`TRUE`, `-3`, `"a\"\\\n"`, `<<1, <<>>, {}>>`, `{1, 2}`, `[a |-> 1, b |-> "x"]`,
		`("a" :> 1 @@ "b" :> <<TRUE>>)`, `<<`, `"\q"`, `[a |-> ]`, `(1 :> )`, `{{{{`,
		`(1 :> 2 @@ 2 :> 3)`, `("a b" :> 1 @@ "WF_x" :> 2)`, `[é |-> "\f"]`, `{<<2>>, <<1, 1>>, {}, {0}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		v, err := ParseTLAValue(in)
		if err != nil {
			if !errors.Is(err, ErrSyntax) && !errors.Is(err, ErrUnsupported) {
				t.Fatalf("ParseTLAValue(%q): error %v wraps neither ErrSyntax nor ErrUnsupported", in, err)
			}
			return
		}
		out := v.String()
		back, err := ParseTLAValue(out)
		if err != nil {
			t.Fatalf("ParseTLAValue(%q) = %s, which does not parse: %v", in, out, err)
		}
		if !back.Equal(v) || back.String() != out {
			t.Fatalf("round trip of %q: %s became %s", in, out, back)
		}
	})
}
