package pubcheck

import (
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

// Op names a filesystem operation that [FS] can fail.
type Op string

// The operations of [FS].
const (
	OpMkdir     Op = "mkdir"
	OpOpen      Op = "open"   // open for reading
	OpCreate    Op = "create" // open for writing
	OpRead      Op = "read"
	OpWrite     Op = "write"
	OpSync      Op = "fsync"
	OpSyncDir   Op = "fsyncdir"
	OpLstat     Op = "lstat"
	OpReadDir   Op = "readdir"
	OpRename    Op = "rename"
	OpRenameNR  Op = "rename-noreplace"
	OpRemoveAll Op = "removeall"
)

// Rule fails the Nth call (1-based; 0 means every call) of Op on a path
// containing Path (equal to Path, with Exact) with Err.
type Rule struct {
	// Op is the operation to fail.
	Op Op
	// Path selects the paths: containing it, or equal to it with Exact.
	Path  string
	Exact bool
	// Nth is the matching call to fail, from 1; 0 fails every one.
	Nth int
	// Err is the error returned (wrapped in a *fs.PathError).
	Err error
	// Then, if set, runs when the rule fires (e.g. to cancel a context).
	Then func()
}

// FS is a [checkpoint.FS] that fails the operations its rules select and
// passes every other call to Base (the real filesystem by default).
type FS struct {
	// Base performs the operations that are not failed.
	Base  checkpoint.FS
	mu    sync.Mutex
	rules []Rule
	seen  []int
	fired int
}

// NewFS returns an FS over the real filesystem with the given rules.
func NewFS(rules ...Rule) *FS {
	return &FS{Base: checkpoint.OSFS{}, rules: rules, seen: make([]int, len(rules))}
}

// Fired returns how many times a rule failed an operation.
func (f *FS) Fired() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.fired
}

func (f *FS) check(op Op, path string) error {
	f.mu.Lock()
	var then func()
	var err error
	for i, r := range f.rules {
		if r.Op != op || (r.Exact && path != r.Path) || !strings.Contains(path, r.Path) {
			continue
		}
		f.seen[i]++
		if r.Nth == 0 || f.seen[i] == r.Nth {
			f.fired++
			then, err = r.Then, r.Err
			break
		}
	}
	f.mu.Unlock()
	if then != nil {
		then()
	}
	if err != nil {
		return &fs.PathError{Op: string(op), Path: path, Err: err}
	}
	return nil
}

var _ checkpoint.FS = (*FS)(nil)

// MkdirAll implements checkpoint.FS.
func (f *FS) MkdirAll(path string, perm fs.FileMode) error {
	if err := f.check(OpMkdir, path); err != nil {
		return err
	}
	return f.Base.MkdirAll(path, perm)
}

// OpenRoot implements checkpoint.FS: the root's operations are checked
// against the rules by the path they act on (the root's path joined with
// the name).
func (f *FS) OpenRoot(dir string) (checkpoint.Root, error) {
	r, err := f.Base.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &root{Root: r, fs: f}, nil
}

// root is a checkpoint.Root whose operations the rules of fs may fail.
type root struct {
	checkpoint.Root
	fs *FS
}

func (r *root) full(name string) string { return filepath.Join(r.Path(), filepath.FromSlash(name)) }

// OpenFile implements checkpoint.Root.
func (r *root) OpenFile(name string, flag int, perm fs.FileMode) (checkpoint.File, error) {
	op := OpOpen
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE) != 0 {
		op = OpCreate
	}
	if err := r.fs.check(op, r.full(name)); err != nil {
		return nil, err
	}
	file, err := r.Root.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: r.fs}, nil
}

// Lstat implements checkpoint.Root.
func (r *root) Lstat(name string) (fs.FileInfo, error) {
	if err := r.fs.check(OpLstat, r.full(name)); err != nil {
		return nil, err
	}
	return r.Root.Lstat(name)
}

// ReadDir implements checkpoint.Root.
func (r *root) ReadDir(name string, max int) ([]fs.DirEntry, error) {
	if err := r.fs.check(OpReadDir, r.full(name)); err != nil {
		return nil, err
	}
	return r.Root.ReadDir(name, max)
}

// MkdirAll implements checkpoint.Root.
func (r *root) MkdirAll(name string, perm fs.FileMode) error {
	if err := r.fs.check(OpMkdir, r.full(name)); err != nil {
		return err
	}
	return r.Root.MkdirAll(name, perm)
}

// Rename implements checkpoint.Root.
func (r *root) Rename(oldname, newname string) error {
	if err := r.fs.check(OpRename, r.full(newname)); err != nil {
		return err
	}
	return r.Root.Rename(oldname, newname)
}

// RenameNoReplace implements checkpoint.Root.
func (r *root) RenameNoReplace(oldname string, to checkpoint.Root, newname string) error {
	if t, ok := to.(*root); ok {
		if err := r.fs.check(OpRenameNR, t.full(newname)); err != nil {
			return err
		}
		to = t.Root
	}
	return r.Root.RenameNoReplace(oldname, to, newname)
}

// RemoveAll implements checkpoint.Root.
func (r *root) RemoveAll(name string) error {
	if err := r.fs.check(OpRemoveAll, r.full(name)); err != nil {
		return err
	}
	return r.Root.RemoveAll(name)
}

// SyncDir implements checkpoint.Root.
func (r *root) SyncDir(name string) error {
	if err := r.fs.check(OpSyncDir, r.full(name)); err != nil {
		return err
	}
	return r.Root.SyncDir(name)
}

type faultFile struct {
	checkpoint.File
	fs *FS
}

// Fd returns the file's descriptor (the publisher locks files by it).
func (ff *faultFile) Fd() uintptr {
	if f, ok := ff.File.(interface{ Fd() uintptr }); ok {
		return f.Fd()
	}
	return ^uintptr(0)
}

func (ff *faultFile) Read(p []byte) (int, error) {
	if err := ff.fs.check(OpRead, ff.Name()); err != nil {
		return 0, err
	}
	return ff.File.Read(p)
}

func (ff *faultFile) Write(p []byte) (int, error) {
	if err := ff.fs.check(OpWrite, ff.Name()); err != nil {
		return 0, err
	}
	return ff.File.Write(p)
}

func (ff *faultFile) Sync() error {
	if err := ff.fs.check(OpSync, ff.Name()); err != nil {
		return err
	}
	return ff.File.Sync()
}
