package checkpoint

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"time"
)

// ManifestName is the manifest's file name at the root of a staged and of a
// published checkpoint. A program may not write a file of that name.
const ManifestName = "tracecheck-manifest.json"

// ManifestFormat is the manifest format version this package writes.
const ManifestFormat = 1

// FileEntry is one file of a checkpoint.
type FileEntry struct {
	// Path is the file's slash-separated path relative to the checkpoint.
	Path string `json:"path"`
	// Size is its length in bytes.
	Size int64 `json:"size"`
	// SHA256 is the hex SHA-256 of its contents. A file with Blocks has it
	// only if it was asked for ([StageOptions.WholeFileSHA256]) or the
	// evaluation result names the file; otherwise it is "" (omitted).
	SHA256 string `json:"sha256,omitempty"`
	// BlockSize, for a large file (at least two blocks), is the size of the
	// blocks Blocks hashes ([BlockSize] when staged by this package); 0
	// (omitted) otherwise.
	BlockSize int64 `json:"block_size,omitempty"`
	// Blocks, for a large file, is the hex SHA-256 of each BlockSize-byte
	// block in order (the last may be shorter): the file's hash, with Size.
	// Staging hashes them, and verification checks them, several ranges of
	// blocks at a time, so one large file is spread over the cores. When
	// SHA256 is also set, both were computed from the same reads, so
	// matching blocks prove the bytes are those SHA256 describes. A
	// manifest without Blocks (every manifest written before they existed)
	// verifies SHA256.
	Blocks []string `json:"blocks,omitempty"`
}

// Manifest describes a checkpoint: every file, the evaluation that passed,
// and the run that produced it.
type Manifest struct {
	// Format is the manifest format version, [ManifestFormat].
	Format int `json:"format"`
	// Run is the ID of the run that staged the checkpoint.
	Run string `json:"run"`
	// Name is the checkpoint's published name.
	Name string `json:"name"`
	// Created is when staging finished.
	Created time.Time `json:"created"`
	// Files lists every regular file, sorted by Path.
	Files []FileEntry `json:"files"`
	// Eval is the program's evaluation result, verbatim.
	Eval json.RawMessage `json:"eval,omitempty"`
	// Digest is "sha256:" and the hex SHA-256 of Files' JSON encoding: the
	// checkpoint's hash.
	Digest string `json:"digest"`
}

// Bytes returns the total size of the manifest's files.
func (m *Manifest) Bytes() int64 {
	var n int64
	for _, f := range m.Files {
		n += f.Size
	}
	return n
}

func digestOf(files []FileEntry) string {
	b, _ := json.Marshal(files) // FileEntry always encodes
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:])
}

// Progress reports the advance of a long step.
type Progress struct {
	// Step is "executing", "hashing" or "verifying".
	Step string
	// Done and Total count bytes (Total 0 when unknown, e.g. executing).
	Done, Total int64
	// Elapsed is the time since the step began.
	Elapsed time.Duration
}

// Limits on a checkpoint, checked while staging and verifying.
const (
	// MaxFiles is the most files (and directories) a checkpoint may hold.
	MaxFiles = 100_000
	// MaxDepth is the deepest a checkpoint's directories may nest.
	MaxDepth = 128
	// MaxManifestBytes is the largest manifest read back.
	MaxManifestBytes = 64 << 20
)

type walked struct {
	files []FileEntry // Path and Size filled
	dirs  []string    // root-relative, deepest last
}

