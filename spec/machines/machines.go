// Package machines holds the source texts of the per-machine specs of seed
// 001 (spec/machines: M1 Connection, M2 Turn, M3 Response, M4 Compaction,
// M5 TTS, each a TLA+ module and its TLC configuration), so that programs
// built from this module can name the exact version they check against, as
// package spec does for the bundled specs. The mutants under mutants/ are
// not embedded: they exist to be run by formal-verification/run.sh.
package machines

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
)

//go:embed *.tla *.cfg
var files embed.FS

// Files returns the named machine's spec files, e.g. Files("TTS") is
// TTS.tla and TTS.cfg, in the order their hash concatenates them.
func Files(module string) []string { return []string{module + ".tla", module + ".cfg"} }

// SHA256 returns the lowercase hex SHA-256 of the named files of this
// directory concatenated in order (`cat TTS.tla TTS.cfg | sha256sum`).
func SHA256(names ...string) (string, error) {
	h := sha256.New()
	for _, n := range names {
		b, err := files.ReadFile(n)
		if err != nil {
			return "", fmt.Errorf("spec/machines: %s is not one of the machine specs' files: %w", n, err)
		}
		h.Write(b)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
