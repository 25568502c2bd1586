package pubcheck

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

// DurableFS is a [checkpoint.FS] that models what a power cut could leave
// on disk. It passes every operation to Base (the real filesystem by
// default) and, before each operation that changes storage (a create, a
// write, an fsync, a rename, a mkdir, a removal), records a [Cut]: the
// directory tree as it is, and what of it is durable. What is durable
// follows POSIX, not a particular filesystem's kindness:
//
//   - a file's contents are durable as of its last fsync (a file never
//     fsynced has lost them all);
//   - a directory's entries (names created, renamed or removed in it) are
//     durable as of its last fsync; a directory never fsynced since it was
//     made holds nothing durably, and neither its own name nor a renamed
//     entry survives until the directory holding it is fsynced.
//
// Everything under the modelled directory that exists when the DurableFS is
// made counts as durable. Files that the program writes behind the
// publisher's back (the staged checkpoint) are seen in the next cut, and
// count as durable only once the publisher fsyncs them.
type DurableFS struct {
	// Base performs the operations.
	Base checkpoint.FS
	dir  string

	mu    sync.Mutex
	kinds map[Ino]bool           // is a directory
	dents map[Ino]map[string]Ino // durable entries, by directory
	data  map[Ino]string         // durable contents (a key of blobs), by file
	blobs map[string][]byte      // contents by their SHA-256
	cuts  []Cut                  // in order
	seen  map[string]struct{}    // cuts' fingerprints, to keep distinct ones
	errs  []error                // what could not be recorded
	dsnap map[Ino]map[string]Ino // dents as of the last cut (shared, never mutated)
	fsnap map[Ino]string         // data as of the last cut (shared, never mutated)
}

// Ino identifies a file: its device and inode numbers.
type Ino struct{ Dev, Ino uint64 }

// Entry is one name of a tree in a [Cut].
type Entry struct {
	// Ino is the file it names.
	Ino Ino
	// Dir reports a directory.
	Dir bool
	// Blob is the key of the file's contents as they were (files only).
	Blob string
}

// Cut is a moment at which the power could fail: just before Op on Path.
type Cut struct {
	// Seq numbers the cut among all the operations recorded (a cut whose
	// trees equal an earlier one's is not kept).
	Seq int
	// Op and Path name the operation about to happen ("end" for the cut
	// taken by [DurableFS.End]).
	Op, Path string
	// Live is the tree as it is, by path relative to the modelled directory.
	Live  map[string]Entry
	dents map[Ino]map[string]Ino
	data  map[Ino]string
}

// View is what survives a cut.
type View int

// The views of a cut, from the most to the least that survives.
const (
	// Killed: the process dies, the kernel survives: the tree as it is.
	Killed View = iota
	// MetadataOnly: every change to the names survives, but file contents
	// only as of their last fsync (the "zero-length file after rename" of
	// delayed allocation).
	MetadataOnly
	// SyncedOnly: only what was fsynced survives, names and contents.
	SyncedOnly
)

func (v View) String() string {
	switch v {
	case Killed:
		return "killed"
	case MetadataOnly:
		return "metadata-only"
	case SyncedOnly:
		return "synced-only"
	}
	return "view(" + strconv.Itoa(int(v)) + ")"
}

// NewDurableFS models the directory dir (which should hold the publish
// directory and staging root) over the real filesystem; what dir holds now
// counts as durable.
func NewDurableFS(dir string) (*DurableFS, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, err
	}
	d := &DurableFS{Base: checkpoint.OSFS{}, dir: abs, kinds: map[Ino]bool{}, dents: map[Ino]map[string]Ino{},
		data: map[Ino]string{}, blobs: map[string][]byte{}, seen: map[string]struct{}{}}
	live, err := d.walk()
	if err != nil {
		return nil, err
	}
	byPath := map[string]Ino{}
	for p, e := range live {
		byPath[p] = e.Ino
		if e.Dir {
			d.dents[e.Ino] = map[string]Ino{}
		} else {
			d.data[e.Ino] = e.Blob
		}
	}
	for p, e := range live {
		if p != "." {
			d.dents[byPath[filepath.Dir(p)]][filepath.Base(p)] = e.Ino
		}
	}
	d.dsnap, d.fsnap = d.dents, d.data
	return d, nil
}