// walk lists the files of the checkpoint at dir (a name in root), refusing
// anything but regular files and directories: symlinks, special files,
// files with several hard links (which could share their bytes with a file
// outside the checkpoint), mount points, names that are not valid UTF-8 or
// hold control or format characters, more than MaxFiles entries, nesting
// deeper than MaxDepth. skipManifest leaves the root manifest out;
// otherwise it is refused as reserved.
func walk(root Root, dir string, skipManifest bool) (walked, error) {
	var w walked
	entries := 0
	var rec func(rel string, depth int) error
	rec = func(rel string, depth int) error {
		name := path.Join(dir, rel)
		w.dirs = append(w.dirs, name)
		if depth > MaxDepth {
			return fmt.Errorf("%w: %s: directories nested deeper than %d", ErrUnsafeFile, rel, MaxDepth)
		}
		ents, err := root.ReadDir(name, MaxFiles-entries)
		if errors.Is(err, ErrTooLarge) {
			return fmt.Errorf("%w: more than %d files and directories: %w", ErrUnsafeFile, MaxFiles, err)
		}
		if err != nil {
			return fmt.Errorf("%w: read directory: %w", ErrSave, err)
		}
		entries += len(ents)
		for _, e := range ents {
			r := path.Join(rel, e.Name())
			if rel == "" {
				r = e.Name()
			}
			if err := checkComponent(e.Name()); err != nil {
				return fmt.Errorf("%w: in %s: %w", ErrUnsafeFile, printable(rel), err)
			}
			if r == ManifestName {
				if skipManifest {
					continue
				}
				return fmt.Errorf("%w: %s is reserved for the publisher", ErrUnsafeFile, ManifestName)
			}
			fi, err := root.Lstat(path.Join(dir, r))
			if err != nil {
				return fmt.Errorf("%w: %w", ErrSave, err)
			}
			id, _ := idOf(fi)
			switch mode := fi.Mode(); {
			case mode&fs.ModeSymlink != 0:
				target, _ := root.Readlink(path.Join(dir, r))
				where := "inside"
				if !symlinkInside(r, target) {
					where = "outside"
				}
				return fmt.Errorf("%w: %s is a symlink to %q (points %s the checkpoint; symlinks are not published)", ErrUnsafeFile, r, target, where)
			case id.dev != 0 && id.dev != root.Device():
				return fmt.Errorf("%w: %s is on another filesystem (a mount point)", ErrUnsafeFile, r)
			case mode.IsDir():
				if err := rec(r, depth+1); err != nil {
					return err
				}
			case mode.IsRegular():
				if id.nlink > 1 {
					return fmt.Errorf("%w: %s has %d hard links (it may share its bytes with a file outside the checkpoint)", ErrUnsafeFile, r, id.nlink)
				}
				w.files = append(w.files, FileEntry{Path: r, Size: fi.Size()})
			default:
				return fmt.Errorf("%w: %s is a special file (%s)", ErrUnsafeFile, r, fileKind(mode))
			}
		}
		return nil
	}
	if err := rec("", 1); err != nil {
		return walked{}, err
	}
	sort.Slice(w.files, func(i, j int) bool { return w.files[i].Path < w.files[j].Path })
	return w, nil
}

// printable quotes a name for a message if it needs it.
func printable(s string) string {
	if s == "" {
		return "the checkpoint's top directory"
	}
	if checkChars(s) != nil {
		return fmt.Sprintf("%q", s)
	}
	return s
}

// symlinkInside reports whether a symlink at rel (relative to the
// checkpoint) to target points inside the checkpoint.
func symlinkInside(rel, target string) bool {
	if filepath.IsAbs(target) {
		return false
	}
	return filepath.IsLocal(filepath.Join(filepath.Dir(filepath.FromSlash(rel)), target))
}

// StageOptions parameterise [Stage].
type StageOptions struct {
	Run, Name string
	// Eval is the program's evaluation result, recorded in the manifest.
	Eval json.RawMessage
	// Clock stamps the manifest (default the system clock).
	Clock Clock
	// Progress, if set, is called while hashing.
	Progress func(Progress)
	// WholeFileSHA256 records every large file's whole-file SHA-256 (as
	// sha256sum prints it) besides its block hashes. It costs staging a
	// second hash of each large file, on another core. Files the
	// evaluation result names get it regardless.
	WholeFileSHA256 bool
}

