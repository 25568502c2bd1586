package trace

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"time"
	"unicode/utf8"
)

// DefaultMaxLine is the longest line, in bytes, a [Decoder] accepts unless
// told otherwise.
const DefaultMaxLine = 1 << 20

// Errors a [Decoder] reports, each wrapped in a [*PosError] that names the
// file and line. Test for them with errors.Is.
var (
	// ErrTruncated: the last line has no '\n'; the writer stopped mid-line.
	// A trace that ends so is incomplete, not corrupt.
	ErrTruncated = errors.New("truncated: last line has no newline")
	// ErrEmpty: the input holds no event at all.
	ErrEmpty = errors.New("empty trace: no event")
	// ErrLineTooLong: a line is longer than the decoder's bound.
	ErrLineTooLong = errors.New("line too long")
	// ErrSyntax: a line is not one JSON object.
	ErrSyntax = errors.New("malformed JSON")
	// ErrBinary: a line holds bytes that cannot be JSON text (NUL, invalid
	// UTF-8): the file is not a trace.
	ErrBinary = errors.New("binary data")
	// ErrField: a field is missing, repeated, unknown or of the wrong type.
	ErrField = errors.New("bad event field")
	// ErrVersion: the event's "v" is not a version this package reads.
	ErrVersion = errors.New("unsupported trace format version")
)

// Pos is a position in a trace: a file (or stream) name and a 1-based line.
type Pos struct {
	File string
	Line int
}

// String returns "file:line".
func (p Pos) String() string { return p.File + ":" + strconv.Itoa(p.Line) }

// PosError is an error at a position in a trace. Its text is one line:
// "file:line: what".
type PosError struct {
	Pos Pos
	Err error
}

// Error returns "file:line: " followed by the wrapped error.
func (e *PosError) Error() string { return e.Pos.String() + ": " + e.Err.Error() }

// Unwrap returns the wrapped error.
func (e *PosError) Unwrap() error { return e.Err }

// RawVar is one member of an event's state: the variable's name and its
// value as raw JSON.
type RawVar struct {
	Name  []byte
	Value []byte
}

// Raw is one decoded line whose state values are left as raw JSON, so that
// a checker can convert and cache them as it likes. The byte slices point
// into the decoder's buffer and are valid only until the next call of
// [Decoder.Next]; copy what must outlive it.
type Raw struct {
	Pos Pos
	// Off is the byte offset of the line's first byte in the decoder's
	// input (0 for [ParseEvent]): a reader that can read its input again
	// finds the line there, len(Line) bytes long.
	Off int64
	// Line is the whole line without its newline.
	Line     []byte
	V        int
	Instance []byte
	Seq      uint64
	Action   []byte
	Part     []byte
	Stutter  bool
	// State holds the state's members in the order written.
	State []RawVar
	// Time and Detail are the raw JSON of the optional fields, or nil.
	Time   []byte
	Detail []byte
	// Args is the raw JSON of the event's arguments, a non-empty array, or
	// nil when the event has none (no "args", or "args": []).
	Args []byte
}

// Event decodes r fully into an [Event] (state values as encoding/json
// decodes them, numbers as json.Number).
func (r *Raw) Event() (Event, error) {
	e := Event{V: r.V, Instance: string(r.Instance), Seq: r.Seq, Action: string(r.Action),
		Part: string(r.Part), Stutter: r.Stutter, State: make(map[string]any, len(r.State))}
	for _, m := range r.State {
		v, err := DecodeValue(m.Value)
		if err != nil {
			return Event{}, &PosError{r.Pos, fmt.Errorf("%w: state.%s: %v", ErrField, Printable(string(m.Name)), err)}
		}
		e.State[string(m.Name)] = v
	}
	if r.Args != nil {
		if err := r.eventArgs(&e); err != nil {
			return Event{}, err
		}
	}
	if r.Time != nil && string(r.Time) != "null" {
		if err := json.Unmarshal(r.Time, &e.Time); err != nil {
			return Event{}, &PosError{r.Pos, fmt.Errorf("%w: time: %v", ErrField, err)}
		}
	}
	if r.Detail != nil && string(r.Detail) != "null" {
		d, err := DecodeValue(r.Detail)
		if err != nil {
			return Event{}, &PosError{r.Pos, fmt.Errorf("%w: detail: %v", ErrField, err)}
		}
		m, ok := d.(map[string]any)
		if !ok {
			return Event{}, &PosError{r.Pos, fmt.Errorf("%w: detail is not an object", ErrField)}
		}
		e.Detail = m
	}
	return e, nil
}