// inoOf returns the identity of a file from its FileInfo.
func inoOf(fi fs.FileInfo) (Ino, bool) {
	switch st := fi.Sys().(type) {
	case *syscall.Stat_t:
		return Ino{uint64(st.Dev), st.Ino}, true
	case interface{ Ident() (uint64, uint64) }:
		dev, ino := st.Ident()
		return Ino{dev, ino}, true
	}
	if s, ok := fi.Sys().(interface{ DevIno() (uint64, uint64) }); ok {
		dev, ino := s.DevIno()
		return Ino{dev, ino}, true
	}
	return Ino{}, false
}

// statIno is the identity of the file at the absolute path p (not followed).
func statIno(p string) (Ino, fs.FileInfo, error) {
	var st syscall.Stat_t
	if err := syscall.Lstat(p, &st); err != nil {
		return Ino{}, nil, &fs.PathError{Op: "lstat", Path: p, Err: err}
	}
	fi, err := os.Lstat(p)
	if err != nil {
		return Ino{}, nil, err
	}
	return Ino{uint64(st.Dev), st.Ino}, fi, nil
}

// maxBlob bounds the contents a cut keeps of one file.
const maxBlob = 4 << 20

// blob stores b and returns its key. d.mu is held.
func (d *DurableFS) blob(b []byte) string {
	s := sha256.Sum256(b)
	k := string(s[:])
	if _, ok := d.blobs[k]; !ok {
		d.blobs[k] = b
	}
	return k
}

// readBounded reads at most maxBlob bytes of the file at p.
func readBounded(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxBlob+1))
	if err == nil && len(b) > maxBlob {
		err = fmt.Errorf("%s: larger than %d bytes", p, maxBlob)
	}
	return b, err
}

// walk returns the tree under the modelled directory as it is. d.mu is
// held (or d is not shared yet).
func (d *DurableFS) walk() (map[string]Entry, error) {
	live := map[string]Entry{}
	err := filepath.WalkDir(d.dir, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil // removed meanwhile
			}
			return err
		}
		rel, _ := filepath.Rel(d.dir, p)
		ino, fi, err := statIno(p)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		} else if err != nil {
			return err
		}
		e := Entry{Ino: ino, Dir: fi.IsDir()}
		switch {
		case fi.IsDir():
		case fi.Mode().IsRegular():
			b, err := readBounded(p)
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			} else if err != nil {
				return err
			}
			e.Blob = d.blob(b)
		default:
			return nil // symlinks, FIFOs: not the publisher's
		}
		d.kinds[ino] = e.Dir
		live[filepath.ToSlash(rel)] = e
		return nil
	})
	return live, err
}

// cut records a cut before op on path.
func (d *DurableFS) cut(op, path string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cutLocked(op, path)
}

func (d *DurableFS) cutLocked(op, path string) {
	live, err := d.walk()
	if err != nil {
		d.errs = append(d.errs, fmt.Errorf("cut before %s %s: %w", op, path, err))
		return
	}
	c := Cut{Seq: len(d.seen), Op: op, Path: path, Live: live, dents: d.dsnap, data: d.fsnap}
	fp := d.fingerprint(c)
	if _, dup := d.seen[fp]; dup {
		d.seen[fp+strconv.Itoa(len(d.seen))] = struct{}{}
		return
	}
	d.seen[fp] = struct{}{}
	d.cuts = append(d.cuts, c)
}

// fingerprint says what the views of c are: equal fingerprints, equal
// images.
func (d *DurableFS) fingerprint(c Cut) string {
	var b strings.Builder
	for _, v := range []View{Killed, MetadataOnly, SyncedOnly} {
		img := c.image(v, d.kinds)
		names := make([]string, 0, len(img))
		for p := range img {
			names = append(names, p)
		}
		sort.Strings(names)
		for _, p := range names {
			fmt.Fprintf(&b, "%s\x00%q\x00", p, img[p])
		}
		b.WriteString("\x01")
	}
	return b.String()
}

