package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// File is an open file of an [FS]. *os.File implements it.
type File interface {
	io.Reader
	io.Writer
	io.Closer
	// Sync commits the file's contents to stable storage (fsync).
	Sync() error
	// Name returns the name the file was opened with.
	Name() string
}

// FS is the filesystem as the publisher uses it. Every effect the publisher
// has on storage goes through it, so a test can fail any single operation
// (save, fsync, rename, receipt write) with ENOSPC, EROFS or EIO.
type FS interface {
	// MkdirAll creates a directory and its missing parents.
	MkdirAll(path string, perm fs.FileMode) error
	// OpenFile opens a file as os.OpenFile does.
	OpenFile(name string, flag int, perm fs.FileMode) (File, error)
	// Lstat describes a file without following a final symlink.
	Lstat(name string) (fs.FileInfo, error)
	// ReadDir lists a directory, sorted by name.
	ReadDir(name string) ([]fs.DirEntry, error)
	// Rename renames oldpath to newpath, replacing newpath if it exists.
	Rename(oldpath, newpath string) error
	// RenameNoReplace renames oldpath to newpath atomically and fails with
	// an error matching fs.ErrExist if newpath exists.
	RenameNoReplace(oldpath, newpath string) error
	// RemoveAll removes a path and everything below it.
	RemoveAll(path string) error
	// SyncDir fsyncs a directory, making its entries durable.
	SyncDir(path string) error
	// Device returns the ID of the device (filesystem) that holds path.
	Device(path string) (uint64, error)
}

// OSFS is the operating system's filesystem.
type OSFS struct{}

var _ FS = OSFS{}

// MkdirAll implements [FS].
func (OSFS) MkdirAll(path string, perm fs.FileMode) error { return os.MkdirAll(path, perm) }

// OpenFile implements [FS].
func (OSFS) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err // a *PathError: return the interface nil, not a typed nil
	}
	return f, nil
}

// Lstat implements [FS].
func (OSFS) Lstat(name string) (fs.FileInfo, error) { return os.Lstat(name) }

// ReadDir implements [FS].
func (OSFS) ReadDir(name string) ([]fs.DirEntry, error) { return os.ReadDir(name) }

// Rename implements [FS].
func (OSFS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

// RenameNoReplace implements [FS] with renameat2(2) and RENAME_NOREPLACE.
func (OSFS) RenameNoReplace(oldpath, newpath string) error {
	err := unix.Renameat2(unix.AT_FDCWD, oldpath, unix.AT_FDCWD, newpath, unix.RENAME_NOREPLACE)
	if err != nil {
		return &os.LinkError{Op: "renameat2", Old: oldpath, New: newpath, Err: err}
	}
	return nil
}

// RemoveAll implements [FS].
func (OSFS) RemoveAll(path string) error { return os.RemoveAll(path) }

// SyncDir implements [FS].
func (OSFS) SyncDir(path string) error {
	d, err := os.Open(path)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fsync directory %s: %w", path, err)
	}
	return nil
}

// Device implements [FS].
func (OSFS) Device(path string) (uint64, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return 0, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, fmt.Errorf("%s: no device number available", path)
	}
	return uint64(st.Dev), nil
}

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
