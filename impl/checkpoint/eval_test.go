package checkpoint_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

func TestParseEval(t *testing.T) {
	h := sum("weights")
	for _, tc := range []struct {
		name, in string
		ok       bool
		msg      string // in the error
	}{
		{"minimal", `{"passed":true}`, true, ""},
		{"with files", `{"passed":true,"files":{"model.bin":"` + h + `","sub/v.txt":"` + strings.ToUpper(h) + `"}}`, true, ""},
		{"other members kept", `{"zeta":1.50,"passed":true,"alpha":[1,2,{"x":null}]}`, true, ""},
		{"passed false", `{"passed":false}`, false, `"passed": false`},
		{"passed missing", `{"ok":true}`, false, `no "passed"`},
		{"passed a string", `{"passed":"true"}`, false, "not a boolean"},
		{"passed a number", `{"passed":1}`, false, "not a boolean"},
		{"duplicate passed, last true", `{"passed":false,"passed":true}`, false, "duplicate"},
		{"duplicate passed, both true", `{"passed":true,"passed":true}`, false, "duplicate"},
		{"duplicate key nested", `{"passed":true,"m":{"a":1,"a":2}}`, false, "duplicate"},
		{"duplicate file", `{"passed":true,"files":{"a":"` + h + `","a":"` + h + `"}}`, false, "duplicate"},
		{"same key in sibling objects is fine", `{"passed":true,"x":[{"a":1},{"a":2}]}`, true, ""},
		{"number out of range", `{"passed":true,"x":1e999}`, false, "finite"},
		{"negative out of range", `{"passed":true,"x":-1e999}`, false, "finite"},
		{"out of range disabling a claim", `{"passed":true,"files":{"model.bin":"` + sum("other") + `"},"x":1e999}`, false, "finite"},
		{"NaN literal", `{"passed":true,"x":NaN}`, false, "invalid"},
		{"not UTF-8", "{\"passed\":true,\"x\":\"\xff\"}", false, "UTF-8"},
		{"top-level array", `[{"passed":true}]`, false, "not a JSON object"},
		{"top-level scalar", `true`, false, "not a JSON object"},
		{"two objects", `{"passed":true}{"passed":true}`, false, "after"},
		{"trailing garbage", `{"passed":true} x`, false, "invalid"},
		{"truncated", `{"passed":true`, false, ""},
		{"empty", ``, false, ""},
		{"deep nesting", `{"passed":true,"x":` + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + `}`, false, "nested deeper"},
		{"files not an object", `{"passed":true,"files":["a"]}`, false, `"files"`},
		{"file hash not hex", `{"passed":true,"files":{"a":"` + strings.Repeat("z", 64) + `"}}`, false, "64 hex"},
		{"file hash short", `{"passed":true,"files":{"a":"abc"}}`, false, "64 hex"},
		{"file path escapes", `{"passed":true,"files":{"../x":"` + h + `"}}`, false, "clean relative path"},
		{"file path absolute", `{"passed":true,"files":{"/etc/passwd":"` + h + `"}}`, false, "clean relative path"},
		{"file path with a bidi override", `{"passed":true,"files":{"a\u202eb":"` + h + `"}}`, false, "format character"},
		{"too large", `{"passed":true,"pad":"` + strings.Repeat("x", checkpoint.MaxEvalBytes) + `"}`, false, "1 MiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := checkpoint.ParseEval([]byte(tc.in))
			if tc.ok {
				if err != nil {
					t.Fatalf("ParseEval = %v", err)
				}
				if !e.Passed {
					t.Fatal("Passed is false")
				}
				var want bytes.Buffer
				_ = json.Compact(&want, []byte(tc.in))
				if !bytes.Equal(e.Raw, want.Bytes()) {
					t.Fatalf("Raw = %s, want the input compacted: %s", e.Raw, want.Bytes())
				}
				for p, v := range e.Files {
					if v != strings.ToLower(v) || len(v) != 64 {
						t.Errorf("files[%s] = %q, want lowercase hex", p, v)
					}
				}
				return
			}
			if !errors.Is(err, checkpoint.ErrEvaluation) {
				t.Fatalf("ParseEval = %v, %v; want ErrEvaluation", e, err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Fatalf("ParseEval = %v, want it to say %q", err, tc.msg)
			}
		})
	}
}

// FuzzParseEval: any bytes are parsed or refused, never a panic; what is
// accepted passed, its Raw is the input compacted and parses to the same
// result (the manifest records Raw, and verification parses it again).
func FuzzParseEval(f *testing.F) {
	for _, s := range []string{
		`{"passed":true}`, `{"passed":false,"passed":true}`, `{"passed":true,"x":1e999}`,
		`{"passed":true,"files":{"model.bin":"` + sum("x") + `"}}`, `{"a":{"b":[1,2,{"c":"\u00e9"}]},"passed":true}`,
		`[[[[]]]]`, "{\"passed\":true,\"\xff\":1}", `{"passed":true} {}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := checkpoint.ParseEval(b)
		if err != nil {
			if !errors.Is(err, checkpoint.ErrEvaluation) {
				t.Fatalf("error %v is not ErrEvaluation", err)
			}
			return
		}
		if !e.Passed {
			t.Fatal("accepted a result that did not pass")
		}
		var want bytes.Buffer
		if err := json.Compact(&want, b); err != nil || !bytes.Equal(e.Raw, want.Bytes()) {
			t.Fatalf("Raw %q is not the input compacted (%v)", e.Raw, err)
		}
		again, err := checkpoint.ParseEval(e.Raw)
		if err != nil || len(again.Files) != len(e.Files) {
			t.Fatalf("Raw does not parse to the same result: %v", err)
		}
		for p, h := range e.Files {
			if again.Files[p] != h {
				t.Fatalf("files[%s]: %s, then %s", p, h, again.Files[p])
			}
		}
	})
}
