package checkpoint

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
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

type walked struct {
	files []FileEntry // Path and Size filled
	dirs  []string    // absolute, deepest last
}

// walk lists dir's files, refusing symlinks and special files. skipManifest
// leaves the root manifest out; otherwise it is refused as reserved.
func walk(fsys FS, dir string, skipManifest bool) (walked, error) {
	var w walked
	var rec func(rel string) error
	rec = func(rel string) error {
		abs := filepath.Join(dir, filepath.FromSlash(rel))
		w.dirs = append(w.dirs, abs)
		ents, err := fsys.ReadDir(abs)
		if err != nil {
			return fmt.Errorf("%w: read directory: %w", ErrSave, err)
		}
		for _, e := range ents {
			r := path.Join(rel, e.Name())
			if rel == "" {
				r = e.Name()
			}
			if r == ManifestName {
				if skipManifest {
					continue
				}
				return fmt.Errorf("%w: %s is reserved for the publisher", ErrUnsafeFile, ManifestName)
			}
			fi, err := fsys.Lstat(filepath.Join(dir, filepath.FromSlash(r)))
			if err != nil {
				return fmt.Errorf("%w: %w", ErrSave, err)
			}
			switch mode := fi.Mode(); {
			case mode.IsDir():
				if err := rec(r); err != nil {
					return err
				}
			case mode.IsRegular():
				w.files = append(w.files, FileEntry{Path: r, Size: fi.Size()})
			case mode&fs.ModeSymlink != 0:
				target, _ := os.Readlink(filepath.Join(dir, filepath.FromSlash(r)))
				where := "inside"
				if !symlinkInside(dir, r, target) {
					where = "outside"
				}
				return fmt.Errorf("%w: %s is a symlink to %q (points %s the checkpoint; symlinks are not published)", ErrUnsafeFile, r, target, where)
			default:
				return fmt.Errorf("%w: %s is a special file (%s)", ErrUnsafeFile, r, mode.Type())
			}
		}
		return nil
	}
	if err := rec(""); err != nil {
		return walked{}, err
	}
	sort.Slice(w.files, func(i, j int) bool { return w.files[i].Path < w.files[j].Path })
	return w, nil
}

