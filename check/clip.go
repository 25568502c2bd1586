package check

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// maxShown is the longest instance id or value a text report shows
// whole; a longer one is clipped to its start and the count of the bytes
// cut. JSON reports keep everything whole.
const maxShown = 200

// clipID returns s, or, if it is longer than maxShown bytes, its start
// and how much was cut: for an instance id, an action name or a value in
// a text report.
func clipID(s string) string {
	if len(s) <= maxShown {
		return s
	}
	n := cut(s)
	return s[:n] + "... (" + strconv.Itoa(len(s)-n) + " more bytes)"
}

// cut returns where to cut s, longer than maxShown: at most maxShown
// bytes, whole characters.
func cut(s string) int {
	n := maxShown
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return n
}

// clipValue is clipID for a value as JSON or TLA+ writes it: a string's
// quotes are kept, and the count is of the bytes cut between them.
func clipValue(s string) string {
	if len(s) <= maxShown+2 || s[0] != '"' || s[len(s)-1] != '"' {
		return clipID(s)
	}
	in := s[1 : len(s)-1]
	n := cut(in)
	if n > 0 && in[n-1] == '\\' { // not inside an escape
		n--
	}
	return `"` + in[:n] + `..." (` + strconv.Itoa(len(in)-n) + " more bytes)"
}

// where returns "file:line", or "file:doc:line" for a line of the second
// or a later document of an ITF stream (docs/itf.md): line is then still
// the line of the whole input.
func where(file string, doc, line int) string {
	if doc > 1 {
		return fmt.Sprintf("%s:%d:%d", file, doc, line)
	}
	return file + ":" + strconv.Itoa(line)
}

// clipEvent returns an event line for a text report: each member name,
// top-level value, and value of its state and detail objects longer than
// maxShown is clipped.
func clipEvent(line string) string {
	if len(line) <= maxShown {
		return line
	}
	var b strings.Builder
	clipJSON(&b, line, 2)
	return b.String()
}

// clipJSON writes the JSON text s to b: an object's member names and
// values, looked into depth levels deep, each clipped if it is longer
// than maxShown; anything else clipped as a whole.
func clipJSON(b *strings.Builder, s string, depth int) {
	if depth == 0 || len(s) == 0 || s[0] != '{' {
		b.WriteString(clipValue(s))
		return
	}
	b.WriteByte('{')
	for i := 1; i < len(s); {
		switch c := s[i]; c {
		case ' ', '\t', '\r', '\n', ',', ':', '}':
			b.WriteByte(c)
			i++
		default:
			end := skipJSON(s, i)
			clipJSON(b, s[i:end], depth-1)
			i = end
		}
	}
}

// skipJSON returns the offset just after the JSON value that starts at
// s[i] (in well-formed JSON; in anything else, somewhere after i).
func skipJSON(s string, i int) int {
	depth := 0
	for start := i; i < len(s); i++ {
		switch s[i] {
		case '"':
			for i++; i < len(s) && s[i] != '"'; i++ {
				if s[i] == '\\' {
					i++
				}
			}
			if depth == 0 {
				return min(i+1, len(s))
			}
		case '{', '[':
			depth++
		case '}', ']':
			if depth == 0 { // the end of a number or literal
				return max(i, start+1)
			}
			if depth--; depth == 0 {
				return i + 1
			}
		case ',', ' ', '\t', '\r', '\n', ':':
			if depth == 0 {
				return max(i, start+1)
			}
		}
	}
	return len(s)
}

// clipWhy clips the values in a candidate's why line for a text report:
// "... differs in x: spec has V, event has W" (see differs).
func clipWhy(w string) string {
	if len(w) <= maxShown {
		return w
	}
	i := strings.Index(w, specHas)
	if i < 0 {
		return clipID(w)
	}
	rest := w[i+len(specHas):]
	j := strings.Index(rest, eventHas) // the spec's value comes first
	if j < 0 {
		return clipID(w)
	}
	return w[:i+len(specHas)] + clipValue(rest[:j]) + eventHas + clipValue(rest[j+len(eventHas):])
}

// The words around the values in a why line (differs).
const (
	specHas  = ": spec has "
	eventHas = ", event has "
)

// clipDiffLine clips the value in a line of a diff for a text report:
// "- x = V", "+ x = V", "  x = V" or "  x = V  (not in the event)" (see
// diff); any other line as a whole.
func clipDiffLine(l string) string {
	if len(l) <= maxShown {
		return l
	}
	i := strings.Index(l, " = ")
	if i < 0 || !(strings.HasPrefix(l, "- ") || strings.HasPrefix(l, "+ ") || strings.HasPrefix(l, "  ")) {
		return clipID(l)
	}
	v, note := l[i+3:], ""
	if strings.HasPrefix(l, "  ") && strings.HasSuffix(v, notInEvent) {
		v, note = v[:len(v)-len(notInEvent)], notInEvent
	}
	return l[:i+3] + clipValue(v) + note
}

// notInEvent marks a variable a diff shows that the event does not carry.
const notInEvent = "  (not in the event)"