// Stage hashes and fsyncs every file under dir, fsyncs every directory, and
// writes and fsyncs the manifest. dir is opened as a [Root]: nothing below
// it is reached through a symlink. Errors wrap [ErrUnsafeFile],
// [ErrEmptyCheckpoint] or [ErrSave], or are ctx's error.
func Stage(ctx context.Context, fsys FS, dir string, opt StageOptions) (*Manifest, error) {
	root, err := fsys.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSave, err)
	}
	defer root.Close()
	sy := newSyncer()
	m, _, err := stage(ctx, root, ".", opt, sy)
	if serr := sy.wait(); serr != nil && err == nil {
		err = fmt.Errorf("%w: %w", ErrSave, serr)
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// StageAndVerify stages dir as [Stage] does, then reloads and verifies it as
// [Verify] does, as the publisher does: the files' fsyncs, started while
// staging hashes them, overlap the hashing and the verification, and are
// all complete when it returns without error (an fsync failure wraps
// [ErrSave]).
func StageAndVerify(ctx context.Context, fsys FS, dir string, opt StageOptions) (*Manifest, error) {
	root, err := fsys.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrSave, err)
	}
	defer root.Close()
	sy := newSyncer()
	m, mb, err := stage(ctx, root, ".", opt, sy)
	if err == nil {
		m, err = verify(ctx, root, ".", verifyOptions{Progress: opt.Progress, Want: mb, Clock: opt.Clock})
	}
	if serr := sy.wait(); serr != nil && err == nil {
		err = fmt.Errorf("%w: %w", ErrSave, serr)
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// stage is Stage on the checkpoint at dir in root, with the files' fsyncs
// left running in sy. It returns the manifest and the bytes written for it.
func stage(ctx context.Context, root Root, dir string, opt StageOptions, sy *syncer) (*Manifest, []byte, error) {
	w, err := walk(root, dir, false)
	if err != nil {
		return nil, nil, err
	}
	if len(w.files) == 0 {
		return nil, nil, fmt.Errorf("%w: the staging directory holds no file (only empty directories)", ErrEmptyCheckpoint)
	}
	var total int64
	for _, f := range w.files {
		total += f.Size
	}
	whole := make([]bool, len(w.files))
	claims := claimedFiles(opt.Eval)
	for i, f := range w.files {
		whole[i] = opt.WholeFileSHA256 || claims[f.Path]
	}
	prog := newProgressor("hashing", total, opt.Progress, opt.Clock)
	if err := hashFiles(ctx, root, dir, w.files, sy, whole, prog); err != nil {
		if ctx.Err() != nil {
			return nil, nil, ctx.Err()
		}
		return nil, nil, fmt.Errorf("%w: %w", ErrSave, err)
	}
	prog.finish()
	clock := opt.Clock
	if clock == nil {
		clock = SystemClock{}
	}
	m := &Manifest{Format: ManifestFormat, Run: opt.Run, Name: opt.Name, Created: clock.Now().UTC(),
		Files: w.files, Eval: opt.Eval, Digest: digestOf(w.files)}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, nil, fmt.Errorf("%w: encode manifest: %w", ErrSave, err)
	}
	b = append(b, '\n')
	if len(b) > MaxManifestBytes {
		return nil, nil, fmt.Errorf("%w: %w: the manifest would be %d bytes, larger than %s", ErrSave, ErrTooLarge, len(b), sizeText(MaxManifestBytes))
	}
	// The manifest's and the directories' fsyncs join the files' in sy:
	// their journal commit then waits for the files' writeback in the
	// background, while verification reads, not before it starts.
	mf, err := writeNew(root, path.Join(dir, ManifestName), b)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: manifest: %w", ErrSave, err)
	}
	sy.start(mf)
	for i := len(w.dirs) - 1; i >= 0; i-- {
		d := w.dirs[i]
		sy.do(root.Path()+"/"+d, func() error { return root.SyncDir(d) })
	}
	return m, b, nil
}

// writeFileSync creates name in root (it must not exist), writes b and
// fsyncs it.
func writeFileSync(root Root, name string, b []byte) error {
	f, err := writeNew(root, name, b)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("fsync %s: %w", f.Name(), err)
	}
	return f.Close()
}

