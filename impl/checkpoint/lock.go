package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// runLock is an exclusive flock(2) on a run's lock file,
// runs/<run>.lock. The kernel drops it when the holder dies, so a free lock
// means the run's publisher is gone.
type runLock struct{ f File }

// lockName is the name, in the publish directory, of run's lock file. It
// lies beside the run directory, and is created and locked before the run
// directory exists: whoever sees the run directory sees the lock held while
// its publisher lives.
func lockName(run string) string { return runsDir + "/" + run + ".lock" }

// lockRun takes the lock name in root without waiting: it fails with
// [ErrRunActive] if another process holds it. With create the lock file
// must not exist yet; without, it must.
func lockRun(root Root, name string, create bool) (*runLock, error) {
	flag := os.O_RDWR
	if create {
		flag |= os.O_CREATE | os.O_EXCL
	}
	f, err := root.OpenFile(name, flag, 0o644)
	if err != nil {
		return nil, err
	}
	fd, ok := f.(interface{ Fd() uintptr })
	if !ok {
		f.Close()
		return nil, fmt.Errorf("lock %s: the file has no descriptor", f.Name())
	}
	if err := syscall.Flock(int(fd.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrRunActive
		}
		return nil, fmt.Errorf("lock %s: %w", f.Name(), err)
	}
	return &runLock{f: f}, nil
}

// check reports whether name in root is still this lock's file (a program
// that removed or replaced it would let recovery think the run dead).
func (l *runLock) check(root Root, name string) error {
	fi, err := root.Lstat(name)
	if isNotExist(err) || errors.Is(err, ErrUnsafePath) {
		return fmt.Errorf("%w: the run's lock %s: %w", ErrTampered, name, err)
	}
	if err != nil {
		return fmt.Errorf("%w: cannot check the run's lock %s: %w", ErrJournal, name, err)
	}
	ours, err := l.f.Stat()
	if err != nil {
		return fmt.Errorf("%w: cannot check the run's lock %s: %w", ErrJournal, name, err)
	}
	a, _ := idOf(fi)
	b, _ := idOf(ours)
	if !fi.Mode().IsRegular() || a.dev != b.dev || a.ino != b.ino {
		return fmt.Errorf("%w: the run's lock %s was replaced", ErrTampered, name)
	}
	return nil
}

func (l *runLock) unlock() {
	if l != nil && l.f != nil {
		if fd, ok := l.f.(interface{ Fd() uintptr }); ok {
			_ = syscall.Flock(int(fd.Fd()), syscall.LOCK_UN)
		}
		l.f.Close()
	}
}