// recordData makes the contents of the open file f (ino) durable as they
// are now.
func (d *DurableFS) recordData(f checkpoint.File) {
	fi, err := f.Stat()
	var ino Ino
	ok := false
	if err == nil {
		ino, ok = inoOf(fi)
	}
	p := f.Name()
	if fd, isFd := f.(interface{ Fd() uintptr }); isFd {
		p = "/proc/self/fd/" + strconv.FormatUint(uint64(fd.Fd()), 10)
	}
	b, rerr := readBounded(p)
	d.mu.Lock()
	defer d.mu.Unlock()
	if !ok || rerr != nil {
		d.errs = append(d.errs, fmt.Errorf("record fsync of %s: %v %v", f.Name(), err, rerr))
		return
	}
	data := make(map[Ino]string, len(d.data)+1)
	for k, v := range d.data {
		data[k] = v
	}
	data[ino] = d.blob(b)
	d.kinds[ino] = false
	d.data, d.fsnap = data, data
}

// recordDir makes the entries of the directory at the absolute path p
// durable as they are now.
func (d *DurableFS) recordDir(p string) {
	ino, _, err := statIno(p)
	var ents []os.DirEntry
	if err == nil {
		ents, err = os.ReadDir(p)
	}
	kids := map[string]Ino{}
	for _, e := range ents {
		if err != nil {
			break
		}
		var k Ino
		var fi fs.FileInfo
		k, fi, err = statIno(filepath.Join(p, e.Name()))
		if err == nil {
			kids[e.Name()] = k
			d.mu.Lock()
			d.kinds[k] = fi.IsDir()
			d.mu.Unlock()
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		d.errs = append(d.errs, fmt.Errorf("record fsync of directory %s: %w", p, err))
		return
	}
	dents := make(map[Ino]map[string]Ino, len(d.dents)+1)
	for k, v := range d.dents {
		dents[k] = v
	}
	dents[ino] = kids
	d.kinds[ino] = true
	d.dents, d.dsnap = dents, dents
}

// End records the cut after the last operation (the run has returned) and
// returns every cut recorded, or an error if the model could not follow
// the filesystem.
func (d *DurableFS) End() ([]Cut, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cutLocked("end", d.dir)
	return slices.Clone(d.cuts), errors.Join(d.errs...)
}

// Ops returns how many operations were recorded (cuts, before the
// duplicates were dropped).
func (d *DurableFS) Ops() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.seen)
}

// Blob returns the contents stored under key.
func (d *DurableFS) Blob(key string) []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.blobs[key]
}

// image returns what survives c in view v: each surviving path (relative
// to the modelled directory) with "" for a directory and the key of the
// contents for a file ("" contents are the key of no bytes).
func (c Cut) image(v View, kinds map[Ino]bool) map[string]string {
	empty := sha256.Sum256(nil)
	none := string(empty[:])
	img := map[string]string{}
	switch v {
	case Killed, MetadataOnly:
		for p, e := range c.Live {
			switch {
			case e.Dir:
				img[p] = ""
			case v == Killed:
				img[p] = e.Blob
			default:
				if k, ok := c.data[e.Ino]; ok {
					img[p] = k
				} else {
					img[p] = none
				}
			}
		}
	case SyncedOnly:
		root, ok := c.Live["."]
		if !ok {
			return img
		}
		var visit func(p string, dir Ino, depth int)
		visit = func(p string, dir Ino, depth int) {
			img[p] = ""
			if depth > 64 {
				return
			}
			for name, k := range c.dents[dir] {
				q := name
				if p != "." {
					q = p + "/" + name
				}
				if _, isDir := c.dents[k]; isDir || kinds[k] {
					visit(q, k, depth+1)
				} else if b, ok := c.data[k]; ok {
					img[q] = b
				} else {
					img[q] = none
				}
			}
		}
		visit(".", root.Ino, 0)
	}
	return img
}