// writeNew creates name in root (it must not exist), writes b, and
// returns the open file.
func writeNew(root Root, name string, b []byte) (File, error) {
	f, err := root.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadManifest reads and decodes dir's manifest from disk. It reads at most
// [MaxManifestBytes], through no symlink, and refuses a manifest that is
// not strict JSON (a repeated member name, a non-finite number), has
// unknown fields or lists a path that is not clean.
func ReadManifest(fsys FS, dir string) (*Manifest, error) {
	root, err := fsys.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrVerification, err)
	}
	defer root.Close()
	m, _, err := readManifest(root, ".")
	return m, err
}

// readManifest reads the manifest of the checkpoint at dir in root and
// returns it with its bytes.
func readManifest(root Root, dir string) (*Manifest, []byte, error) {
	name := path.Join(dir, ManifestName)
	f, err := root.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %w", ErrVerification, err)
	}
	defer f.Close()
	b, err := readBounded(f, MaxManifestBytes, "the manifest")
	if err != nil {
		return nil, nil, fmt.Errorf("%w: read manifest: %w", ErrVerification, err)
	}
	if err := strictJSON(b, 8); err != nil {
		return nil, nil, fmt.Errorf("%w: manifest %s: %w", ErrVerification, f.Name(), err)
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, nil, fmt.Errorf("%w: manifest %s: %w", ErrVerification, f.Name(), err)
	}
	if m.Format != ManifestFormat {
		return nil, nil, fmt.Errorf("%w: manifest format %d, want %d", ErrVerification, m.Format, ManifestFormat)
	}
	if len(m.Files) > MaxFiles {
		return nil, nil, fmt.Errorf("%w: the manifest lists %d files, more than %d", ErrVerification, len(m.Files), MaxFiles)
	}
	for i, fe := range m.Files {
		if err := checkRelPath(fe.Path); err != nil {
			return nil, nil, fmt.Errorf("%w: manifest lists %q: %w", ErrVerification, fe.Path, err)
		}
		if i > 0 && m.Files[i-1].Path >= fe.Path {
			return nil, nil, fmt.Errorf("%w: manifest's files are not sorted and distinct at %q", ErrVerification, fe.Path)
		}
		if fe.Size < 0 {
			return nil, nil, fmt.Errorf("%w: manifest gives %s a negative size", ErrVerification, fe.Path)
		}
	}
	return &m, b, nil
}

// Verify reloads dir from disk and checks it against its manifest: the
// manifest's digest, the set of files, each file's size and SHA-256 (read
// through a fresh descriptor), and the hashes the evaluation result claims.
// dir is opened as a [Root]: nothing below it is reached through a symlink.
// Errors wrap [ErrVerification] or [ErrUnsafeFile], or are ctx's error.
func Verify(ctx context.Context, fsys FS, dir string, progress func(Progress)) (*Manifest, error) {
	root, err := fsys.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrVerification, err)
	}
	defer root.Close()
	return verify(ctx, root, ".", verifyOptions{Progress: progress})
}

// verifyOptions parameterise verify.
type verifyOptions struct {
	// Progress, if set, is called while verifying, timed by Clock.
	Progress func(Progress)
	Clock    Clock
	// Want, if set, is the manifest the publisher wrote: the manifest on
	// disk must be exactly those bytes, so that a manifest rewritten
	// consistently with edited files is caught.
	Want []byte
}

