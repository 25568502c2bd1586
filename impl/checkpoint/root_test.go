package checkpoint_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"

	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

// tree snapshots everything under dir: each entry's type, permissions, size,
// modification time, content hash and link target.
func tree(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		v := fi.Mode().String() + " " + fi.ModTime().String()
		switch {
		case fi.Mode().IsRegular():
			b, _ := os.ReadFile(p)
			h := sha256.Sum256(b)
			v += " " + hex.EncodeToString(h[:])
		case fi.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			v += " -> " + l
		}
		out[p] = v
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameTree(t *testing.T, before, after map[string]string) {
	t.Helper()
	var diffs []string
	for p, v := range before {
		if after[p] != v {
			diffs = append(diffs, p+": "+v+" -> "+after[p])
		}
	}
	for p := range after {
		if _, ok := before[p]; !ok {
			diffs = append(diffs, p+": created")
		}
	}
	sort.Strings(diffs)
	if len(diffs) > 0 {
		t.Fatalf("outside the root changed:\n%s", strings.Join(diffs, "\n"))
	}
}

// A root never lets a name leave it, pass through a symlink (inside or
// outside), or open anything but a regular file without blocking; its
// RemoveAll and MkdirAll never act through a symlink; and nothing outside
// it changes.
func TestRootConfines(t *testing.T) {
	base := t.TempDir()
	outside := filepath.Join(base, "outside")
	writeFiles(t, outside, map[string]string{"secret": "keep me", "d/f": "x"})
	dir := filepath.Join(base, "root")
	writeFiles(t, dir, map[string]string{"a/file": "data", "inner": "in"})
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.Symlink(filepath.Join(outside, "secret"), filepath.Join(dir, "link-out")))
	must(os.Symlink("inner", filepath.Join(dir, "link-in")))
	must(os.Symlink(outside, filepath.Join(dir, "dirlink")))
	must(os.Symlink("a", filepath.Join(dir, "dirlink-in")))
	must(syscall.Mkfifo(filepath.Join(dir, "fifo"), 0o644))
	l, err := net.Listen("unix", filepath.Join(dir, "sock"))
	must(err)
	defer l.Close()
	must(os.Symlink("/dev/zero", filepath.Join(dir, "zero")))
	before := tree(t, outside)

	r, err := checkpoint.OSFS{}.OpenRoot(dir)
	must(err)
	defer r.Close()

	for _, tc := range []struct {
		name string
		want error
	}{
		{"a/file", nil},
		{"inner", nil},
		{"link-out", checkpoint.ErrUnsafePath},
		{"link-in", checkpoint.ErrUnsafePath},
		{"dirlink/secret", checkpoint.ErrUnsafePath},
		{"dirlink-in/file", checkpoint.ErrUnsafePath},
		{"zero", checkpoint.ErrUnsafePath},
		{"fifo", checkpoint.ErrNotRegular},
		{"sock", fs.ErrNotExist}, // a socket cannot be opened at all
		{"a", checkpoint.ErrNotRegular},
		{"../outside/secret", checkpoint.ErrUnsafePath},
		{"a/../../outside/secret", checkpoint.ErrUnsafePath},
		{"/etc/passwd", checkpoint.ErrUnsafePath},
		{"", checkpoint.ErrUnsafePath},
	} {
		f, err := r.OpenFile(tc.name, os.O_RDONLY, 0)
		if tc.want == nil {
			if err != nil {
				t.Errorf("OpenFile(%q) = %v", tc.name, err)
			} else {
				f.Close()
			}
			continue
		}
		if err == nil {
			f.Close()
			t.Errorf("OpenFile(%q) opened it, want %v", tc.name, tc.want)
			continue
		}
		if tc.name == "sock" {
			if !errors.Is(err, syscall.ENXIO) && !errors.Is(err, checkpoint.ErrNotRegular) {
				t.Errorf("OpenFile(sock) = %v, want ENXIO or ErrNotRegular", err)
			}
			continue
		}
		if !errors.Is(err, tc.want) {
			t.Errorf("OpenFile(%q) = %v, want %v", tc.name, err, tc.want)
		}
	}

	// Writing through a planted symlink: refused, never truncating the target.
	if f, err := r.OpenFile("link-out", os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644); err == nil {
		f.Close()
		t.Error("created through a symlink")
	}
	if f, err := r.OpenFile("dirlink/new", os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644); err == nil {
		f.Close()
		t.Error("created a file through a symlinked directory")
	}
	// Lstat sees a symlink as one.
	if fi, err := r.Lstat("link-out"); err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		t.Errorf("Lstat(link-out) = %v, %v", fi, err)
	}
	if _, err := r.Lstat("dirlink/secret"); !errors.Is(err, checkpoint.ErrUnsafePath) {
		t.Errorf("Lstat through a symlinked directory = %v", err)
	}
	// MkdirAll through a symlinked directory is refused.
	if err := r.MkdirAll("dirlink/sub", 0o755); err == nil {
		t.Error("MkdirAll through a symlink succeeded")
	}
	// RemoveAll of a symlink removes the link, not its target; of a
	// directory holding links, the links.
	must(os.Symlink(outside, filepath.Join(dir, "a", "deep-link")))
	must(r.RemoveAll("dirlink"))
	must(r.RemoveAll("link-out"))
	must(r.RemoveAll("a"))
	if _, err := os.Lstat(filepath.Join(dir, "a")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("a not removed: %v", err)
	}
	// RenameNoReplace refuses an existing target.
	writeFiles(t, dir, map[string]string{"x/1": "1", "y/2": "2"})
	if err := r.RenameNoReplace("x", r, "y"); !errors.Is(err, fs.ErrExist) {
		t.Errorf("RenameNoReplace onto an existing directory = %v, want ErrExist", err)
	}
	if err := r.RenameNoReplace("x", r, "../escaped"); !errors.Is(err, checkpoint.ErrUnsafePath) {
		t.Errorf("RenameNoReplace out of the root = %v, want ErrUnsafePath", err)
	}
	sameTree(t, before, tree(t, outside))
}

// RemoveAll removes a deep tree, and stops (without following anything)
// at a depth it cannot hold descriptors for.
func TestRootRemoveAllDeep(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "top")
	for i := 0; i < 100; i++ {
		p = filepath.Join(p, "d")
	}
	writeFiles(t, p, map[string]string{"f": "x"})
	r, err := checkpoint.OSFS{}.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	if err := r.RemoveAll("top"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(filepath.Join(dir, "top")); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("top not removed: %v", err)
	}
	if err := r.RemoveAll("never-existed"); err != nil {
		t.Fatalf("RemoveAll of a missing name = %v", err)
	}
}