// Materialize writes what survives c in view v under dir (which must not
// exist), with the contents stored in d.
func (d *DurableFS) Materialize(c Cut, v View, dir string) error {
	d.mu.Lock()
	img := c.image(v, d.kinds)
	d.mu.Unlock()
	names := make([]string, 0, len(img))
	for p := range img {
		names = append(names, p)
	}
	sort.Strings(names) // parents first
	for _, p := range names {
		dst := filepath.Join(dir, filepath.FromSlash(p))
		if img[p] == "" {
			if err := os.MkdirAll(dst, 0o755); err != nil {
				return err
			}
			continue
		}
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(dst, d.Blob(img[p]), 0o644); err != nil {
			return err
		}
	}
	return nil
}

var _ checkpoint.FS = (*DurableFS)(nil)

// before records a cut before op on path.
func (d *DurableFS) before(op Op, path string) { d.cut(string(op), path) }

// synced records that f's contents were fsynced.
func (d *DurableFS) synced(f checkpoint.File) { d.recordData(f) }

// syncedDir records that the directory at path was fsynced.
func (d *DurableFS) syncedDir(path string) { d.recordDir(path) }

// MkdirAll implements checkpoint.FS.
func (d *DurableFS) MkdirAll(path string, perm fs.FileMode) error {
	d.before(OpMkdir, path)
	return d.Base.MkdirAll(path, perm)
}

// OpenRoot implements checkpoint.FS.
func (d *DurableFS) OpenRoot(dir string) (checkpoint.Root, error) {
	return hookRoot(d.Base, d, dir)
}

// opHooks is told of the operations of a hooked root that change storage.
type opHooks interface {
	// before is called before op on path (an absolute path).
	before(op Op, path string)
	// synced is called after f was fsynced; syncedDir after the directory
	// at path was.
	synced(f checkpoint.File)
	syncedDir(path string)
}

// hookRoot opens dir in base as a root whose changes h is told of.
func hookRoot(base checkpoint.FS, h opHooks, dir string) (checkpoint.Root, error) {
	r, err := base.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &hookedRoot{Root: r, h: h}, nil
}

// hookedRoot is a checkpoint.Root whose changes h is told of.
type hookedRoot struct {
	checkpoint.Root
	h opHooks
}

func (r *hookedRoot) full(name string) string {
	return filepath.Join(r.Path(), filepath.FromSlash(name))
}

// OpenFile implements checkpoint.Root.
func (r *hookedRoot) OpenFile(name string, flag int, perm fs.FileMode) (checkpoint.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC) != 0 {
		r.h.before(OpCreate, r.full(name))
	}
	f, err := r.Root.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &hookedFile{File: f, h: r.h}, nil
}

// MkdirAll implements checkpoint.Root.
func (r *hookedRoot) MkdirAll(name string, perm fs.FileMode) error {
	r.h.before(OpMkdir, r.full(name))
	return r.Root.MkdirAll(name, perm)
}

// Rename implements checkpoint.Root.
func (r *hookedRoot) Rename(oldname, newname string) error {
	r.h.before(OpRename, r.full(newname))
	return r.Root.Rename(oldname, newname)
}

// RenameNoReplace implements checkpoint.Root.
func (r *hookedRoot) RenameNoReplace(oldname string, to checkpoint.Root, newname string) error {
	if t, ok := to.(*hookedRoot); ok {
		to = t.Root
	}
	r.h.before(OpRenameNR, filepath.Join(to.Path(), filepath.FromSlash(newname)))
	return r.Root.RenameNoReplace(oldname, to, newname)
}

// RemoveAll implements checkpoint.Root.
func (r *hookedRoot) RemoveAll(name string) error {
	r.h.before(OpRemoveAll, r.full(name))
	return r.Root.RemoveAll(name)
}

// SyncDir implements checkpoint.Root.
func (r *hookedRoot) SyncDir(name string) error {
	r.h.before(OpSyncDir, r.full(name))
	if err := r.Root.SyncDir(name); err != nil {
		return err
	}
	r.h.syncedDir(r.full(name))
	return nil
}

// hookedFile is a checkpoint.File whose writes and fsyncs h is told of.
type hookedFile struct {
	checkpoint.File
	h opHooks
}

