package checkpoint

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// resolveBeneath is how an [osRoot] resolves every name: beneath the root,
// through no symlink (the last element included) and no magic link, and
// onto no other filesystem.
const resolveBeneath = unix.RESOLVE_BENEATH | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_XDEV

// maxRemoveDepth bounds how deep RemoveAll descends (each level holds a
// descriptor).
const maxRemoveDepth = 512

// osRoot is a [Root] on the operating system's filesystem: a directory
// descriptor, and openat2(2)/*at(2) calls relative to it.
type osRoot struct {
	fd   int
	path string
	dev  uint64
}

var _ Root = (*osRoot)(nil)

// OpenRoot implements [FS]. dir itself is opened as os.Open would open it
// (the caller trusts it, and may reach it through a symlink); it must be a
// directory.
func (OSFS) OpenRoot(dir string) (Root, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	fd, err := retryEINTR(func() (int, error) {
		return unix.Open(abs, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	})
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: abs, Err: err}
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "fstat", Path: abs, Err: err}
	}
	return &osRoot{fd: fd, path: abs, dev: st.Dev}, nil
}

func retryEINTR(f func() (int, error)) (int, error) {
	for {
		fd, err := f()
		if err != unix.EINTR {
			return fd, err
		}
	}
}

// Path implements [Root].
func (r *osRoot) Path() string { return r.path }

// Device implements [Root].
func (r *osRoot) Device() uint64 { return r.dev }

// Close implements [Root].
func (r *osRoot) Close() error {
	if r.fd < 0 {
		return nil
	}
	err := unix.Close(r.fd)
	r.fd = -1
	return err
}

func (r *osRoot) full(name string) string { return filepath.Join(r.path, filepath.FromSlash(name)) }

// localName checks that name is a clean local name ("." for the root).
func localName(name string) error {
	if name == "." {
		return nil
	}
	if name == "" || path.Clean(name) != name || !filepath.IsLocal(filepath.FromSlash(name)) {
		return fmt.Errorf("%w: %q is not a clean name inside the directory", ErrUnsafePath, name)
	}
	return nil
}

// pathErr wraps an error of op on name, saying in the error's words what a
// refused resolution means.
func (r *osRoot) pathErr(op, name string, err error) error {
	switch {
	case errors.Is(err, unix.ELOOP):
		err = fmt.Errorf("%w: a symlink is in the way; symlinks are never followed (%w)", ErrUnsafePath, err)
	case errors.Is(err, unix.EXDEV) && op != "rename":
		err = fmt.Errorf("%w: the name leaves the directory or crosses a mount point (%w)", ErrUnsafePath, err)
	}
	return &fs.PathError{Op: op, Path: r.full(name), Err: err}
}

// open resolves name beneath the root with openat2.
func (r *osRoot) open(name string, flags int, mode uint32) (int, error) {
	if err := localName(name); err != nil {
		return -1, &fs.PathError{Op: "open", Path: r.full(name), Err: err}
	}
	how := unix.OpenHow{Flags: uint64(flags) | unix.O_CLOEXEC, Mode: uint64(mode), Resolve: resolveBeneath}
	for i := 0; ; i++ {
		fd, err := unix.Openat2(r.fd, name, &how)
		// EAGAIN: a rename raced the resolution; openat2 asks to retry.
		if err == unix.EINTR || (err == unix.EAGAIN && i < 100) {
			continue
		}
		if err != nil {
			return -1, r.pathErr("open", name, err)
		}
		return fd, nil
	}
}

// parent opens the directory holding name and returns it with name's last
// element. The root's own descriptor is returned (and must not be closed)
// for a name with one element.
func (r *osRoot) parent(name string) (fd int, base string, done func(), err error) {
	if err := localName(name); err != nil || name == "." {
		if err == nil {
			err = fmt.Errorf("%w: the root itself", ErrUnsafePath)
		}
		return -1, "", nil, &fs.PathError{Op: "resolve", Path: r.full(name), Err: err}
	}
	dir, base := path.Split(name)
	if dir == "" {
		return r.fd, base, func() {}, nil
	}
	fd, err = r.open(path.Clean(dir), unix.O_PATH|unix.O_DIRECTORY, 0)
	if err != nil {
		return -1, "", nil, err
	}
	return fd, base, func() { unix.Close(fd) }, nil
}

// fileKind names the type of a file mode, for messages.
func fileKind(m fs.FileMode) string {
	switch {
	case m.IsRegular():
		return "regular file"
	case m.IsDir():
		return "directory"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	case m&fs.ModeNamedPipe != 0:
		return "FIFO"
	case m&fs.ModeSocket != 0:
		return "socket"
	case m&fs.ModeCharDevice != 0:
		return "character device"
	case m&fs.ModeDevice != 0:
		return "block device"
	}
	return "special file"
}

