package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// failingWriter fails every write.
type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

// A capped log whose file cannot be written reports the first failure at
// Close (the publisher's "log not written" warning), even when the stream
// fits in the head.
func TestCappedLogWriteError(t *testing.T) {
	c := newCappedLog(failingWriter{syscall.ENOSPC}, 64, 64)
	for _, p := range []string{"one\n", "two\n"} {
		if n, err := c.Write([]byte(p)); n != len(p) || err != nil {
			t.Fatalf("Write(%q) = %d, %v; want the whole write accepted", p, n, err)
		}
	}
	if err := c.Close(); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("Close = %v, want ENOSPC", err)
	}
}

// Every outcome has its name; one past the last prints as a number.
func TestOutcomeNames(t *testing.T) {
	for i, want := range outcomeNames {
		if got := Outcome(i).String(); got != want {
			t.Errorf("Outcome(%d) = %q, want %q", i, got, want)
		}
	}
	n := len(outcomeNames)
	if got, want := Outcome(n).String(), fmt.Sprintf("Outcome(%d)", n); got != want {
		t.Errorf("Outcome(%d) = %q, want %q", n, got, want)
	}
}

// RemoveAll descends maxRemoveDepth levels below the name it removes, and
// refuses a directory one level deeper with ErrTooLarge.
func TestRemoveAllDepthBound(t *testing.T) {
	for _, levels := range []int{maxRemoveDepth - 1, maxRemoveDepth} {
		dir := t.TempDir()
		// top is at depth 0; its levels nested directories below it.
		if err := os.MkdirAll(filepath.Join(dir, "top", strings.Repeat("d/", levels)), 0o755); err != nil {
			t.Fatal(err)
		}
		root, err := OSFS{}.OpenRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		err = root.RemoveAll("top")
		if closeErr := root.Close(); closeErr != nil {
			t.Fatal(closeErr)
		}
		if deep := levels >= maxRemoveDepth; deep != errors.Is(err, ErrTooLarge) || (!deep && err != nil) {
			t.Errorf("%d levels below top: %v", levels, err)
		}
	}
}