// Fd returns the file's descriptor (the publisher locks files by it).
func (f *hookedFile) Fd() uintptr {
	if x, ok := f.File.(interface{ Fd() uintptr }); ok {
		return x.Fd()
	}
	return ^uintptr(0)
}

func (f *hookedFile) Write(p []byte) (int, error) {
	f.h.before(OpWrite, f.Name())
	return f.File.Write(p)
}

func (f *hookedFile) Sync() error {
	f.h.before(OpSync, f.Name())
	if err := f.File.Sync(); err != nil {
		return err
	}
	f.h.synced(f.File)
	return nil
}

// ErrNotDurable reports a cut after which what survives breaks a promise
// of the publisher.
var ErrNotDurable = errors.New("not durable")

// DurabilityRun describes the run whose cuts [CheckDurability] checks.
type DurabilityRun struct {
	// Result is what Publish returned.
	Result *checkpoint.Result
	// PublishDir and Name are the run's; PublishDir lies in the modelled
	// directory.
	PublishDir, Name string
	// Scratch is an empty directory for the images of the cuts.
	Scratch string
}

// CheckDurability checks every cut of run, in every [View], and returns
// one error per broken promise (nil if none). Of each image it asserts:
//
//   - PublishedOnlyVerified: a checkpoint at the name is run's and
//     verifies;
//   - a journal whose durable receipts say Published has its checkpoint,
//     verifying, with the digest the receipt names;
//   - every receipt is durable before the next transition starts: at most
//     one receipt (the one being written) is missing from the
//     metadata-only image's journal, compared with the live one;
//   - recovery (checkpoint.Recover on the image) succeeds, removes the
//     staging directory, reports Published exactly when the checkpoint is
//     there and verifies, and leaves a journal that model/program accepts;
//   - after Publish returned, the synced-only image holds what it said:
//     the checkpoint of a Published run (unless a warning said its
//     directory's fsync failed) and a journal ending in the outcome.
func CheckDurability(ctx context.Context, d *DurableFS, cuts []Cut, run DurabilityRun) []error {
	res := run.Result
	pubRel, err := filepath.Rel(d.dir, run.PublishDir)
	if err != nil || !filepath.IsLocal(pubRel) {
		return []error{fmt.Errorf("publish directory %s is not in the modelled %s", run.PublishDir, d.dir)}
	}
	journalRel, err := filepath.Rel(d.dir, res.Journal)
	if err != nil || !filepath.IsLocal(journalRel) {
		return []error{fmt.Errorf("journal %s is not in the modelled %s", res.Journal, d.dir)}
	}
	journalRel = filepath.ToSlash(journalRel)
	var errs []error
	n := 0
	for _, c := range cuts {
		lines := map[View]int{}
		for _, v := range []View{Killed, MetadataOnly, SyncedOnly} {
			at := fmt.Sprintf("cut %d (before %s %s), %s", c.Seq, c.Op, c.Path, v)
			d.mu.Lock()
			img := c.image(v, d.kinds)
			d.mu.Unlock()
			if k, ok := img[journalRel]; ok && k != "" {
				lines[v] = strings.Count(string(d.Blob(k)), "\n")
			}
			dir := filepath.Join(run.Scratch, strconv.Itoa(n))
			n++
			if err := d.Materialize(c, v, dir); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", at, err))
				continue
			}
			for _, e := range checkImage(ctx, dir, pubRel, journalRel, run, c.Op == "end" && v == SyncedOnly) {
				errs = append(errs, fmt.Errorf("%w: %s: %w", ErrNotDurable, at, e))
			}
			_ = os.RemoveAll(dir)
		}
		if lines[Killed]-lines[MetadataOnly] > 1 {
			errs = append(errs, fmt.Errorf("%w: cut %d (before %s %s): the journal holds %d lines, %d of them fsynced: a receipt was not durable before the next transition",
				ErrNotDurable, c.Seq, c.Op, c.Path, lines[Killed], lines[MetadataOnly]))
		}
	}
	return errs
}

