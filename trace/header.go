package trace

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
)

// Header is the optional line that says what a trace is: the spec its
// events were written against, that spec's content hash, and who wrote it.
// It is a JSON object with a "tracecheck" member (the header format, 1) in
// place of an event's "v":
//
//	{"tracecheck":1,"spec":"session","spec_sha256":"9f3c…","emitter":"impl/session"}
//
// A writer puts it first; streams concatenated from several writers may
// carry one per writer. A reader that does not know headers sees an input
// error on that line: headers are new in this revision of the format, and
// traces without one read as before.
type Header struct {
	// Format is the header format, [HeaderFormat].
	Format int `json:"tracecheck"`
	// Spec names the spec, as it is registered with the checker (e.g.
	// "program", "session").
	Spec string `json:"spec"`
	// SpecSHA256 is the lowercase hex SHA-256 of the spec's source files,
	// concatenated in the order the spec registers them (for
	// spec/Program.tla and spec/Program.cfg: `cat spec/Program.tla
	// spec/Program.cfg | sha256sum`). Optional.
	SpecSHA256 string `json:"spec_sha256,omitempty"`
	// Emitter names what wrote the trace (free text). Optional.
	Emitter string `json:"emitter,omitempty"`
}

// HeaderFormat is the header format this package reads and writes.
const HeaderFormat = 1

// ErrHeader reports a malformed header line.
var ErrHeader = errors.New("bad trace header")

// headerKey is the member that marks a header line.
var headerKey = []byte(`"tracecheck"`)

// ParseHeader decodes line if it is a header. ok is false for a line that
// is not one (an event); err is set for a line that is a header but a bad
// one: unknown members, a member given twice, another format, an empty
// spec, a hash that is not 64 lowercase hex digits.
func ParseHeader(line []byte) (h Header, ok bool, err error) {
	if !bytes.Contains(line, headerKey) {
		return h, false, nil
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(line, &members) != nil {
		return h, false, nil
	}
	if _, isHeader := members["tracecheck"]; !isHeader {
		return h, false, nil
	}
	if err := checkNoRepeat(line); err != nil {
		return h, true, fmt.Errorf("%w: %w", ErrHeader, err)
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&h); err != nil {
		return h, true, fmt.Errorf("%w: %w", ErrHeader, err)
	}
	switch {
	case h.Format != HeaderFormat:
		return h, true, fmt.Errorf("%w: format %d, this reader reads %d", ErrHeader, h.Format, HeaderFormat)
	case h.Spec == "":
		return h, true, fmt.Errorf("%w: no spec named", ErrHeader)
	case h.SpecSHA256 != "" && !isHexSHA256(h.SpecSHA256):
		return h, true, fmt.Errorf("%w: spec_sha256 %q is not 64 lowercase hex digits", ErrHeader, Printable(h.SpecSHA256))
	}
	return h, true, nil
}

func isHexSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && bytes.Equal([]byte(s), bytes.ToLower([]byte(s)))
}

// checkNoRepeat refuses an object with a top-level member given twice.
func checkNoRepeat(line []byte) error {
	dec := json.NewDecoder(bytes.NewReader(line))
	if _, err := dec.Token(); err != nil { // {
		return err
	}
	seen := map[string]bool{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return err
		}
		k, _ := t.(string)
		if seen[k] {
			return fmt.Errorf("member %q repeated", k)
		}
		seen[k] = true
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return err
		}
	}
	return nil
}

// WriteHeader writes h as one line (Format set to [HeaderFormat]); call it
// before the first event.
func (w *Writer) WriteHeader(h Header) error {
	h.Format = HeaderFormat
	line, err := json.Marshal(h)
	if err != nil {
		return fmt.Errorf("trace: encode header: %w", err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(append(w.buf[:0], line...), '\n')
	if _, err := w.w.Write(w.buf); err != nil {
		return fmt.Errorf("trace: write header: %w", err)
	}
	if s, ok := w.w.(Syncer); ok && w.SyncEach {
		if err := s.Sync(); err != nil {
			return fmt.Errorf("trace: sync header: %w", err)
		}
	}
	return nil
}
