package conform

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/tracecheck/tracecheck/model"
)

// ErrSyntax is wrapped by every error about malformed tool output: a TLA+
// value or state that does not parse, a DOT file that is not what TLC
// writes, a FizzBee protobuf or JSON file that does not decode.
var ErrSyntax = errors.New("malformed tool output")

// ErrUnsupported is wrapped by errors about well-formed input that this
// package deliberately does not handle, such as TLC model values or FizzBee
// graphs with several instances of a role.
var ErrUnsupported = errors.New("unsupported")

// maxDepth bounds the nesting of parsed values, so that hostile input
// cannot exhaust the stack.
const maxDepth = 512

// ParseTLAValue parses one TLA+ value as TLC prints it: strings with TLC's
// escapes (\" \\ \n \t \f \r), TRUE and FALSE, 64-bit integers (negative
// too), records [a |-> 1], sequences and tuples <<...>>, sets {...} and
// functions (k :> v @@ ...), nested to any depth up to a fixed bound, and
// laid out on one line (TLC's toString) or over several (its pretty
// printer). Surrounding white space is ignored. A function on 1..n or on
// strings is the sequence or record it is in TLA+ (see [model.Func]).
// Errors wrap [ErrSyntax] (or [ErrUnsupported] for TLC model values) and
// never panic.
//
// Whatever it accepts, [model.Value.String] prints back in TLC's form, and
// ParseTLAValue reads that text to an equal value.
func ParseTLAValue(text string) (model.Value, error) {
	p := &parser{src: text}
	v, err := p.value(0)
	if err != nil {
		return model.Value{}, fmt.Errorf("parse TLA+ value: %w", err)
	}
	p.space()
	if p.pos != len(p.src) {
		return model.Value{}, fmt.Errorf("parse TLA+ value: %w", p.errf("unexpected %s after the value", p.near()))
	}
	return v, nil
}

// ParseState parses a state as TLC prints it: a conjunction list
// `/\ x = v` with one conjunct per variable (spread over lines or not), or,
// for a single variable, a bare `x = v`; values as [ParseTLAValue] reads
// them. It returns the state as a record from variable name to value (see
// [State]). A variable named twice is an error.
func ParseState(text string) (model.Value, error) {
	p := &parser{src: text}
	fields, err := p.state()
	if err != nil {
		return model.Value{}, fmt.Errorf("parse TLA+ state: %w", err)
	}
	return model.Record(fields...), nil
}

type parser struct {
	src string
	pos int
}

func (p *parser) errf(format string, args ...any) error {
	return fmt.Errorf("%w: offset %d: %s", ErrSyntax, p.pos, fmt.Sprintf(format, args...))
}

// near describes the input at the current position for error messages.
func (p *parser) near() string {
	if p.pos >= len(p.src) {
		return "end of input"
	}
	rest := p.src[p.pos:]
	if len(rest) > 12 {
		rest = rest[:12] + "..."
	}
	return strconv.Quote(rest)
}

func (p *parser) space() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r', '\f':
			p.pos++
		default:
			return
		}
	}
}

// eat skips white space and consumes tok if it comes next.
func (p *parser) eat(tok string) bool {
	p.space()
	if strings.HasPrefix(p.src[p.pos:], tok) {
		p.pos += len(tok)
		return true
	}
	return false
}

func (p *parser) expect(tok string) error {
	if !p.eat(tok) {
		return p.errf("want %q, found %s", tok, p.near())
	}
	return nil
}