// checkImage checks one image of a cut at dir (see CheckDurability); end
// says it is the synced-only image after Publish returned.
func checkImage(ctx context.Context, dir, pubRel, journalRel string, run DurabilityRun, end bool) []error {
	res := run.Result
	var errs []error
	pub := filepath.Join(dir, pubRel)
	target := filepath.Join(pub, run.Name)
	// present reports whether the image holds a checkpoint at the name,
	// and checks that it is the run's and verifies.
	present := func(when string) (bool, string) {
		if _, err := os.Lstat(target); errors.Is(err, fs.ErrNotExist) {
			return false, ""
		}
		m, err := checkpoint.Verify(ctx, checkpoint.OSFS{}, target, nil)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: a checkpoint at the name does not verify: %w", when, err))
			return true, ""
		}
		if m.Run != res.RunID {
			errs = append(errs, fmt.Errorf("%s: the checkpoint at the name is run %q's, not %q's", when, m.Run, res.RunID))
		}
		return true, m.Digest
	}
	there, digest := present("on the disk")
	journal := filepath.Join(dir, filepath.FromSlash(journalRel))
	var sum *checkpoint.JournalSummary
	if f, err := os.Open(journal); err == nil {
		sum, _ = checkpoint.ReadJournal(f)
		f.Close()
	}
	if sum != nil {
		for _, e := range sum.Events {
			if e.Action != checkpoint.ActionAtomicPublication && e.State[checkpoint.VarPhase] != checkpoint.PhasePublished.String() {
				continue
			}
			want, _ := e.Detail["digest"].(string)
			switch {
			case !there:
				errs = append(errs, fmt.Errorf("the journal says published, but no checkpoint survives"))
			case digest != "" && want != digest:
				errs = append(errs, fmt.Errorf("the journal says published with digest %s, the checkpoint's is %s", want, digest))
			}
			break
		}
	}
	if end {
		last := ""
		if sum != nil {
			last = sum.Last
		}
		if last != res.Outcome.String() {
			errs = append(errs, fmt.Errorf("the run returned %s, but the fsynced journal ends in %q", res.Outcome, last))
		}
		if res.Outcome == checkpoint.PhasePublished && len(res.Warnings) == 0 && !there {
			errs = append(errs, fmt.Errorf("the run returned Published (durable), but the checkpoint did not survive"))
		}
	}

	// Recovery on the image.
	if _, err := os.Lstat(pub); err != nil {
		return errs // nothing of the run survives
	}
	reps, err := checkpoint.Recover(ctx, checkpoint.RecoverOptions{PublishDir: pub})
	if err != nil {
		return append(errs, fmt.Errorf("recovery: %w", err))
	}
	staging := filepath.Join(pub, filepath.FromSlash(checkpoint.MetaDir+"/staging"), res.RunID)
	if _, err := os.Lstat(staging); err == nil {
		errs = append(errs, fmt.Errorf("recovery left the staging directory"))
	}
	_, digest = present("after recovery")
	for _, rep := range reps {
		if rep.Run != res.RunID {
			continue
		}
		if rep.Error != "" {
			errs = append(errs, fmt.Errorf("recovery: %s", rep.Error))
		}
		if (rep.Outcome == checkpoint.OutcomePublished) != (digest != "") {
			errs = append(errs, fmt.Errorf("recovery reports %s, a verified checkpoint present: %v", rep.Outcome, digest != ""))
		}
	}
	var after *checkpoint.JournalSummary
	if f, err := os.Open(journal); err == nil {
		after, _ = checkpoint.ReadJournal(f)
		f.Close()
	}
	// A journal without receipts (the run died before its Init receipt
	// was durable) records no run, and recovery leaves it so.
	if after != nil && len(after.Events) > 0 {
		rep, err := CheckJournal(ctx, journal)
		switch {
		case err != nil:
			errs = append(errs, fmt.Errorf("the journal after recovery: %w", err))
		case rep.Verdict() == check.Violation:
			errs = append(errs, fmt.Errorf("the journal after recovery violates model/program: %s", rep.Verdict()))
		}
	}
	return errs
}