func symlinkInside(dir, rel, target string) bool {
	if filepath.IsAbs(target) {
		r, err := filepath.Rel(dir, target)
		return err == nil && filepath.IsLocal(r)
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
// writes and fsyncs the manifest. Errors wrap [ErrUnsafeFile] or [ErrSave],
// or are ctx's error.
func Stage(ctx context.Context, fsys FS, dir string, opt StageOptions) (*Manifest, error) {
	sy := newSyncer()
	m, err := stage(ctx, fsys, dir, opt, sy)
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
	sy := newSyncer()
	m, err := stage(ctx, fsys, dir, opt, sy)
	if err == nil {
		m, err = Verify(ctx, fsys, dir, opt.Progress)
	}
	if serr := sy.wait(); serr != nil && err == nil {
		err = fmt.Errorf("%w: %w", ErrSave, serr)
	}
	if err != nil {
		return nil, err
	}
	return m, nil
}

// stage is Stage with the files' fsyncs left running in sy.
func stage(ctx context.Context, fsys FS, dir string, opt StageOptions, sy *syncer) (*Manifest, error) {
	w, err := walk(fsys, dir, false)
	if err != nil {
		return nil, err
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
	prog := newProgressor("hashing", total, opt.Progress)
	if err := hashFiles(ctx, fsys, dir, w.files, sy, whole, prog); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("%w: %w", ErrSave, err)
	}
	prog.finish()
	clock := opt.Clock
	if clock == nil {
		clock = SystemClock{}
	}
	m := &Manifest{Format: ManifestFormat, Run: opt.Run, Name: opt.Name, Created: clock.Now().UTC(),
		Files: w.files, Eval: opt.Eval, Digest: digestOf(w.files)}
	if m.Files == nil {
		m.Files = []FileEntry{}
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("%w: encode manifest: %w", ErrSave, err)
	}
	// The manifest's and the directories' fsyncs join the files' in sy:
	// their journal commit then waits for the files' writeback in the
	// background, while verification reads, not before it starts.
	mf, err := writeNew(fsys, filepath.Join(dir, ManifestName), append(b, '\n'))
	if err != nil {
		return nil, fmt.Errorf("%w: manifest: %w", ErrSave, err)
	}
	sy.start(mf)
	for i := len(w.dirs) - 1; i >= 0; i-- {
		d := w.dirs[i]
		sy.do(d, func() error { return fsys.SyncDir(d) })
	}
	return m, nil
}

// writeFileSync creates name (which must not exist), writes b and fsyncs it.
func writeFileSync(fsys FS, name string, b []byte) error {
	f, err := writeNew(fsys, name, b)
	if err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("fsync %s: %w", name, err)
	}
	return f.Close()
}

// writeNew creates name (which must not exist), writes b, and returns the
// open file.
func writeNew(fsys FS, name string, b []byte) (File, error) {
	f, err := fsys.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// ReadManifest reads and decodes dir's manifest from disk.
func ReadManifest(fsys FS, dir string) (*Manifest, error) {
	f, err := fsys.OpenFile(filepath.Join(dir, ManifestName), os.O_RDONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrVerification, err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("%w: read manifest: %w", ErrVerification, err)
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, fmt.Errorf("%w: manifest %s: %w", ErrVerification, filepath.Join(dir, ManifestName), err)
	}
	if m.Format != ManifestFormat {
		return nil, fmt.Errorf("%w: manifest format %d, want %d", ErrVerification, m.Format, ManifestFormat)
	}
	return &m, nil
}

// Verify reloads dir from disk and checks it against its manifest: the
// manifest's digest, the set of files, each file's size and SHA-256 (read
// through a fresh descriptor), and the hashes the evaluation result claims.
// Errors wrap [ErrVerification] or [ErrUnsafeFile], or are ctx's error.
func Verify(ctx context.Context, fsys FS, dir string, progress func(Progress)) (*Manifest, error) {
	m, err := ReadManifest(fsys, dir)
	if err != nil {
		return nil, err
	}
	if d := digestOf(m.Files); d != m.Digest {
		return nil, fmt.Errorf("%w: manifest digest %s does not match its file list (%s)", ErrVerification, m.Digest, d)
	}
	for _, f := range m.Files {
		if err := checkBlocks(f); err != nil {
			return nil, fmt.Errorf("%w: manifest: %s: %w", ErrVerification, f.Path, err)
		}
	}
	w, err := walk(fsys, dir, true)
	if err != nil {
		if errors.Is(err, ErrUnsafeFile) {
			return nil, err
		}
		return nil, fmt.Errorf("%w: %w", ErrVerification, err)
	}
	want := make(map[string]FileEntry, len(m.Files))
	for _, f := range m.Files {
		want[f.Path] = f
	}
	for _, f := range w.files {
		if _, ok := want[f.Path]; !ok {
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
		if want[f.Path].Size != f.Size {
			return nil, fmt.Errorf("%w: %s is %d bytes, manifest says %d", ErrVerification, f.Path, f.Size, want[f.Path].Size)
		}
	}
	prog := newProgressor("verifying", m.Bytes(), progress)
	if err := hashFiles(ctx, fsys, dir, m.Files, nil, nil, prog); err != nil {
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

// evalResult is the part of the evaluation result the publisher reads.
type evalResult struct {
	Passed *bool             `json:"passed"`
	Files  map[string]string `json:"files"`
}

func parseEval(b []byte) (evalResult, error) {
	var e evalResult
	if err := json.Unmarshal(b, &e); err != nil {
		return e, fmt.Errorf("%w: evaluation result is not a JSON object with \"passed\" (and optional \"files\"): %w", ErrEvaluation, err)
	}
	if e.Passed == nil {
		return e, fmt.Errorf("%w: evaluation result has no boolean \"passed\"", ErrEvaluation)
	}
	if !*e.Passed {
		return e, fmt.Errorf("%w: evaluation result says \"passed\": false", ErrEvaluation)
	}
	return e, nil
}

// claimedFiles returns the paths an evaluation result names in "files"
// (none if it has no such map or does not parse: verification reports
// that).
func claimedFiles(eval []byte) map[string]bool {
	var e evalResult
	if len(eval) == 0 || json.Unmarshal(eval, &e) != nil {
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
	e, err := parseEval(m.Eval)
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
