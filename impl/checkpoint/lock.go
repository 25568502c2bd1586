package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

// runLock is an exclusive flock(2) on a run's lock file. The kernel drops
// it when the holder dies, so a free lock means the run's publisher is gone.
type runLock struct{ f *os.File }

// lockRun takes the lock at path; with wait false it fails with
// [ErrRunActive] if another process holds it.
func lockRun(path string) (*runLock, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			return nil, ErrRunActive
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return &runLock{f: f}, nil
}

func (l *runLock) unlock() {
	if l != nil && l.f != nil {
		_ = syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
		l.f.Close()
	}
}