// verify is Verify on the checkpoint at dir in root.
func verify(ctx context.Context, root Root, dir string, o verifyOptions) (*Manifest, error) {
	m, got, err := readManifest(root, dir)
	if err != nil {
		return nil, err
	}
	if o.Want != nil && !bytes.Equal(got, o.Want) {
		return nil, fmt.Errorf("%w: the manifest is not the one staging wrote (it was rewritten)", ErrVerification)
	}
	if d := digestOf(m.Files); d != m.Digest {
		return nil, fmt.Errorf("%w: manifest digest %s does not match its file list (%s)", ErrVerification, m.Digest, d)
	}
	for _, f := range m.Files {
		if err := checkBlocks(f); err != nil {
			return nil, fmt.Errorf("%w: manifest: %s: %w", ErrVerification, f.Path, err)
		}
	}
	w, err := walk(root, dir, true)
	if err != nil {
		if errors.Is(err, ErrUnsafeFile) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", ErrVerification, err)
	}
	want2 := make(map[string]FileEntry, len(m.Files))
	for _, f := range m.Files {
		want2[f.Path] = f
	}
	for _, f := range w.files {
		if _, ok := want2[f.Path]; !ok {
			return nil, fmt.Errorf("%w: %s is not in the manifest", ErrVerification, f.Path)
		}
	}
	if len(w.files) != len(m.Files) {
		have := make(map[string]bool, len(w.files))
		for _, f := range w.files {
			have[f.Path] = true
		}
		for _, f := range m.Files {
			if !have[f.Path] {
				return nil, fmt.Errorf("%w: %s is missing", ErrVerification, f.Path)
			}
		}
	}
	// Every file's size as listed must be the manifest's before reading.
	for _, f := range w.files {
		if want2[f.Path].Size != f.Size {
			return nil, fmt.Errorf("%w: %s is %d bytes, manifest says %d", ErrVerification, f.Path, f.Size, want2[f.Path].Size)
		}
	}
	prog := newProgressor("verifying", m.Bytes(), o.Progress, o.Clock)
	if err := hashFiles(ctx, root, dir, m.Files, nil, nil, prog); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: %w", ErrVerification, err)
	}
	prog.finish()
	if err := checkClaims(m); err != nil {
		return nil, err
	}
	return m, nil
}

// checkBlocks checks that an entry has a hash to verify and that its
// block list fits its size: no blocks and no block size (and then a
// whole-file SHA-256), or one hash per block.
func checkBlocks(f FileEntry) error {
	switch {
	case f.BlockSize == 0 && len(f.Blocks) == 0 && f.SHA256 == "":
		return errors.New("no sha256 and no block hashes")
	case f.BlockSize == 0 && len(f.Blocks) == 0:
		return nil
	case f.BlockSize <= 0 || f.Size < 0:
		return fmt.Errorf("block size %d for %d blocks of a %d-byte file", f.BlockSize, len(f.Blocks), f.Size)
	case int64(len(f.Blocks)) != numBlocks(f.Size, f.BlockSize):
		return fmt.Errorf("%d block hashes for %d bytes in blocks of %d", len(f.Blocks), f.Size, f.BlockSize)
	}
	return nil
}

func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}

// claimedFiles returns the paths an evaluation result names in "files"
// (none if it has no such map or does not parse: verification reports
// that).
func claimedFiles(eval []byte) map[string]bool {
	if len(eval) == 0 {
		return nil
	}
	e, err := ParseEval(eval)
	if err != nil {
		return nil
	}
	paths := make(map[string]bool, len(e.Files))
	for p := range e.Files {
		paths[p] = true
	}
	return paths
}

// checkClaims checks that the files the evaluation says it evaluated are
// the files staged.
func checkClaims(m *Manifest) error {
	if len(m.Eval) == 0 {
		return nil
	}
	e, err := ParseEval(m.Eval)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrVerification, err)
	}
	byPath := make(map[string]string, len(m.Files))
	for _, f := range m.Files {
		byPath[f.Path] = f.SHA256
	}
	paths := make([]string, 0, len(e.Files))
	for p := range e.Files {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	for _, p := range paths {
		got, ok := byPath[p]
		if !ok {
			return fmt.Errorf("%w: the evaluation names %s, which is not in the checkpoint", ErrVerification, p)
		}
		if got == "" {
			return fmt.Errorf("%w: the evaluation names %s, but the manifest records no whole-file sha256 for it", ErrVerification, p)
		}
		if got != e.Files[p] {
			return fmt.Errorf("%w: %s has sha256 %s, but the evaluation evaluated sha256 %s", ErrVerification, p, short(got), short(e.Files[p]))
		}
	}
	return nil
}