// DecodeValue decodes one JSON value with numbers kept as json.Number.
func DecodeValue(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

// Decoder reads a trace: NDJSON, one event a line. It streams: memory is
// bounded by the longest line it accepts, whatever the trace's length.
// Blank lines are skipped. Every error names file:line and fits on one line.
type Decoder struct {
	br      *bufio.Reader
	name    string
	line    int
	max     int
	events  int
	raw     Raw
	scratch []byte // unescaped strings
	long    []byte // a line longer than the read buffer
	off     int64  // bytes read before the current line
	next    int64  // bytes read up to the end of the current line
	done    error
	header  *Header // the last header line read
}

// Header returns the last header line read (see [Header]), if any: the
// spec the events were written against.
func (d *Decoder) Header() (Header, bool) {
	if d.header == nil {
		return Header{}, false
	}
	return *d.header, true
}

// NewDecoder returns a decoder reading r; name is the file name used in
// positions ("-" or "stdin" for a pipe).
func NewDecoder(r io.Reader, name string) *Decoder {
	return NewDecoderSize(r, name, DefaultMaxLine)
}

// NewDecoderSize is [NewDecoder] with a bound on line length in bytes
// (values <= 0 mean [DefaultMaxLine]). A longer line is an error: the
// decoder stops at the bound instead of reading the line into memory.
func NewDecoderSize(r io.Reader, name string, maxLine int) *Decoder {
	if maxLine <= 0 {
		maxLine = DefaultMaxLine
	}
	size := min(maxLine+2, 64<<10) // longer lines are gathered in Decoder.long
	if size < 16 {
		size = 16
	}
	return &Decoder{br: bufio.NewReaderSize(r, size), name: name, max: maxLine}
}

// readLine returns the next line with its '\n', like bufio's ReadSlice,
// gathering a line longer than the buffer in d.long, but never more than
// the bound (plus one buffer): a longer line yields bufio.ErrBufferFull.
func (d *Decoder) readLine() ([]byte, error) {
	line, err := d.br.ReadSlice('\n')
	if err != bufio.ErrBufferFull {
		return line, err
	}
	d.long = append(d.long[:0], line...)
	for len(d.long) <= d.max+2 {
		line, err = d.br.ReadSlice('\n')
		d.long = append(d.long, line...)
		if err != bufio.ErrBufferFull {
			return d.long, err
		}
	}
	return nil, bufio.ErrBufferFull
}

// Pos returns the position of the line last read.
func (d *Decoder) Pos() Pos { return Pos{d.name, d.line} }

func (d *Decoder) fail(err error) error {
	d.done = &PosError{d.Pos(), err}
	return d.done
}

// Next decodes the next event. It returns io.EOF after the last one. A
// final line without '\n' yields an error wrapping [ErrTruncated] with the
// partial line in the returned Raw's Line (and Pos), so the caller can tell
// which instance was cut off; see [PeekInstance]. After any error other
// than io.EOF, Next keeps returning that error.
func (d *Decoder) Next() (*Raw, error) {
	if d.done != nil {
		return nil, d.done
	}
	for {
		line, err := d.readLine()
		d.line++
		d.off = d.next
		d.next += int64(len(line))
		switch {
		case err == bufio.ErrBufferFull || (len(line) > d.max && len(bytes.TrimRight(line, "\r\n")) > d.max):
			return nil, d.fail(fmt.Errorf("%w: more than %d bytes", ErrLineTooLong, d.max))
		case err == io.EOF && len(line) == 0:
			if d.events == 0 {
				return nil, d.fail(ErrEmpty)
			}
			d.done = io.EOF
			return nil, io.EOF
		case err == io.EOF:
			if len(bytes.TrimSpace(line)) == 0 { // trailing blanks after the last newline
				if d.events == 0 {
					return nil, d.fail(ErrEmpty)
				}
				d.done = io.EOF
				return nil, io.EOF
			}
			if err := partialEvent(line); err != nil {
				return nil, d.fail(err) // garbage, not a line cut short
			}
			d.raw = Raw{Pos: d.Pos(), Off: d.off, Line: line}
			return &d.raw, d.fail(fmt.Errorf("%w (%d bytes)", ErrTruncated, len(line)))
		case err != nil:
			return nil, d.fail(fmt.Errorf("read: %w", err))
		}
		line = line[:len(line)-1]
		if n := len(line); n > 0 && line[n-1] == '\r' {
			line = line[:n-1]
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		if bytes.Contains(line, headerKey) { // cheap: most lines are events
			if h, ok, err := ParseHeader(line); ok {
				if err != nil {
					return nil, d.fail(err)
				}
				d.header = new(Header)
				*d.header = h
				continue
			}
		}
		if err := d.parse(line); err != nil {
			return nil, d.fail(err)
		}
		d.events++
		return &d.raw, nil
	}
}

// Decode reads the next event fully decoded; see [Decoder.Next].
func (d *Decoder) Decode() (Event, error) {
	r, err := d.Next()
	if err != nil {
		return Event{}, err
	}
	return r.Event()
}

// PeekInstance returns the "instance" of a possibly partial event line, if
// the line gets that far.
func PeekInstance(line []byte) (string, bool) {
	i := bytes.Index(line, []byte(`"instance"`))
	if i < 0 {
		return "", false
	}
	s := &scanner{b: line, i: i + len(`"instance"`)}
	s.ws()
	if !s.eat(':') {
		return "", false
	}
	s.ws()
	raw, esc, err := s.str()
	if err != nil {
		return "", false
	}
	if esc {
		var out string
		if json.Unmarshal(line[s.i-len(raw)-2:s.i], &out) != nil {
			return "", false
		}
		return out, true
	}
	return string(raw), true
}

// Field bits, for missing and repeated fields.
const (
	fV = 1 << iota
	fInstance
	fSeq
	fAction
	fState
	fPart
	fStutter
	fTime
	fDetail
	fArgs
	fRequired = fV | fInstance | fSeq | fAction | fState
)

var fieldNames = []string{"v", "instance", "seq", "action", "state", "part", "stutter", "time", "detail", "args"}

func (d *Decoder) parse(line []byte) error {
	s := &scanner{b: line}
	r := &d.raw
	// Reset field by field: assigning a whole Raw{} costs more than the
	// rest of the parse.
	r.Pos.File, r.Pos.Line, r.Off, r.Line = d.name, d.line, d.off, line
	r.V, r.Instance, r.Seq, r.Action, r.Part, r.Stutter = 0, nil, 0, nil, nil, false
	r.State, r.Time, r.Detail, r.Args = r.State[:0], nil, nil, nil
	d.scratch = d.scratch[:0]
	s.ws()
	if !s.eat('{') {
		return s.syntax("want a JSON object")
	}
	seen := 0
	s.ws()
	if s.eat('}') {
		return missing(seen)
	}
	for {
		s.ws()
		key, esc, err := s.str()
		if err != nil {
			return err
		}
		if esc {
			key = d.unescape(line, key)
		}
		s.ws()
		if !s.eat(':') {
			return s.syntax("want ':'")
		}
		s.ws()
		bit := fieldBit(key)
		if bit == 0 {
			return fmt.Errorf("%w: unknown field %q", ErrField, key)
		}
		if seen&bit != 0 {
			return fmt.Errorf("%w: field %q repeated", ErrField, key)
		}
		seen |= bit
		switch bit {
		case fV:
			n, err := s.uint("v")
			if err != nil {
				return err
			}
			if n != Version {
				return fmt.Errorf("%w: v is %d, this reader reads %d", ErrVersion, n, Version)
			}
			r.V = int(n)
		case fSeq:
			if r.Seq, err = s.uint("seq"); err != nil {
				return err
			}
		case fInstance, fAction, fPart:
			v, err := d.strField(s, line, fieldNames[bitIndex(bit)])
			if err != nil {
				return err
			}
			switch bit {
			case fInstance:
				if len(v) == 0 {
					return fmt.Errorf("%w: instance is empty", ErrField)
				}
				r.Instance = v
			case fAction:
				if len(v) == 0 {
					return fmt.Errorf("%w: action is empty", ErrField)
				}
				r.Action = v
			case fPart:
				switch string(v) {
				case PartBegin, PartStep, PartEnd:
				default:
					return fmt.Errorf("%w: part is %q, want %q, %q or %q", ErrField, v, PartBegin, PartStep, PartEnd)
				}
				r.Part = v
			}
		case fStutter:
			switch {
			case s.lit("true"):
				r.Stutter = true
			case s.lit("false"):
			default:
				if s.i < len(s.b) && (s.b[s.i] == '"' || s.b[s.i] == '-' || s.b[s.i] == '{' || s.b[s.i] == '[' || isDigit(s.b[s.i]) || s.b[s.i] == 'n') {
					return fmt.Errorf("%w: stutter is not a boolean", ErrField)
				}
				return s.syntax("want true or false")
			}
		case fState:
			if err := d.state(s, line); err != nil {
				return err
			}
		case fTime, fDetail, fArgs:
			if err := d.optional(bit, s, line); err != nil {
				return err
			}
		}
		s.ws()
		if s.eat(',') {
			continue
		}
		if s.eat('}') {
			break
		}
		return s.syntax("want ',' or '}'")
	}
	s.ws()
	if s.i != len(s.b) {
		return s.syntax("text after the object")
	}
	if seen&fRequired != fRequired {
		return missing(seen)
	}
	if r.Stutter && (r.Part != nil || r.Args != nil) {
		return stutterWith(r)
	}
	return nil
}

// stutterWith is the error for a stutter event with a part or arguments.
func stutterWith(r *Raw) error {
	if r.Part != nil {
		return fmt.Errorf("%w: a stutter event cannot be part of a composite step", ErrField)
	}
	return fmt.Errorf("%w: a stutter event takes no arguments", ErrField)
}

func fieldBit(key []byte) int {
	switch string(key) {
	case "v":
		return fV
	case "instance":
		return fInstance
	case "seq":
		return fSeq
	case "action":
		return fAction
	case "state":
		return fState
	case "part":
		return fPart
	case "stutter":
		return fStutter
	case "time":
		return fTime
	case "detail":
		return fDetail
	case "args":
		return fArgs
	}
	return 0
}

func bitIndex(bit int) int {
	i := 0
	for bit > 1 {
		bit >>= 1
		i++
	}
	return i
}

func missing(seen int) error {
	var names []string
	for i, n := range fieldNames {
		if fRequired&(1<<i) != 0 && seen&(1<<i) == 0 {
			names = append(names, strconv.Quote(n))
		}
	}
	return fmt.Errorf("%w: missing %s", ErrField, joinComma(names))
}

func joinComma(s []string) string {
	out := ""
	for i, x := range s {
		if i > 0 {
			out += ", "
		}
		out += x
	}
	return out
}

func (d *Decoder) strField(s *scanner, line []byte, name string) ([]byte, error) {
	if s.i < len(s.b) && s.b[s.i] != '"' {
		start := s.i
		if err := s.value(0); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %s is not a string: %s", ErrField, name, clip(line[start:s.i]))
	}
	v, esc, err := s.str()
	if err != nil {
		return nil, err
	}
	if esc {
		v = d.unescape(line, v)
	}
	return v, nil
}

// unescape decodes a JSON string whose content (between the quotes) is
// raw; it was validated by the scanner.
func (d *Decoder) unescape(line, raw []byte) []byte {
	var out string
	_ = json.Unmarshal(quoted(line, raw), &out) // validated: cannot fail
	start := len(d.scratch)
	d.scratch = append(d.scratch, out...)
	return d.scratch[start:len(d.scratch):len(d.scratch)]
}

// quoted returns raw with its surrounding quotes: raw is a sub-slice of line.
func quoted(line, raw []byte) []byte {
	off := cap(line) - cap(raw) // raw's offset within line
	return line[off-1 : off+len(raw)+1]
}

func (d *Decoder) state(s *scanner, line []byte) error {
	if s.i < len(s.b) && s.b[s.i] != '{' {
		start := s.i
		if err := s.value(0); err != nil {
			return err
		}
		return fmt.Errorf("%w: state is not an object: %s", ErrField, clip(line[start:s.i]))
	}
	s.i++
	s.ws()
	if s.eat('}') {
		return nil
	}
	r := &d.raw
	for {
		s.ws()
		name, esc, err := s.str()
		if err != nil {
			return err
		}
		if esc {
			name = d.unescape(line, name)
		}
		for _, m := range r.State {
			if bytes.Equal(m.Name, name) {
				return fmt.Errorf("%w: state.%s repeated", ErrField, Printable(string(name)))
			}
		}
		s.ws()
		if !s.eat(':') {
			return s.syntax("want ':'")
		}
		s.ws()
		start := s.i
		if err := s.value(0); err != nil {
			return err
		}
		r.State = append(r.State, RawVar{name, line[start:s.i]})
		s.ws()
		if s.eat(',') {
			continue
		}
		if s.eat('}') {
			return nil
		}
		return s.syntax("want ',' or '}'")
	}
}

// Printable returns s as it is if it is printable on one line, else
// quoted: names from a trace go into one-line error messages.
func Printable(s string) string {
	for _, r := range s {
		if r < 0x20 || r == 0x7f || r == utf8.RuneError || r == 0x2028 || r == 0x2029 || r == 0x85 {
			return strconv.Quote(s)
		}
	}
	return s
}

// clip shortens b for an error message.
func clip(b []byte) string {
	if len(b) > 40 {
		return string(b[:40]) + "..."
	}
	return string(b)
}

// scanner is a validating JSON scanner over one line.
type scanner struct {
	b []byte
	i int
}

const maxDepth = 256

// partialEvent reports whether a last line without '\n' can be the start
// of an event that a crashed writer cut short: text that opens a JSON
// object. Binary bytes or another opening are garbage, reported as such
// rather than as truncation. A multi-byte character cut at the very end is
// fine: a crash can split one.
func partialEvent(line []byte) error {
	t := bytes.TrimLeft(line, " \t\r")
	for i := 0; i < len(t); {
		c := t[i]
		if c == 0 || c < 0x20 && c != '\t' && c != '\r' {
			return fmt.Errorf("%w at column %d: byte %#02x", ErrBinary, len(line)-len(t)+i+1, c)
		}
		if c < 0x80 {
			i++
			continue
		}
		r, n := utf8.DecodeRune(t[i:])
		if r == utf8.RuneError && n <= 1 && utf8.FullRune(t[i:]) {
			return fmt.Errorf("%w at column %d: invalid UTF-8", ErrBinary, len(line)-len(t)+i+1)
		}
		i += max(n, 1)
	}
	if len(t) > 0 && t[0] != '{' {
		return fmt.Errorf("%w at column %d: unexpected %q (want an event object)", ErrSyntax, len(line)-len(t)+1, t[0])
	}
	return nil
}

func (s *scanner) syntax(want string) error {
	if s.i >= len(s.b) {
		return fmt.Errorf("%w: unexpected end of line at column %d (%s)", ErrSyntax, s.i+1, want)
	}
	c := s.b[s.i]
	if c == 0 || c >= 0x80 && !utf8.FullRune(s.b[s.i:]) || c < 0x20 && c != '\t' {
		return fmt.Errorf("%w at column %d: byte %#02x", ErrBinary, s.i+1, c)
	}
	if c >= 0x80 {
		r, _ := utf8.DecodeRune(s.b[s.i:])
		if r == utf8.RuneError {
			return fmt.Errorf("%w at column %d: invalid UTF-8", ErrBinary, s.i+1)
		}
		return fmt.Errorf("%w at column %d: unexpected %q (%s)", ErrSyntax, s.i+1, r, want)
	}
	return fmt.Errorf("%w at column %d: unexpected %q (%s)", ErrSyntax, s.i+1, c, want)
}

func (s *scanner) ws() {
	for s.i < len(s.b) {
		switch s.b[s.i] {
		case ' ', '\t', '\r', '\n':
			s.i++
		default:
			return
		}
	}
}

func (s *scanner) eat(c byte) bool {
	if s.i < len(s.b) && s.b[s.i] == c {
		s.i++
		return true
	}
	return false
}

func (s *scanner) lit(w string) bool {
	if len(s.b)-s.i >= len(w) && string(s.b[s.i:s.i+len(w)]) == w {
		s.i += len(w)
		return true
	}
	return false
}

// str scans a string and returns its content between the quotes, and
// whether it holds escapes.
func (s *scanner) str() ([]byte, bool, error) {
	if !s.eat('"') {
		return nil, false, s.syntax("want a string")
	}
	start := s.i
	esc := false
	for s.i < len(s.b) {
		c := s.b[s.i]
		if plain[c] {
			s.i++
			continue
		}
		switch {
		case c == '"':
			s.i++
			return s.b[start : s.i-1], esc, nil
		case c == '\\':
			esc = true
			s.i++
			if s.i >= len(s.b) {
				return nil, false, s.syntax("unterminated escape")
			}
			switch s.b[s.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				s.i++
			case 'u':
				if len(s.b)-s.i < 5 {
					return nil, false, s.syntax("short \\u escape")
				}
				for k := 1; k <= 4; k++ {
					if !isHex(s.b[s.i+k]) {
						s.i += k
						return nil, false, s.syntax("bad \\u escape")
					}
				}
				s.i += 5
			default:
				return nil, false, s.syntax("bad escape")
			}
		case c < 0x20:
			return nil, false, s.syntax("control character in string")
		case c < 0x80:
			s.i++
		default:
			r, n := utf8.DecodeRune(s.b[s.i:])
			if r == utf8.RuneError && n <= 1 {
				return nil, false, fmt.Errorf("%w at column %d: invalid UTF-8", ErrBinary, s.i+1)
			}
			s.i += n
		}
	}
	return nil, false, s.syntax("unterminated string")
}

// plain marks the bytes a JSON string holds as themselves: printable
// ASCII other than '"' and '\\'.
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x80; c++ {
		t[c] = c != '"' && c != '\\'
	}
	return t
}()

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// number scans a JSON number.
func (s *scanner) number() error {
	s.eat('-')
	switch {
	case s.eat('0'):
	case s.i < len(s.b) && '1' <= s.b[s.i] && s.b[s.i] <= '9':
		for s.i < len(s.b) && isDigit(s.b[s.i]) {
			s.i++
		}
	default:
		return s.syntax("want a digit")
	}
	if s.eat('.') {
		if s.i >= len(s.b) || !isDigit(s.b[s.i]) {
			return s.syntax("want a digit")
		}
		for s.i < len(s.b) && isDigit(s.b[s.i]) {
			s.i++
		}
	}
	if s.eat('e') || s.eat('E') {
		if !s.eat('+') {
			s.eat('-')
		}
		if s.i >= len(s.b) || !isDigit(s.b[s.i]) {
			return s.syntax("want a digit")
		}
		for s.i < len(s.b) && isDigit(s.b[s.i]) {
			s.i++
		}
	}
	return nil
}

// uint scans a non-negative integer field.
func (s *scanner) uint(name string) (uint64, error) {
	start := s.i
	if s.i < len(s.b) && (isDigit(s.b[s.i]) || s.b[s.i] == '-') {
		if err := s.number(); err != nil {
			return 0, err
		}
		if d := s.b[start:s.i]; len(d) <= 19 && d[0] != '-' && (d[0] != '0' || len(d) == 1) {
			var n uint64
			ok := true
			for _, c := range d {
				if !isDigit(c) {
					ok = false
					break
				}
				n = n*10 + uint64(c-'0')
			}
			if ok {
				return n, nil
			}
		}
		n, err := strconv.ParseUint(string(s.b[start:s.i]), 10, 64)
		if err != nil {
			return 0, fmt.Errorf("%w: %s is not a non-negative integer: %s", ErrField, name, clip(s.b[start:s.i]))
		}
		return n, nil
	}
	if err := s.value(0); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("%w: %s is not a number: %s", ErrField, name, clip(s.b[start:s.i]))
}

// value scans any JSON value.
func (s *scanner) value(depth int) error {
	if depth > maxDepth {
		return fmt.Errorf("%w at column %d: nested deeper than %d", ErrSyntax, s.i+1, maxDepth)
	}
	if s.i >= len(s.b) {
		return s.syntax("want a value")
	}
	switch c := s.b[s.i]; {
	case c == '"':
		_, _, err := s.str()
		return err
	case c == '-' || isDigit(c):
		return s.number()
	case c == '{':
		s.i++
		s.ws()
		if s.eat('}') {
			return nil
		}
		for {
			s.ws()
			if _, _, err := s.str(); err != nil {
				return err
			}
			s.ws()
			if !s.eat(':') {
				return s.syntax("want ':'")
			}
			s.ws()
			if err := s.value(depth + 1); err != nil {
				return err
			}
			s.ws()
			if s.eat(',') {
				continue
			}
			if s.eat('}') {
				return nil
			}
			return s.syntax("want ',' or '}'")
		}
	case c == '[':
		s.i++
		s.ws()
		if s.eat(']') {
			return nil
		}
		for {
			s.ws()
			if err := s.value(depth + 1); err != nil {
				return err
			}
			s.ws()
			if s.eat(',') {
				continue
			}
			if s.eat(']') {
				return nil
			}
			return s.syntax("want ',' or ']'")
		}
	case s.lit("true"), s.lit("false"), s.lit("null"):
		return nil
	}
	return s.syntax("want a value")
}

// ParseEvent decodes one event line (without its newline) at pos, as
// [Decoder.Next] would. The returned Raw points into line.
func ParseEvent(line []byte, pos Pos) (*Raw, error) {
	d := &Decoder{name: pos.File, line: pos.Line, max: DefaultMaxLine}
	if err := d.parse(line); err != nil {
		return nil, &PosError{pos, err}
	}
	return &d.raw, nil
}

// eventArgs decodes r's arguments into e.Args.
func (r *Raw) eventArgs(e *Event) error {
	a, err := DecodeValue(r.Args)
	if err != nil {
		return &PosError{r.Pos, fmt.Errorf("%w: args: %v", ErrField, err)}
	}
	e.Args, _ = a.([]any) // the decoder let only an array through
	return nil
}

// optional scans one of the optional fields few events carry, bit:
// "time" (an RFC 3339 string or null), "detail" (an object or null) or
// "args" (an array, kept only when it is not empty). It is out of parse's
// way: the code every event runs stays small.
func (d *Decoder) optional(bit int, s *scanner, line []byte) error {
	r := &d.raw
	start := s.i
	if err := s.value(0); err != nil {
		return err
	}
	raw := line[start:s.i]
	switch bit {
	case fTime:
		r.Time = raw
		if raw[0] != '"' && string(raw) != "null" {
			return fmt.Errorf("%w: time is not a string", ErrField)
		}
		if raw[0] == '"' {
			var t time.Time
			if err := t.UnmarshalJSON(raw); err != nil {
				return fmt.Errorf("%w: time is not RFC 3339: %s", ErrField, raw)
			}
		}
	case fDetail:
		r.Detail = raw
		if raw[0] != '{' && string(raw) != "null" {
			return fmt.Errorf("%w: detail is not an object", ErrField)
		}
	case fArgs:
		if raw[0] != '[' {
			return fmt.Errorf("%w: args is not an array: %s", ErrField, clip(raw))
		}
		if len(bytes.TrimSpace(raw[1:len(raw)-1])) > 0 {
			r.Args = raw
		}
	}
	return nil
}
