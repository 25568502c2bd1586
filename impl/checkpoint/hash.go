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
	"sync"
	"sync/atomic"
	"time"
)

// BlockSize is the block size of [FileEntry.Blocks]: a file larger than
// one block also has the SHA-256 of each block recorded, so that
// verification can re-read and check a large file on several cores.
const BlockSize = 8 << 20

// errMismatch reports bytes that do not match the manifest.
var errMismatch = errors.New("mismatch")

// hashJob is one unit of hashing work: a whole file, read sequentially
// (its SHA-256; at staging also its fsync), or one block of it.
type hashJob struct {
	file  int
	whole bool
	block int
}

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

func blocksOf(size int64) int {
	if size <= BlockSize {
		return 0
	}
	return int((size + BlockSize - 1) / BlockSize)
}

// hashFiles hashes the files under dir on several goroutines. With stage
// set it fills each entry's SHA256 (and Blocks, for large files), fsyncing
// each file while it is read; otherwise it re-reads every file and checks
// it against the entry (by blocks where the entry has them), failing with
// an error wrapping errMismatch.
func hashFiles(ctx context.Context, fsys FS, dir string, files []FileEntry, stage bool, prog *progressor) error {
	var jobs []hashJob
	for i := range files {
		nb := blocksOf(files[i].Size)
		if stage {
			jobs = append(jobs, hashJob{file: i, whole: true})
			files[i].Blocks = nil
			if nb > 0 {
				files[i].Blocks = make([]string, nb)
			}
			for b := 0; b < nb; b++ {
				jobs = append(jobs, hashJob{file: i, block: b})
			}
			continue
		}
		if len(files[i].Blocks) == 0 {
			jobs = append(jobs, hashJob{file: i, whole: true})
			continue
		}
		if len(files[i].Blocks) != nb {
			return fmt.Errorf("%s: %w: %d block hashes for %d bytes", files[i].Path, errMismatch, len(files[i].Blocks), files[i].Size)
		}
		for b := 0; b < nb; b++ {
			jobs = append(jobs, hashJob{file: i, block: b})
		}
	}
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		firstErr error
		next     atomic.Int64
		wg       sync.WaitGroup
	)
	fail := func(err error) {
		mu.Lock()
		if firstErr == nil {
			firstErr = err
		}
		mu.Unlock()
		cancel()
	}
	workers := min(max(2, runtime.GOMAXPROCS(0)), 8, len(jobs))
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 1<<20)
			for {
				k := int(next.Add(1)) - 1
				if k >= len(jobs) || ctx.Err() != nil {
					return
				}
				j := jobs[k]
				f := &files[j.file]
				var err error
				if j.whole {
					err = hashWhole(ctx, fsys, dir, f, stage, buf, prog)
				} else {
					err = hashBlock(ctx, fsys, dir, f, j.block, stage, buf, prog)
				}
				if err != nil {
					fail(fmt.Errorf("%s: %w", f.Path, err))
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

// hashWhole reads a file sequentially. At staging it records the SHA-256
// and fsyncs the file meanwhile (writeback overlaps the reading, which the
// page cache serves); at verification it compares.
func hashWhole(ctx context.Context, fsys FS, dir string, f *FileEntry, stage bool, buf []byte, prog *progressor) error {
	file, err := fsys.OpenFile(filepath.Join(dir, filepath.FromSlash(f.Path)), os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer file.Close()
	var synced chan error
	if stage {
		synced = make(chan error, 1)
		go func() { synced <- file.Sync() }()
	}
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
			if stage || len(f.Blocks) == 0 {
				prog.add(int64(k))
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			rerr = err
			break
		}
	}
	if stage {
		if serr := <-synced; serr != nil && rerr == nil {
			rerr = fmt.Errorf("fsync: %w", serr)
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

// hashBlock reads one block of a file through a fresh descriptor.
func hashBlock(ctx context.Context, fsys FS, dir string, f *FileEntry, block int, stage bool, buf []byte, prog *progressor) error {
	file, err := fsys.OpenFile(filepath.Join(dir, filepath.FromSlash(f.Path)), os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	defer file.Close()
	off := int64(block) * BlockSize
	size := min(BlockSize, f.Size-off)
	sum := sha256.New()
	for done := int64(0); done < size; {
		if err := ctx.Err(); err != nil {
			return err
		}
		k, err := file.ReadAt(buf[:min(int64(len(buf)), size-done)], off+done)
		if k > 0 {
			sum.Write(buf[:k])
			done += int64(k)
			if !stage {
				prog.add(int64(k))
			}
		}
		if err != nil && !(err == io.EOF && done == size) {
			if err == io.EOF {
				return fmt.Errorf("%w: block %d is short (%d of %d bytes)", errMismatch, block, done, size)
			}
			return err
		}
	}
	got := hex.EncodeToString(sum.Sum(nil))
	if stage {
		f.Blocks[block] = got
	} else if got != f.Blocks[block] {
		return fmt.Errorf("%w: block %d (bytes %d-%d) reads back as sha256 %s, manifest says %s",
			errMismatch, block, off, off+size, short(got), short(f.Blocks[block]))
	}
	return nil
}
