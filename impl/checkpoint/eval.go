package checkpoint

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Limits on what the publisher reads back. Every read of a file a program
// could write is bounded by one of them; past it the read fails with an
// error matching [ErrTooLarge] that names the limit.
const (
	// MaxEvalBytes is the largest evaluation result ($TRACECHECK_EVAL_FILE).
	MaxEvalBytes = 1 << 20
	// MaxJSONDepth is the deepest nesting of arrays and objects accepted in
	// an evaluation result.
	MaxJSONDepth = 64
)

// EvalResult is a parsed evaluation result: the program's verdict on the
// checkpoint it wrote.
type EvalResult struct {
	// Passed is the "passed" member: the boolean true, or the result is
	// refused.
	Passed bool
	// Files is the optional "files" member: checkpoint-relative paths
	// mapped to the lowercase hex SHA-256 of the bytes the program
	// evaluated.
	Files map[string]string
	// Raw is the result as the program wrote it, with insignificant
	// whitespace removed (json.Compact): the same members in the same
	// order, the same number literals. The manifest records it.
	Raw json.RawMessage
}

// ParseEval parses an evaluation result strictly. It must be valid UTF-8
// JSON holding exactly one object, at most [MaxEvalBytes] long and
// [MaxJSONDepth] deep, with no member name repeated in any object (a
// result saying "passed" twice is refused, not read by its last word), no
// number outside float64's finite range (1e999 is refused, not read as
// infinity), a "passed" member that is a boolean, and, if present, a
// "files" member that is an object mapping clean relative paths to
// SHA-256 hex digests. Errors wrap [ErrEvaluation]; ParseEval refuses a
// result whose "passed" is false with an error too.
func ParseEval(b []byte) (*EvalResult, error) {
	if len(b) > MaxEvalBytes {
		return nil, fmt.Errorf("%w: %w: the evaluation result is %d bytes, larger than 1 MiB", ErrEvaluation, ErrTooLarge, len(b))
	}
	if err := strictJSON(b, MaxJSONDepth); err != nil {
		return nil, fmt.Errorf("%w: evaluation result: %w", ErrEvaluation, err)
	}
	var members map[string]json.RawMessage
	if err := json.Unmarshal(b, &members); err != nil {
		return nil, fmt.Errorf("%w: evaluation result: %w", ErrEvaluation, err)
	}
	e := &EvalResult{}
	switch p := members["passed"]; string(p) {
	case "true":
		e.Passed = true
	case "false":
		return nil, fmt.Errorf("%w: evaluation result says \"passed\": false", ErrEvaluation)
	case "":
		return nil, fmt.Errorf("%w: evaluation result has no \"passed\" member", ErrEvaluation)
	default:
		return nil, fmt.Errorf("%w: evaluation result's \"passed\" is %s, not a boolean", ErrEvaluation, clipText(string(p), 40))
	}
	if raw, ok := members["files"]; ok {
		if err := json.Unmarshal(raw, &e.Files); err != nil || e.Files == nil {
			return nil, fmt.Errorf("%w: evaluation result's \"files\" is not an object of path to sha256 strings", ErrEvaluation)
		}
		for p, h := range e.Files {
			if err := checkRelPath(p); err != nil {
				return nil, fmt.Errorf("%w: evaluation result's \"files\" names %q: %w", ErrEvaluation, p, err)
			}
			if len(h) != 64 {
				return nil, fmt.Errorf("%w: evaluation result's \"files\" gives %q for %q, not 64 hex digits", ErrEvaluation, clipText(h, 80), p)
			}
			if _, err := hex.DecodeString(h); err != nil {
				return nil, fmt.Errorf("%w: evaluation result's \"files\" gives %q for %q, not 64 hex digits", ErrEvaluation, h, p)
			}
			e.Files[p] = lower(h)
		}
	}
	var buf bytes.Buffer
	if err := json.Compact(&buf, b); err != nil {
		return nil, fmt.Errorf("%w: evaluation result: %w", ErrEvaluation, err)
	}
	e.Raw = buf.Bytes()
	return e, nil
}

