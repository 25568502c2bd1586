package checkpoint

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// maxNameBytes is the longest checkpoint name, and the longest name of a
// file or directory in a checkpoint (the common filesystem limit).
const maxNameBytes = 255

// ValidateName checks a checkpoint name (and a run ID): one path element
// that is valid UTF-8, is not "." or "..", does not start with ".", holds
// no "/", no control character and no format character (bidi overrides,
// zero-width joiners: characters that make a name display as another), and
// is at most 200 bytes.
func ValidateName(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty", ErrBadName)
	case name == "." || name == "..":
		return fmt.Errorf("%w: %q", ErrBadName, name)
	case strings.Contains(name, "/"):
		return fmt.Errorf("%w: %q contains \"/\"", ErrBadName, name)
	case strings.HasPrefix(name, "."):
		return fmt.Errorf("%w: %q starts with \".\" (reserved for the publisher)", ErrBadName, name)
	case len(name) > 200:
		return fmt.Errorf("%w: %d bytes, at most 200", ErrBadName, len(name))
	}
	if err := checkChars(name); err != nil {
		return fmt.Errorf("%w: %q %w", ErrBadName, name, err)
	}
	return nil
}

// checkChars refuses a name that is not valid UTF-8 or holds a control,
// format, line- or paragraph-separator character.
func checkChars(name string) error {
	if !utf8.ValidString(name) {
		return fmt.Errorf("is not valid UTF-8")
	}
	for _, r := range name {
		switch {
		case unicode.IsControl(r):
			return fmt.Errorf("contains the control character %U", r)
		case unicode.Is(unicode.Cf, r):
			return fmt.Errorf("contains the format character %U (bidi control, zero-width character)", r)
		case r == '\u2028' || r == '\u2029':
			return fmt.Errorf("contains the separator %U", r)
		}
	}
	return nil
}

// checkComponent checks the name of a file or directory of a checkpoint:
// what checkChars accepts, not "." or "..", at most 255 bytes. (It may
// start with "."; only checkpoint names may not.)
func checkComponent(name string) error {
	switch {
	case name == "" || name == "." || name == "..":
		return fmt.Errorf("%w: name %q", ErrUnsafePath, name)
	case len(name) > maxNameBytes:
		return fmt.Errorf("%w: a name of %d bytes (at most %d)", ErrUnsafePath, len(name), maxNameBytes)
	}
	if err := checkChars(name); err != nil {
		return fmt.Errorf("%w: name %q %w", ErrUnsafePath, name, err)
	}
	return nil
}