// OpenFile implements [Root].
func (r *osRoot) OpenFile(name string, flag int, perm fs.FileMode) (File, error) {
	wantDir := flag&unix.O_DIRECTORY != 0
	var mode uint32
	if flag&unix.O_CREAT != 0 {
		mode = uint32(perm.Perm()) // openat2 refuses a mode without O_CREAT
	}
	fd, err := r.open(name, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK, mode)
	if err != nil {
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, r.pathErr("fstat", name, err)
	}
	if m := statMode(&st); !wantDir && !m.IsRegular() {
		unix.Close(fd)
		return nil, &fs.PathError{Op: "open", Path: r.full(name), Err: fmt.Errorf("%w: it is a %s", ErrNotRegular, fileKind(m))}
	}
	return os.NewFile(uintptr(fd), r.full(name)), nil
}

// Lstat implements [Root].
func (r *osRoot) Lstat(name string) (fs.FileInfo, error) {
	var st unix.Stat_t
	if name == "." {
		if err := unix.Fstat(r.fd, &st); err != nil {
			return nil, r.pathErr("lstat", name, err)
		}
		return &statInfo{name: filepath.Base(r.path), st: st}, nil
	}
	pfd, base, done, err := r.parent(name)
	if err != nil {
		return nil, err
	}
	defer done()
	if err := unix.Fstatat(pfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return nil, r.pathErr("lstat", name, err)
	}
	return &statInfo{name: base, st: st}, nil
}

// ReadDir implements [Root].
func (r *osRoot) ReadDir(name string, max int) ([]fs.DirEntry, error) {
	fd, err := r.open(name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, err
	}
	d := os.NewFile(uintptr(fd), r.full(name))
	defer d.Close()
	var out []fs.DirEntry
	for {
		ents, err := d.ReadDir(1024)
		out = append(out, ents...)
		if len(out) > max {
			return nil, &fs.PathError{Op: "readdir", Path: r.full(name), Err: fmt.Errorf("%w: more than %d entries", ErrTooLarge, max)}
		}
		if err == io.EOF || len(ents) == 0 {
			break
		}
		if err != nil {
			return nil, &fs.PathError{Op: "readdir", Path: r.full(name), Err: err}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name() < out[j].Name() })
	return out, nil
}

// Readlink implements [Root].
func (r *osRoot) Readlink(name string) (string, error) {
	pfd, base, done, err := r.parent(name)
	if err != nil {
		return "", err
	}
	defer done()
	buf := make([]byte, 4096)
	n, err := unix.Readlinkat(pfd, base, buf)
	if err != nil {
		return "", r.pathErr("readlink", name, err)
	}
	return string(buf[:n]), nil
}

// MkdirAll implements [Root].
func (r *osRoot) MkdirAll(name string, perm fs.FileMode) error {
	if err := localName(name); err != nil {
		return &fs.PathError{Op: "mkdir", Path: r.full(name), Err: err}
	}
	if name == "." {
		return nil
	}
	cur := ""
	for _, el := range strings.Split(name, "/") {
		cur = path.Join(cur, el)
		pfd, base, done, err := r.parent(cur)
		if err != nil {
			return err
		}
		err = unix.Mkdirat(pfd, base, uint32(perm.Perm()))
		if err == unix.EEXIST {
			var st unix.Stat_t
			if serr := unix.Fstatat(pfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); serr == nil && statMode(&st).IsDir() {
				if st.Dev != r.dev {
					err = unix.EXDEV
				} else {
					err = nil
				}
			} else if serr == nil {
				err = fmt.Errorf("%w: it is a %s", syscall.ENOTDIR, fileKind(statMode(&st)))
				if statMode(&st)&fs.ModeSymlink != 0 {
					err = unix.ELOOP
				}
			}
		}
		done()
		if err != nil {
			return r.pathErr("mkdir", cur, err)
		}
	}
	return nil
}

// Rename implements [Root].
func (r *osRoot) Rename(oldname, newname string) error {
	ofd, obase, odone, err := r.parent(oldname)
	if err != nil {
		return err
	}
	defer odone()
	nfd, nbase, ndone, err := r.parent(newname)
	if err != nil {
		return err
	}
	defer ndone()
	if err := unix.Renameat(ofd, obase, nfd, nbase); err != nil {
		return &os.LinkError{Op: "rename", Old: r.full(oldname), New: r.full(newname), Err: err}
	}
	return nil
}

