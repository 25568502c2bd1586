package checkpoint_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

// ReadDir lists a directory of exactly max entries, refuses one more with
// ErrTooLarge, and reads a directory past the 1,024 entries of one batch
// whole.
func TestReadDirBound(t *testing.T) {
	for _, n := range []int{3, 1030} {
		dir := t.TempDir()
		for i := range n {
			if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("f%04d", i)), nil, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		root, err := checkpoint.OSFS{}.OpenRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		ents, err := root.ReadDir(".", n)
		if err != nil || len(ents) != n {
			t.Errorf("%d entries, max %d: got %d, %v", n, n, len(ents), err)
		}
		if _, err := root.ReadDir(".", n-1); !errors.Is(err, checkpoint.ErrTooLarge) {
			t.Errorf("%d entries, max %d: %v, want ErrTooLarge", n, n-1, err)
		}
		if err := root.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

// StageAndVerify closes what it opens: repeated, it leaves the count of
// open descriptors where it was.
func TestStageAndVerifyClosesDescriptors(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "model.bin"), []byte("weights"), 0o644); err != nil {
		t.Fatal(err)
	}
	count := func() int {
		ents, err := os.ReadDir("/proc/self/fd")
		if err != nil {
			t.Skipf("no /proc/self/fd: %v", err)
		}
		return len(ents)
	}
	const rounds = 20
	before := count()
	for range rounds {
		if err := os.Remove(filepath.Join(dir, checkpoint.ManifestName)); err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if _, err := checkpoint.StageAndVerify(context.Background(), checkpoint.OSFS{}, dir, checkpoint.StageOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	if after := count(); after-before >= rounds/2 {
		t.Errorf("%d descriptors open before %d runs, %d after: a descriptor leaks per run", before, rounds, after)
	}
}
