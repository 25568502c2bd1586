package checkpoint

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
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
	clock    Clock
	mu       sync.Mutex
	last     time.Time
	reported int64
}

func newProgressor(step string, total int64, fn func(Progress), clock Clock) *progressor {
	if clock == nil {
		clock = SystemClock{}
	}
	return &progressor{step: step, total: total, start: clock.Now(), fn: fn, clock: clock}
}

func (p *progressor) add(n int64) {
	d := p.done.Add(n)
	if p.fn == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if now := p.clock.Now(); now.Sub(p.last) >= 200*time.Millisecond {
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
		p.fn(Progress{Step: p.step, Done: d, Total: p.total, Elapsed: p.clock.Now().Sub(p.start)})
	}
}

// syncer fsyncs staged files, the manifest and the staging directories in
// the background, at most maxPendingSyncs at a time: the writeback of the
// program's dirty pages overlaps hashing and verification, and wait says
// when everything is on stable storage.
type syncer struct {
	wg  sync.WaitGroup
	sem chan struct{}
	mu  sync.Mutex
	err error
}

const maxPendingSyncs = 64

func newSyncer() *syncer { return &syncer{sem: make(chan struct{}, maxPendingSyncs)} }

// start fsyncs and closes f in the background; f is the syncer's from
// then on.
func (s *syncer) start(f File) {
	s.do(f.Name(), func() error {
		err := f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	})
}