// RenameNoReplace implements [Root] with renameat2(2) and RENAME_NOREPLACE.
func (r *osRoot) RenameNoReplace(oldname string, to Root, newname string) error {
	t, ok := to.(*osRoot)
	if !ok {
		return &os.LinkError{Op: "renameat2", Old: r.full(oldname), New: newname, Err: errors.New("target root is not an OS root")}
	}
	ofd, obase, odone, err := r.parent(oldname)
	if err != nil {
		return err
	}
	defer odone()
	nfd, nbase, ndone, err := t.parent(newname)
	if err != nil {
		return err
	}
	defer ndone()
	if err := unix.Renameat2(ofd, obase, nfd, nbase, unix.RENAME_NOREPLACE); err != nil {
		return &os.LinkError{Op: "renameat2", Old: r.full(oldname), New: t.full(newname), Err: err}
	}
	return nil
}

// RemoveAll implements [Root].
func (r *osRoot) RemoveAll(name string) error {
	pfd, base, done, err := r.parent(name)
	if err != nil {
		if isNotExist(err) {
			return nil
		}
		return err
	}
	defer done()
	if err := removeAt(pfd, base, r.dev, 0); err != nil {
		return &fs.PathError{Op: "removeall", Path: r.full(name), Err: err}
	}
	return nil
}

// removeAt removes the entry base of the directory pfd and, if it is a
// directory on filesystem dev, everything below it first; a directory on
// another filesystem (a mount point) is refused, and a symlink is removed
// as itself.
func removeAt(pfd int, base string, dev uint64, depth int) error {
	err := unix.Unlinkat(pfd, base, 0)
	if err == nil || err == unix.ENOENT {
		return nil
	}
	if err != unix.EISDIR && err != unix.EPERM {
		return err
	}
	unlinkErr := err
	if depth >= maxRemoveDepth {
		return fmt.Errorf("%w: nested deeper than %d directories", ErrTooLarge, maxRemoveDepth)
	}
	fd, err := retryEINTR(func() (int, error) {
		return unix.Openat(pfd, base, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	})
	if err == unix.ENOENT {
		return nil
	}
	if err != nil {
		if err == unix.ENOTDIR { // not a directory: the unlink's EPERM is why it stays
			return unlinkErr
		}
		return err
	}
	d := os.NewFile(uintptr(fd), base)
	defer d.Close()
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return err
	}
	if st.Dev != dev {
		return fmt.Errorf("%w: %s is a mount point", ErrUnsafePath, base)
	}
	for {
		names, rerr := d.Readdirnames(1024)
		failed := 0
		var first error
		for _, n := range names {
			if err := removeAt(fd, n, dev, depth+1); err != nil {
				failed++
				if first == nil {
					first = fmt.Errorf("%s/%w", base, err)
				}
			}
		}
		if first != nil && failed == len(names) {
			return first
		}
		if rerr == io.EOF || len(names) == 0 {
			break
		}
		if rerr != nil {
			return rerr
		}
	}
	err = unix.Unlinkat(pfd, base, unix.AT_REMOVEDIR)
	if err == unix.ENOENT {
		return nil
	}
	return err
}

// SyncDir implements [Root].
func (r *osRoot) SyncDir(name string) error {
	fd, err := r.open(name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NONBLOCK, 0)
	if err != nil {
		return err
	}
	err = unix.Fsync(fd)
	unix.Close(fd)
	if err != nil {
		return &fs.PathError{Op: "fsync", Path: r.full(name), Err: err}
	}
	return nil
}

// statInfo is an fs.FileInfo from a unix.Stat_t. Its Sys is the
// *unix.Stat_t.
type statInfo struct {
	name string
	st   unix.Stat_t
}

func (s *statInfo) Name() string       { return s.name }
func (s *statInfo) Size() int64        { return s.st.Size }
func (s *statInfo) Mode() fs.FileMode  { return statMode(&s.st) }
func (s *statInfo) ModTime() time.Time { return time.Unix(s.st.Mtim.Unix()) }
func (s *statInfo) IsDir() bool        { return s.Mode().IsDir() }
func (s *statInfo) Sys() any           { return &s.st }

// statMode converts a stat mode to an fs.FileMode, as package os does.
func statMode(st *unix.Stat_t) fs.FileMode {
	m := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFBLK:
		m |= fs.ModeDevice
	case unix.S_IFCHR:
		m |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFIFO:
		m |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	case unix.S_IFSOCK:
		m |= fs.ModeSocket
	}
	if st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// fileID is a file's identity: device and inode, and its link count.
type fileID struct {
	dev, ino uint64
	nlink    uint64
}

// idOf returns fi's identity, if its Sys carries one.
func idOf(fi fs.FileInfo) (fileID, bool) {
	switch st := fi.Sys().(type) {
	case *unix.Stat_t:
		return fileID{st.Dev, st.Ino, uint64(st.Nlink)}, true
	case *syscall.Stat_t:
		return fileID{uint64(st.Dev), st.Ino, uint64(st.Nlink)}, true
	}
	return fileID{}, false
}
