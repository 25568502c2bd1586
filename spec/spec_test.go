package spec_test

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"testing"

	"github.com/tracecheck/tracecheck/spec"
)

// The hash is the files' bytes concatenated, as `cat A B | sha256sum`
// prints it, computed from the files on disk.
func TestSHA256(t *testing.T) {
	for _, names := range [][]string{spec.ProgramFiles, spec.SessionFiles} {
		h := sha256.New()
		for _, n := range names {
			b, err := os.ReadFile(n)
			if err != nil {
				t.Fatal(err)
			}
			h.Write(b)
		}
		got, err := spec.SHA256(names...)
		if err != nil || got != hex.EncodeToString(h.Sum(nil)) {
			t.Errorf("SHA256(%v) = %s, %v; want %x", names, got, err, h.Sum(nil))
		}
	}
	if _, err := spec.SHA256("TraceProgram.tla"); err == nil {
		t.Error("a file that is not embedded hashed")
	}
}