func (p *parser) state() ([]model.Field, error) {
	p.space()
	if p.pos == len(p.src) {
		return nil, p.errf("empty state")
	}
	conj := strings.HasPrefix(p.src[p.pos:], `/\`)
	var fields []model.Field
	seen := make(map[string]bool)
	for {
		if conj {
			if err := p.expect(`/\`); err != nil {
				return nil, err
			}
		}
		p.space()
		start := p.pos
		name := p.ident()
		if name == "" {
			return nil, p.errf("want a variable name, found %s", p.near())
		}
		if seen[name] {
			p.pos = start
			return nil, p.errf("variable %s assigned twice", name)
		}
		seen[name] = true
		if err := p.expect("="); err != nil {
			return nil, err
		}
		v, err := p.value(0)
		if err != nil {
			return nil, err
		}
		fields = append(fields, model.Field{Name: name, Value: v})
		p.space()
		if p.pos == len(p.src) {
			return fields, nil
		}
		if !conj {
			return nil, p.errf("unexpected %s after the assignment", p.near())
		}
	}
}

// ident consumes a TLA+ identifier (letters, digits, underscores, with at
// least one letter) and returns it, or returns "" and consumes nothing.
func (p *parser) ident() string {
	start, letter := p.pos, false
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' {
			letter = true
		} else if !(c >= '0' && c <= '9' || c == '_') {
			break
		}
		p.pos++
	}
	if !letter {
		p.pos = start
		return ""
	}
	return p.src[start:p.pos]
}

// fieldName consumes a record field name as TLC prints one: letters and
// digits (of any script) and underscores, with at least one letter. It
// returns "" and consumes nothing if there is none.
func (p *parser) fieldName() string {
	start, letter := p.pos, false
	for p.pos < len(p.src) {
		r, n := utf8.DecodeRuneInString(p.src[p.pos:])
		if unicode.IsLetter(r) {
			letter = true
		} else if !unicode.IsDigit(r) && r != '_' {
			break
		}
		p.pos += n
	}
	if !letter {
		p.pos = start
		return ""
	}
	return p.src[start:p.pos]
}

func (p *parser) value(depth int) (model.Value, error) {
	if depth > maxDepth {
		return model.Value{}, p.errf("values nested deeper than %d", maxDepth)
	}
	p.space()
	if p.pos == len(p.src) {
		return model.Value{}, p.errf("want a value, found end of input")
	}
	switch c := p.src[p.pos]; {
	case c == '"':
		return p.str()
	case c == '-' || c >= '0' && c <= '9':
		return p.integer()
	case strings.HasPrefix(p.src[p.pos:], "<<"):
		p.pos += 2
		elems, err := p.list(">>", depth)
		if err != nil {
			return model.Value{}, err
		}
		return model.Seq(elems...), nil
	case c == '{':
		p.pos++
		elems, err := p.list("}", depth)
		if err != nil {
			return model.Value{}, err
		}
		return model.Set(elems...), nil
	case c == '[':
		p.pos++
		return p.record(depth)
	case c == '(':
		p.pos++
		return p.function(depth)
	}
	start := p.pos
	switch id := p.ident(); id {
	case "TRUE":
		return model.Bool(true), nil
	case "FALSE":
		return model.Bool(false), nil
	case "":
		return model.Value{}, p.errf("want a value, found %s", p.near())
	default:
		p.pos = start
		return model.Value{}, fmt.Errorf("%w: offset %d: identifier %s (a TLC model value?)", ErrUnsupported, start, id)
	}
}

func (p *parser) str() (model.Value, error) {
	p.pos++ // opening quote
	var sb strings.Builder
	for {
		if p.pos >= len(p.src) {
			return model.Value{}, p.errf("unterminated string")
		}
		c := p.src[p.pos]
		switch c {
		case '"':
			p.pos++
			s := sb.String()
			if !utf8.ValidString(s) {
				return model.Value{}, p.errf("string is not valid UTF-8")
			}
			return model.Str(s), nil
		case '\\':
			if p.pos+1 >= len(p.src) {
				return model.Value{}, p.errf("unterminated escape")
			}
			var r byte
			switch p.src[p.pos+1] {
			case '"':
				r = '"'
			case '\\':
				r = '\\'
			case 'n':
				r = '\n'
			case 't':
				r = '\t'
			case 'f':
				r = '\f'
			case 'r':
				r = '\r'
			default:
				return model.Value{}, p.errf("bad escape \\%c in string", p.src[p.pos+1])
			}
			sb.WriteByte(r)
			p.pos += 2
		default:
			sb.WriteByte(c)
			p.pos++
		}
	}
}

func (p *parser) integer() (model.Value, error) {
	start := p.pos
	if p.src[p.pos] == '-' {
		p.pos++
	}
	digits := p.pos
	for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		p.pos++
	}
	if p.pos == digits {
		return model.Value{}, p.errf("want digits after '-'")
	}
	i, err := strconv.ParseInt(p.src[start:p.pos], 10, 64)
	if err != nil {
		p.pos = start
		return model.Value{}, p.errf("integer %s out of range", p.src[start:digits+min(len(p.src)-digits, 24)])
	}
	return model.Int(i), nil
}

// list parses comma-separated values up to the closing token.
func (p *parser) list(closing string, depth int) ([]model.Value, error) {
	if p.eat(closing) {
		return nil, nil
	}
	var out []model.Value
	for {
		v, err := p.value(depth + 1)
		if err != nil {
			return nil, err
		}
		out = append(out, v)
		if p.eat(closing) {
			return out, nil
		}
		if err := p.expect(","); err != nil {
			return nil, p.errf("want \",\" or %q, found %s", closing, p.near())
		}
	}
}

func (p *parser) record(depth int) (model.Value, error) {
	if p.eat("]") {
		return model.Record(), nil
	}
	var fields []model.Field
	seen := make(map[string]bool)
	for {
		p.space()
		name := p.fieldName()
		if name == "" {
			return model.Value{}, p.errf("want a field name, found %s", p.near())
		}
		if seen[name] {
			return model.Value{}, p.errf("field %s given twice", name)
		}
		seen[name] = true
		if err := p.expect("|->"); err != nil {
			return model.Value{}, err
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return model.Value{}, err
		}
		fields = append(fields, model.Field{Name: name, Value: v})
		if p.eat("]") {
			return model.Record(fields...), nil
		}
		if !p.eat(",") {
			return model.Value{}, p.errf("want \",\" or \"]\", found %s", p.near())
		}
	}
}

func (p *parser) function(depth int) (model.Value, error) {
	var keys, vals []model.Value
	for {
		k, err := p.value(depth + 1)
		if err != nil {
			return model.Value{}, err
		}
		for _, seen := range keys {
			if seen.Equal(k) {
				return model.Value{}, p.errf("function key %s given twice", k)
			}
		}
		if err := p.expect(":>"); err != nil {
			return model.Value{}, err
		}
		v, err := p.value(depth + 1)
		if err != nil {
			return model.Value{}, err
		}
		keys, vals = append(keys, k), append(vals, v)
		if p.eat(")") {
			f, err := model.Func(keys, vals)
			if err != nil { // cannot happen: keys and vals grow together
				return model.Value{}, p.errf("%v", err)
			}
			return f, nil
		}
		if !p.eat("@@") {
			return model.Value{}, p.errf("want \"@@\" or \")\", found %s", p.near())
		}
	}
}

// FormatState returns a state (a record from variable name to value, as
// [ParseState] returns) as a TLA+ conjunction on one line, each value as
// [model.Value.String] prints it:
// `/\ phase = "Ready" /\ verified = FALSE`. Any other value is printed by
// String alone.
func FormatState(s model.Value) string {
	if s.Kind() != model.KindRecord {
		return s.String()
	}
	var sb strings.Builder
	for i, f := range s.Fields() {
		if i > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(`/\ `)
		sb.WriteString(f.Name)
		sb.WriteString(" = ")
		sb.WriteString(f.Value.String())
	}
	return sb.String()
}
