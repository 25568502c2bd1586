package checkpoint_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

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

// fsImmutable is FS_IMMUTABLE_FL of linux/fs.h, which x/sys/unix does
// not name.
const fsImmutable = 0x00000010

// setImmutable sets or clears the immutable attribute of path (chattr
// +i), reporting whether the filesystem and the privileges allow it.
func setImmutable(path string, on bool) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	flags, err := unix.IoctlGetInt(int(f.Fd()), unix.FS_IOC_GETFLAGS)
	if err != nil {
		return err
	}
	if on {
		flags |= fsImmutable
	} else {
		flags &^= fsImmutable
	}
	return unix.IoctlSetPointerInt(int(f.Fd()), unix.FS_IOC_SETFLAGS, flags)
}

// RemoveAll of what cannot be removed — an immutable directory (its own
// rmdir fails), an immutable file (its unlink fails) — reports why, EPERM,
// and leaves it; it is not taken for removed.
func TestRemoveAllReportsFailure(t *testing.T) {
	for _, name := range []string{"d", "f"} {
		dir := t.TempDir()
		p := filepath.Join(dir, name)
		var err error
		if name == "d" {
			err = os.Mkdir(p, 0o755)
		} else {
			err = os.WriteFile(p, []byte("x"), 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := setImmutable(p, true); err != nil {
			t.Skipf("cannot make a file immutable here: %v", err)
		}
		t.Cleanup(func() { _ = setImmutable(p, false) })
		root, err := checkpoint.OSFS{}.OpenRoot(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := root.RemoveAll(name); !errors.Is(err, syscall.EPERM) {
			t.Errorf("RemoveAll of an immutable %s = %v, want EPERM", name, err)
		}
		if _, err := os.Lstat(p); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		if err := root.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
