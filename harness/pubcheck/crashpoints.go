package pubcheck

import (
	"io/fs"
	"strings"
	"sync"

	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

// CrashFS is a [checkpoint.FS] over Base (the real filesystem by default)
// that numbers, from 1, every operation of the publisher that changes
// storage — a create, a write, an fsync, a rename, a mkdir, a removal, a
// directory fsync; writes to the run's logs, whose number depends on how
// the program's output is chunked, are not counted — and calls Crash
// before the one numbered At (never if At is 0). A crash test's publisher
// process passes a Crash that kills the process: a crash at every point
// of a run, each once, in order, instead of at random times.
type CrashFS struct {
	// Base performs the operations.
	Base checkpoint.FS
	// At is the operation to crash before; 0 counts without crashing.
	At int
	// Crash is called before operation At, with its op and path.
	Crash func(n int, op Op, path string)

	mu  sync.Mutex
	n   int
	ops []string
}

var _ checkpoint.FS = (*CrashFS)(nil)

// Points returns the operations counted so far, in order, as "op path".
func (c *CrashFS) Points() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.ops...)
}

func (c *CrashFS) before(op Op, path string) {
	if op == OpWrite && strings.HasSuffix(path, ".log") {
		return
	}
	c.mu.Lock()
	c.n++
	n := c.n
	c.ops = append(c.ops, string(op)+" "+path)
	c.mu.Unlock()
	if n == c.At && c.Crash != nil {
		c.Crash(n, op, path)
	}
}

func (c *CrashFS) synced(checkpoint.File) {}
func (c *CrashFS) syncedDir(string)       {}

func (c *CrashFS) base() checkpoint.FS {
	if c.Base == nil {
		return checkpoint.OSFS{}
	}
	return c.Base
}

// MkdirAll implements checkpoint.FS.
func (c *CrashFS) MkdirAll(path string, perm fs.FileMode) error {
	c.before(OpMkdir, path)
	return c.base().MkdirAll(path, perm)
}

// OpenRoot implements checkpoint.FS.
func (c *CrashFS) OpenRoot(dir string) (checkpoint.Root, error) {
	return hookRoot(c.base(), c, dir)
}
