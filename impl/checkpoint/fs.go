package checkpoint

import (
	"errors"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// File is an open file of a [Root]. *os.File implements it.
type File interface {
	io.Reader
	io.Writer
	io.Closer
	// Sync commits the file's contents to stable storage (fsync).
	Sync() error
	// Name returns the file's path, for messages.
	Name() string
	// Stat describes the open file (fstat).
	Stat() (fs.FileInfo, error)
}

// FS is the storage the publisher acts on. Every effect the publisher has on
// storage goes through it, so a test can fail any single operation (save,
// fsync, rename, receipt write) with ENOSPC, EROFS or EIO.
//
// The publisher trusts only the directories its caller names (the publish
// directory, the staging root, the directory of a journal given by path):
// it opens each as a [Root] and reaches everything else beneath one,
// through names that a Root resolves without leaving it, following no
// symlink and crossing no mount point.
type FS interface {
	// MkdirAll creates a directory the caller named, and its missing
	// parents, as os.MkdirAll does.
	MkdirAll(path string, perm fs.FileMode) error
	// OpenRoot opens the directory dir, which the caller trusts, as a Root.
	OpenRoot(dir string) (Root, error)
}

// Root is a directory under which every name is resolved beneath it. A
// name is slash-separated and local (no "..", not absolute; "." is the
// root itself). Resolving a name never follows a symlink (not even its last
// element: a symlink is seen as one with Lstat and refused by every other
// operation), never crosses a mount point and never blocks: a name that
// would leave the root, or pass through a symlink or another filesystem,
// fails with an error matching [ErrUnsafePath].
type Root interface {
	// Path is the directory's absolute path, for messages.
	Path() string
	// OpenFile opens a regular file, as os.OpenFile does, but never
	// follows a symlink and never blocks: anything but a regular file (a
	// FIFO, a device, a socket, a directory) is refused after the open,
	// without reading, unless flag has O_DIRECTORY, which asks for a
	// directory instead.
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	// Lstat describes name without following it if it is a symlink.
	Lstat(name string) (fs.FileInfo, error)
	// ReadDir lists the directory name, sorted by entry name; more than
	// max entries is an error matching [ErrTooLarge].
	ReadDir(name string, max int) ([]fs.DirEntry, error)
	// Readlink returns the target of the symlink name (for messages).
	Readlink(name string) (string, error)
	// MkdirAll creates the directory name and its missing parents; an
	// existing element must be a directory.
	MkdirAll(name string, perm fs.FileMode) error
	// Rename renames oldname to newname, both in this root, replacing
	// newname if it exists.
	Rename(oldname, newname string) error
	// RenameNoReplace renames oldname in this root to newname in root to
	// (the same filesystem), atomically, and fails with an error matching
	// fs.ErrExist if newname exists.
	RenameNoReplace(oldname string, to Root, newname string) error
	// RemoveAll removes name and everything below it, never following a
	// symlink out and never descending into another filesystem.
	RemoveAll(name string) error
	// SyncDir fsyncs the directory name, making its entries durable.
	SyncDir(name string) error
	// Device returns the ID of the filesystem that holds the root.
	Device() uint64
	// Close releases the root.
	Close() error
}

// OSFS is the operating system's filesystem; its roots resolve names with
// openat2(2) (RESOLVE_BENEATH, RESOLVE_NO_SYMLINKS, RESOLVE_NO_XDEV), which
// needs Linux 5.6 or later.
type OSFS struct{}

var _ FS = OSFS{}

// MkdirAll implements [FS].
func (OSFS) MkdirAll(path string, perm fs.FileMode) error { return os.MkdirAll(path, perm) }

// Clock tells the time of receipts and durations.
type Clock interface {
	Now() time.Time
}

// SystemClock is the wall clock.
type SystemClock struct{}

// Now implements [Clock].
func (SystemClock) Now() time.Time { return time.Now() }

// isExist reports whether err says that a path already exists.
func isExist(err error) bool {
	return errors.Is(err, fs.ErrExist) || errors.Is(err, syscall.ENOTEMPTY)
}

// isNotExist reports whether err says that a path does not exist.
func isNotExist(err error) bool {
	return errors.Is(err, fs.ErrNotExist)
}
