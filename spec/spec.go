// Package spec holds the source texts of the bundled specs (seed 000's
// Program.tla and seed 001's session.fizz), so that programs built from
// this module know the exact spec they implement or check: trace headers
// carry its hash (docs/trace-format.md), and the checker warns about a
// trace written against another version.
package spec

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
)

//go:embed Program.tla Program.cfg session.fizz
var files embed.FS

// The bundled specs' files, in the order their hash concatenates them.
var (
	// ProgramFiles are spec/Program.tla and its TLC configuration.
	ProgramFiles = []string{"Program.tla", "Program.cfg"}
	// SessionFiles is spec/session.fizz.
	SessionFiles = []string{"session.fizz"}
)

// SHA256 returns the lowercase hex SHA-256 of the named files of this
// directory concatenated in order (`cat Program.tla Program.cfg |
// sha256sum`).
func SHA256(names ...string) (string, error) {
	h := sha256.New()
	for _, n := range names {
		b, err := files.ReadFile(n)
		if err != nil {
			return "", fmt.Errorf("spec: %s is not one of the bundled specs' files: %w", n, err)
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
