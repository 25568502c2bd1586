package cli

import (
	"fmt"
	"io"
	"unicode/utf8"
)

// safeWriter writes what the spec commands print with every control
// character but newline and tab shown as a \uXXXX escape: a trace is
// hostile input, and its strings (printed raw in TLA+ values, as TLC prints
// them) must not move the cursor, clear the screen or reorder the text of a
// terminal. The same escapes keep JSON output valid and its values equal:
// JSON already escapes C0 controls, and \uXXXX is JSON's escape for the
// others.
type safeWriter struct {
	w     io.Writer
	carry []byte // the start of a rune split between writes
	buf   []byte
}

func safe(w io.Writer) io.Writer { return &safeWriter{w: w} }

// unsafeRune reports whether r must be escaped: C0 and C1 controls (but
// \n and \t), DEL, the line and paragraph separators, and the bidi
// controls that make text display in another order.
func unsafeRune(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r <= 0x9f):
		return true
	case r == 0x2028 || r == 0x2029 || (r >= 0x202a && r <= 0x202e) || (r >= 0x2066 && r <= 0x2069) || r == 0x200e || r == 0x200f || r == 0x061c:
		return true
	}
	return false
}

func (s *safeWriter) Write(p []byte) (int, error) {
	n := len(p)
	if len(s.carry) > 0 {
		p = append(s.carry, p...)
		s.carry = nil
	}
	// Fast path: nothing to escape, no rune cut at the end.
	clean := true
	for _, c := range p {
		if c < 0x20 && c != '\n' && c != '\t' || c >= 0x7f {
			clean = false
			break
		}
	}
	if clean {
		_, err := s.w.Write(p)
		return n, err
	}
	s.buf = s.buf[:0]
	for i := 0; i < len(p); {
		r, size := utf8.DecodeRune(p[i:])
		if r == utf8.RuneError && size <= 1 && !utf8.FullRune(p[i:]) {
			s.carry = append(s.carry[:0], p[i:]...) // completed by the next write
			break
		}
		if unsafeRune(r) {
			s.buf = fmt.Appendf(s.buf, `\u%04x`, r)
		} else {
			s.buf = append(s.buf, p[i:i+size]...)
		}
		i += size
	}
	_, err := s.w.Write(s.buf)
	return n, err
}
