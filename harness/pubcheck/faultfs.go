package pubcheck

import (
	"io/fs"
	"os"
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
	OpDevice    Op = "device"
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

// OpenFile implements checkpoint.FS.
func (f *FS) OpenFile(name string, flag int, perm fs.FileMode) (checkpoint.File, error) {
	op := OpOpen
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE) != 0 {
		op = OpCreate
	}
	if err := f.check(op, name); err != nil {
		return nil, err
	}
	file, err := f.Base.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &faultFile{File: file, fs: f}, nil
}

// Lstat implements checkpoint.FS.
func (f *FS) Lstat(name string) (fs.FileInfo, error) {
	if err := f.check(OpLstat, name); err != nil {
		return nil, err
	}
	return f.Base.Lstat(name)
}

// ReadDir implements checkpoint.FS.
func (f *FS) ReadDir(name string) ([]fs.DirEntry, error) {
	if err := f.check(OpReadDir, name); err != nil {
		return nil, err
	}
	return f.Base.ReadDir(name)
}

// Rename implements checkpoint.FS.
func (f *FS) Rename(oldpath, newpath string) error {
	if err := f.check(OpRename, newpath); err != nil {
		return err
	}
	return f.Base.Rename(oldpath, newpath)
}

// RenameNoReplace implements checkpoint.FS.
func (f *FS) RenameNoReplace(oldpath, newpath string) error {
	if err := f.check(OpRenameNR, newpath); err != nil {
		return err
	}
	return f.Base.RenameNoReplace(oldpath, newpath)
}

// RemoveAll implements checkpoint.FS.
func (f *FS) RemoveAll(path string) error {
	if err := f.check(OpRemoveAll, path); err != nil {
		return err
	}
	return f.Base.RemoveAll(path)
}

// SyncDir implements checkpoint.FS.
func (f *FS) SyncDir(path string) error {
	if err := f.check(OpSyncDir, path); err != nil {
		return err
	}
	return f.Base.SyncDir(path)
}

// Device implements checkpoint.FS.
func (f *FS) Device(path string) (uint64, error) {
	if err := f.check(OpDevice, path); err != nil {
		return 0, err
	}
	return f.Base.Device(path)
}

type faultFile struct {
	checkpoint.File
	fs *FS
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