// do runs sync, which makes what durable, in the background.
func (s *syncer) do(what string, sync func() error) {
	s.sem <- struct{}{}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() { <-s.sem }()
		if err := sync(); err != nil {
			s.mu.Lock()
			if s.err == nil {
				s.err = fmt.Errorf("fsync %s: %w", what, err)
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

// BlockSize is the size of the blocks whose SHA-256s a manifest records
// for a large file ([FileEntry.Blocks]).
const BlockSize = 16 << 20

// hashWorkers is how many files (or block ranges) are hashed at a time.
func hashWorkers() int { return min(max(2, runtime.GOMAXPROCS(0)), 8) }

// useBlocks says whether staging records block hashes for a file of size
// bytes: for a file of at least two blocks. Its blocks are then hashed (at
// staging) and checked (at verification) in disjoint ranges, one per
// worker, so one large file is spread over the cores both times.
func useBlocks(size int64) bool { return size >= 2*BlockSize }

// numBlocks is the number of blocks of a file of size bytes.
func numBlocks(size, blockSize int64) int64 { return (size + blockSize - 1) / blockSize }

// hashUnit is a piece of work: a whole file (hi == 0), or its blocks
// [lo, hi).
type hashUnit struct {
	file   int
	lo, hi int64
	bytes  int64
}

// blockUnits splits file i's nb blocks into at most nw disjoint ranges.
func blockUnits(i int, f FileEntry, nb int64, nw int) []hashUnit {
	parts := min(int64(nw), nb)
	units := make([]hashUnit, 0, parts)
	for p := int64(0); p < parts; p++ {
		lo, hi := p*nb/parts, (p+1)*nb/parts
		units = append(units, hashUnit{file: i, lo: lo, hi: hi, bytes: min(hi*f.BlockSize, f.Size) - lo*f.BlockSize})
	}
	return units
}

// hashFiles hashes the files under dir, several files (or block ranges) at
// a time.
//
// With a syncer (staging) it fills each entry's hashes and starts each
// file's fsync: a small file gets SHA256; a large one ([useBlocks]) gets
// BlockSize and Blocks, hashed in ranges on every worker, and also SHA256
// if whole[i] is set (whole may be nil), from the same reads as its
// blocks, on two cores. Without a syncer (verification) it re-reads every
// file and checks it against the entry (against its block hashes if it has
// some, one range of blocks per worker), failing with an error wrapping
// errMismatch.
func hashFiles(ctx context.Context, root Root, dir string, files []FileEntry, sy *syncer, whole []bool, prog *progressor) error {
	parent := ctx
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		mu       sync.Mutex
		firstErr error
		next     atomic.Int64
		wg       sync.WaitGroup
	)
	stage := sy != nil
	nw := hashWorkers()
	var units []hashUnit
	for i := range files {
		f := &files[i]
		switch {
		case stage && useBlocks(f.Size) && whole != nil && whole[i]:
			// Whole-file and block hashes from one read: one unit.
			units = append(units, hashUnit{file: i, bytes: f.Size})
		case stage && useBlocks(f.Size):
			f.BlockSize = BlockSize
			f.Blocks = make([]string, numBlocks(f.Size, BlockSize))
			units = append(units, blockUnits(i, *f, int64(len(f.Blocks)), nw)...)
		case !stage && len(f.Blocks) > 0:
			units = append(units, blockUnits(i, *f, int64(len(f.Blocks)), nw)...)
		default:
			units = append(units, hashUnit{file: i, bytes: f.Size})
		}
	}
	// Largest first, so that the last to finish is a small one.
	sort.SliceStable(units, func(a, b int) bool { return units[a].bytes > units[b].bytes })
	workers := min(nw, len(units))
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 1<<20)
			for {
				k := int(next.Add(1)) - 1
				if k >= len(units) || ctx.Err() != nil {
					return
				}
				u := units[k]
				f := &files[u.file]
				var err error
				switch {
				case stage && u.hi == 0 && useBlocks(f.Size):
					err = hashStageBlocks(ctx, root, dir, f, sy, prog)
				case u.hi > 0:
					err = hashBlocks(ctx, root, dir, f, u.lo, u.hi, sy, buf, prog)
				default:
					err = hashWhole(ctx, root, dir, f, sy, buf, prog)
				}
				if err != nil {
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

// openHashed opens f under dir for reading through a fresh descriptor and,
// if sy is set, has sy fsync it meanwhile through another descriptor of
// its own.
func openHashed(root Root, dir string, f *FileEntry, sy *syncer) (File, error) {
	name := path.Join(dir, f.Path)
	if sy != nil {
		sf, err := root.OpenFile(name, os.O_RDONLY, 0)
		if err != nil {
			return nil, err
		}
		sy.start(sf)
	}
	return root.OpenFile(name, os.O_RDONLY, 0)
}

// hashStageBlocks stages a large file whose whole-file SHA-256 is wanted:
// it reads the file once, and hashes the same buffers twice at the same
// time, on two goroutines: the whole file's SHA-256 here, each BlockSize
// block's in another. Both describe the same bytes, so checking the block
// hashes at verification proves the bytes are those whose SHA-256 is
// recorded (and that an evaluation's claim was checked against). Two
// separate reads would not: a write between them would leave blocks that
// verify and a whole-file hash of other bytes.
func hashStageBlocks(ctx context.Context, root Root, dir string, f *FileEntry, sy *syncer, prog *progressor) error {
	file, err := openHashed(root, dir, f, sy)
	if err != nil {
		return err
	}
	defer file.Close()

	const nbuf = 4
	free := make(chan []byte, nbuf)
	for i := 0; i < nbuf; i++ {
		free <- make([]byte, 1<<20)
	}
	toBlocks := make(chan []byte, nbuf)
	var blocks []string
	done := make(chan struct{})
	go func() {
		defer close(done)
		h := sha256.New()
		var in int64 // bytes of the current block hashed
		for b := range toBlocks {
			chunk := b
			for len(chunk) > 0 {
				k := min(int64(len(chunk)), BlockSize-in)
				h.Write(chunk[:k])
				chunk, in = chunk[k:], in+k
				if in == BlockSize {
					blocks = append(blocks, hex.EncodeToString(h.Sum(nil)))
					h.Reset()
					in = 0
				}
			}
			free <- b[:cap(b)]
		}
		if in > 0 {
			blocks = append(blocks, hex.EncodeToString(h.Sum(nil)))
		}
	}()

	sum := sha256.New()
	var n int64
	var rerr error
	for {
		if rerr = ctx.Err(); rerr != nil {
			break
		}
		buf := <-free
		k, err := file.Read(buf)
		if k > 0 {
			toBlocks <- buf[:k]
			sum.Write(buf[:k]) // the block goroutine only reads buf too
			n += int64(k)
			prog.add(int64(k))
		} else {
			free <- buf
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			rerr = err
			break
		}
	}
	close(toBlocks)
	<-done
	if rerr != nil {
		return rerr
	}
	if n != f.Size {
		return fmt.Errorf("changed size while staging (%d, then %d bytes)", f.Size, n)
	}
	f.SHA256 = hex.EncodeToString(sum.Sum(nil))
	f.BlockSize = BlockSize
	f.Blocks = blocks
	return nil
}

// hashBlocks reads blocks [lo, hi) of a file through a fresh descriptor
// and hashes each. At staging (sy set) it records them in f.Blocks (whose
// other ranges other workers fill), and the range starting the file has
// sy fsync it meanwhile; at verification it compares each with its
// recorded SHA-256. Either way the range ending with the last block also
// checks that the file ends where f.Size says.
func hashBlocks(ctx context.Context, root Root, dir string, f *FileEntry, lo, hi int64, sy *syncer, buf []byte, prog *progressor) error {
	stage := sy != nil
	fsy := sy
	if lo > 0 {
		fsy = nil // the range starting the file fsyncs it
	}
	file, err := openHashed(root, dir, f, fsy)
	if err != nil {
		return err
	}
	defer file.Close()
	ra, ok := file.(io.ReaderAt)
	if !ok {
		ra = &seqReaderAt{r: file}
	}
	// sizeErr reports a file that is shorter or longer than f.Size.
	sizeErr := func(how string, end int64) error {
		if stage {
			return fmt.Errorf("changed size while staging (%d bytes listed, then %s, at %d)", f.Size, how, end)
		}
		return fmt.Errorf("%w: reads back %s than the manifest's %d bytes (at %d)", errMismatch, how, f.Size, end)
	}
	h := sha256.New()
	for b := lo; b < hi; b++ {
		off := b * f.BlockSize
		end := min(off+f.BlockSize, f.Size)
		h.Reset()
		for off < end {
			if err := ctx.Err(); err != nil {
				return err
			}
			k, err := ra.ReadAt(buf[:min(int64(len(buf)), end-off)], off)
			if k > 0 {
				h.Write(buf[:k])
				off += int64(k)
				prog.add(int64(k))
			}
			if err == io.EOF && off < end {
				return sizeErr("shorter", off)
			}
			if err != nil && err != io.EOF {
				return err
			}
			if k == 0 && err == nil {
				return io.ErrNoProgress
			}
		}
		got := hex.EncodeToString(h.Sum(nil))
		switch {
		case stage:
			f.Blocks[b] = got
		case got != f.Blocks[b]:
			return fmt.Errorf("%w: block %d (bytes %d-%d) reads back as sha256 %s, manifest says %s",
				errMismatch, b, b*f.BlockSize, end, short(got), short(f.Blocks[b]))
		}
	}
	if hi == numBlocks(f.Size, f.BlockSize) {
		k, err := ra.ReadAt(buf[:1], f.Size)
		if k > 0 {
			return sizeErr("longer", f.Size)
		}
		if err != nil && err != io.EOF {
			return err
		}
	}
	return nil
}

// seqReaderAt reads at increasing offsets from a File that has no ReadAt
// (only test filesystems), skipping forward by reading.
type seqReaderAt struct {
	r   io.Reader
	pos int64
}

func (s *seqReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if off < s.pos {
		return 0, fmt.Errorf("read at %d after %d: file cannot seek back", off, s.pos)
	}
	if off > s.pos {
		k, err := io.CopyN(io.Discard, s.r, off-s.pos)
		s.pos += k
		if err != nil {
			return 0, err
		}
	}
	k, err := s.r.Read(p)
	s.pos += int64(k)
	if k > 0 && err == io.EOF {
		err = nil
	}
	return k, err
}

// hashWhole reads a file sequentially through a fresh descriptor. At
// staging (sy set) it records the SHA-256 and has sy fsync the file
// meanwhile, through a descriptor of its own; at verification it compares.
func hashWhole(ctx context.Context, root Root, dir string, f *FileEntry, sy *syncer, buf []byte, prog *progressor) error {
	stage := sy != nil
	file, err := openHashed(root, dir, f, sy)
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
