package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// errMismatch reports bytes that do not match the manifest.
var errMismatch = errors.New("mismatch")

// progressor counts bytes and reports them, throttled, from any goroutine,
// never concurrently.
type progressor struct {
	step     string
	total    int64
	done     atomic.Int64
	start    time.Time
	fn       func(Progress)
	mu       sync.Mutex
	last     time.Time
	reported int64
}

func newProgressor(step string, total int64, fn func(Progress)) *progressor {
	return &progressor{step: step, total: total, start: time.Now(), fn: fn}
}

func (p *progressor) add(n int64) {
	d := p.done.Add(n)
	if p.fn == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if now := time.Now(); now.Sub(p.last) >= 200*time.Millisecond {
		p.last, p.reported = now, d
		p.fn(Progress{Step: p.step, Done: d, Total: p.total, Elapsed: now.Sub(p.start)})
	}
}

func (p *progressor) finish() {
	if p.fn == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	d := p.done.Load()
	if d != p.reported || d == 0 {
		p.fn(Progress{Step: p.step, Done: d, Total: p.total, Elapsed: time.Since(p.start)})
	}
}

// syncer fsyncs staged files in the background, through descriptors of its
// own, at most maxPendingSyncs at a time: the writeback of the program's
// dirty pages overlaps hashing and verification, and wait says when every
// file is on stable storage.
type syncer struct {
	wg  sync.WaitGroup
	sem chan struct{}
	mu  sync.Mutex
	err error
}

const maxPendingSyncs = 64

func newSyncer() *syncer { return &syncer{sem: make(chan struct{}, maxPendingSyncs)} }

// start fsyncs and closes f in the background.
func (s *syncer) start(f File) {
	s.sem <- struct{}{}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() { <-s.sem }()
		err := f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			s.mu.Lock()
			if s.err == nil {
				s.err = fmt.Errorf("fsync %s: %w", f.Name(), err)
			}
			s.mu.Unlock()
		}
	}()
}

// wait waits for every fsync started and returns the first failure.
func (s *syncer) wait() error {
	s.wg.Wait()
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// hashFiles hashes the files under dir, several files at a time. With a
// syncer (staging) it fills each entry's SHA256 and starts each file's
// fsync; without (verification) it re-reads every file and checks it
// against the entry, failing with an error wrapping errMismatch.
func hashFiles(ctx context.Context, fsys FS, dir string, files []FileEntry, sy *syncer, prog *progressor) error {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		firstErr error
		next     atomic.Int64
		wg       sync.WaitGroup
	)
	// Largest files first, so that the last to finish is a small one.
	order := make([]int, len(files))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return files[order[a]].Size > files[order[b]].Size })
	workers := min(max(2, runtime.GOMAXPROCS(0)), 8, len(files))
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 1<<20)
			for {
				k := int(next.Add(1)) - 1
				if k >= len(order) || ctx.Err() != nil {
					return
				}
				f := &files[order[k]]
				if err := hashWhole(ctx, fsys, dir, f, sy, buf, prog); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = fmt.Errorf("%s: %w", f.Path, err)
					}
					mu.Unlock()
					cancel()
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := parent.Err(); err != nil {
		return err
	}
	return firstErr
}

// hashWhole reads a file sequentially through a fresh descriptor. At
// staging (sy set) it records the SHA-256 and has sy fsync the file
// meanwhile, through a descriptor of its own; at verification it compares.
func hashWhole(ctx context.Context, fsys FS, dir string, f *FileEntry, sy *syncer, buf []byte, prog *progressor) error {
	name := filepath.Join(dir, filepath.FromSlash(f.Path))
	stage := sy != nil
	if stage {
		sf, err := fsys.OpenFile(name, os.O_RDONLY, 0)
		if err != nil {
			return err
		}
		sy.start(sf)
	}
	file, err := fsys.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer file.Close()
	sum := sha256.New()
	var n int64
	var rerr error
	for {
		if rerr = ctx.Err(); rerr != nil {
			break
		}
		k, err := file.Read(buf)
		if k > 0 {
			sum.Write(buf[:k])
			n += int64(k)
			prog.add(int64(k))
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			rerr = err
			break
		}
	}
	if rerr != nil {
		return rerr
	}
	got := hex.EncodeToString(sum.Sum(nil))
	switch {
	case stage && n != f.Size:
		return fmt.Errorf("changed size while staging (%d, then %d bytes)", f.Size, n)
	case stage:
		f.SHA256 = got
	case n != f.Size || got != f.SHA256:
		return fmt.Errorf("%w: reads back as %d bytes sha256 %s, manifest says %d bytes sha256 %s",
			errMismatch, n, short(got), f.Size, short(f.SHA256))
	}
	return nil
}
