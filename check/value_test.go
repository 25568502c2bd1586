package check_test

import (
	"errors"
	"testing"

	"github.com/tracecheck/tracecheck/check"
)

// TestParseJSONValue: trace values (NDJSON and ITF) become model values,
// printed as TLC prints them.
func TestParseJSONValue(t *testing.T) {
	tests := []struct {
		json string
		want string // the value's String: TLC's form
	}{
		{`true`, `TRUE`},
		{`-7`, `-7`},
		{`{"#bigint":"-9223372036854775808"}`, `-9223372036854775808`},
		{`"a\"b\\c\td\u0007"`, "\"a\\\"b\\\\c\\td\a\""},
		{`"é"`, `"é"`},
		{`[1,"x",[]]`, `<<1, "x", <<>>>>`},
		{`{"#tup":[1,2]}`, `<<1, 2>>`},
		{`{"#set":[3,1,3,2]}`, `{1, 2, 3}`},
		{`{"#set":[[1,1],[2],[]]}`, `{<<>>, <<2>>, <<1, 1>>}`},
		{`{"b":2,"a":{"#set":[]}}`, `[a |-> {}, b |-> 2]`},
		{`{}`, `[]`},
		{`{"a b":1}`, `("a b" :> 1)`},
		{`{"#map":[[0,"x"],[5,"y"]]}`, `(0 :> "x" @@ 5 :> "y")`},
		// As in TLA+, a function on 1..n is a sequence, one on strings a
		// record.
		{`{"#map":[[2,"b"],[1,"a"]]}`, `<<"a", "b">>`},
		{`{"#map":[]}`, `<<>>`},
		{`{"#map":[["y",2],["x",1]]}`, `[x |-> 1, y |-> 2]`},
	}
	for _, tt := range tests {
		t.Run(tt.json, func(t *testing.T) {
			v, err := check.ParseJSONValue([]byte(tt.json))
			if err != nil {
				t.Fatal(err)
			}
			if got := v.String(); got != tt.want {
				t.Errorf("ParseJSONValue(%s) prints %s, want %s", tt.json, got, tt.want)
			}
		})
	}

	same := [][2]string{
		{`{"#map":[[1,"a"],[2,"b"]]}`, `["a","b"]`},
		{`{"#map":[[1,"a"],[2,"b"]]}`, `{"#tup":["a","b"]}`},
		{`{"#map":[["x",1]]}`, `{"x":1}`},
		{`{"#map":[]}`, `[]`},
	}
	for _, p := range same {
		a, err1 := check.ParseJSONValue([]byte(p[0]))
		b, err2 := check.ParseJSONValue([]byte(p[1]))
		if err1 != nil || err2 != nil || !a.Equal(b) {
			t.Errorf("%s and %s: %s, %s (%v, %v); want equal values", p[0], p[1], a, b, err1, err2)
		}
	}
}

func TestParseJSONValueErrors(t *testing.T) {
	tests := []struct {
		json string
		want error
	}{
		{`1.5`, check.ErrValue},
		{`null`, check.ErrValue},
		{`{"#foo":1}`, check.ErrValue},
		{`{"#bigint":"9223372036854775808"}`, check.ErrValue},
		{`{"#map":[[1]]}`, check.ErrValue},
		{`[1,{"#unserializable":"f"}]`, check.ErrUnserializable},
		{`[1,`, check.ErrValue},
	}
	for _, tt := range tests {
		t.Run(tt.json, func(t *testing.T) {
			if v, err := check.ParseJSONValue([]byte(tt.json)); !errors.Is(err, tt.want) {
				t.Errorf("ParseJSONValue(%s) = %s, %v; want an error wrapping %v", tt.json, v, err, tt.want)
			}
		})
	}
}