func lower(h string) string {
	b := []byte(h)
	for i, c := range b {
		if 'A' <= c && c <= 'F' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// checkRelPath checks a checkpoint-relative file path: clean, local,
// slash-separated, each element a name [checkComponent] accepts.
func checkRelPath(p string) error {
	if err := localName(p); err != nil || p == "." {
		return fmt.Errorf("%w: not a clean relative path", ErrUnsafePath)
	}
	for _, el := range strings.Split(p, "/") {
		if err := checkComponent(el); err != nil {
			return err
		}
	}
	return nil
}

func clipText(s string, n int) string {
	if len(s) > n {
		return s[:n] + "..."
	}
	return s
}

// errDuplicateKey reports a member name repeated in one JSON object.
var errDuplicateKey = errors.New("duplicate member name")

// strictJSON checks that b is one JSON value, valid UTF-8, nested at most
// maxDepth deep, with no member name repeated in an object and every
// number finite as a float64. When the value must be an object, the caller
// checks that too; strictJSON requires an object at the top.
func strictJSON(b []byte, maxDepth int) error {
	if !utf8.Valid(b) {
		return errors.New("not valid UTF-8")
	}
	type frame struct {
		obj     bool
		wantKey bool
		keys    map[string]struct{}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var stack []frame
	values := 0
	// done marks the end of a value at the current level.
	done := func() {
		if len(stack) == 0 {
			values++
		} else if top := &stack[len(stack)-1]; top.obj {
			top.wantKey = true
		}
	}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if len(stack) == 0 && values > 0 {
			return errors.New("text after the JSON value")
		}
		if len(stack) > 0 {
			if top := &stack[len(stack)-1]; top.obj && top.wantKey {
				key, ok := tok.(string)
				if !ok {
					if d, isDelim := tok.(json.Delim); isDelim && d == '}' {
						stack = stack[:len(stack)-1]
						done()
						continue
					}
					return errors.New("object member name is not a string")
				}
				if _, dup := top.keys[key]; dup {
					return fmt.Errorf("%w %q", errDuplicateKey, clipText(key, 80))
				}
				top.keys[key] = struct{}{}
				top.wantKey = false
				continue
			}
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				if len(stack) == 0 && t != '{' {
					return errors.New("not a JSON object")
				}
				if len(stack) >= maxDepth {
					return fmt.Errorf("%w: nested deeper than %d", ErrTooLarge, maxDepth)
				}
				f := frame{obj: t == '{', wantKey: t == '{'}
				if f.obj {
					f.keys = map[string]struct{}{}
				}
				stack = append(stack, f)
			case '}', ']':
				stack = stack[:len(stack)-1]
				done()
			}
		case json.Number:
			f, err := strconv.ParseFloat(string(t), 64)
			if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
				return fmt.Errorf("number %s is out of float64's finite range", clipText(string(t), 40))
			}
			if len(stack) == 0 {
				return errors.New("not a JSON object")
			}
			done()
		default:
			if len(stack) == 0 {
				return errors.New("not a JSON object")
			}
			done()
		}
	}
	if values != 1 || len(stack) != 0 {
		return errors.New("not one complete JSON object")
	}
	return nil
}

// readBounded reads f to its end, failing with [ErrTooLarge] past max
// bytes.
func readBounded(f io.Reader, max int64, what string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(f, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%w: %s is larger than %s", ErrTooLarge, what, sizeText(max))
	}
	return b, nil
}

// sizeText writes a limit in bytes the way the documentation does.
func sizeText(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return strconv.FormatInt(n>>20, 10) + " MiB"
	case n >= 1<<10 && n%(1<<10) == 0:
		return strconv.FormatInt(n>>10, 10) + " KiB"
	}
	return strconv.FormatInt(n, 10) + " bytes"
}
