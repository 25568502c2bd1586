package checkpoint_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

// blockData is a file of four blocks, the last one short.
func blockData() []byte {
	data := make([]byte, 3*checkpoint.BlockSize+12345)
	for i := range data {
		data[i] = byte(i*7 + i>>13)
	}
	return data
}

// stageBlocks writes data as big.bin (and a small file) to a new directory
// and stages it with opt (Run and Name filled in).
func stageBlocks(t *testing.T, data []byte, opt checkpoint.StageOptions) (string, *checkpoint.Manifest) {
	t.Helper()
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"small.json": `{"w":1}`})
	if err := os.WriteFile(filepath.Join(dir, "big.bin"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	opt.Run, opt.Name = "r", "n"
	m, err := checkpoint.Stage(context.Background(), checkpoint.OSFS{}, dir, opt)
	if err != nil {
		t.Fatal(err)
	}
	return dir, m
}

func writeAt(t *testing.T, name string, b []byte, off int64) {
	t.Helper()
	f, err := os.OpenFile(name, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

// rewriteManifest replaces dir's manifest by edit's result, with a
// consistent digest, as an older (or a forged) manifest would be.
func rewriteManifest(t *testing.T, dir string, edit func(files []checkpoint.FileEntry) []checkpoint.FileEntry) {
	t.Helper()
	m, err := checkpoint.ReadManifest(checkpoint.OSFS{}, dir)
	if err != nil {
		t.Fatal(err)
	}
	m.Files = edit(m.Files)
	b, err := json.Marshal(m.Files)
	if err != nil {
		t.Fatal(err)
	}
	d := sha256.Sum256(b)
	m.Digest = "sha256:" + hex.EncodeToString(d[:])
	out, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, checkpoint.ManifestName), out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A large file's manifest entry records one SHA-256 per block of the
// staged bytes, and its whole-file SHA-256 only when asked for or when the
// evaluation names it; a small file's records its whole-file SHA-256 only.
func TestBlockHashesRecorded(t *testing.T) {
	data := blockData()
	wholeSum := sha256.Sum256(data)
	whole := hex.EncodeToString(wholeSum[:])
	for _, tc := range []struct {
		name      string
		opt       checkpoint.StageOptions
		wantWhole bool
	}{
		{"default", checkpoint.StageOptions{}, false},
		{"whole-file sha256 asked for", checkpoint.StageOptions{WholeFileSHA256: true}, true},
		{"evaluation names big.bin", checkpoint.StageOptions{Eval: json.RawMessage(`{"passed": true, "files": {"big.bin": "` + whole + `"}}`)}, true},
		{"evaluation names another file", checkpoint.StageOptions{Eval: json.RawMessage(`{"passed": true, "files": {"small.json": "x"}}`)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, m := stageBlocks(t, data, tc.opt)
			for _, f := range m.Files {
				if f.Path == "small.json" {
					smallSum := sha256.Sum256([]byte(`{"w":1}`))
					if f.BlockSize != 0 || f.Blocks != nil || f.SHA256 != hex.EncodeToString(smallSum[:]) {
						t.Errorf("small file entry %+v, want its sha256 and no blocks", f)
					}
					continue
				}
				wantSHA := ""
				if tc.wantWhole {
					wantSHA = whole
				}
				if f.SHA256 != wantSHA || f.Size != int64(len(data)) || f.BlockSize != checkpoint.BlockSize {
					t.Fatalf("big.bin entry size %d sha256 %q block size %d; want sha256 %q", f.Size, f.SHA256, f.BlockSize, wantSHA)
				}
				if len(f.Blocks) != 4 {
					t.Fatalf("%d block hashes, want 4", len(f.Blocks))
				}
				for i, got := range f.Blocks {
					lo := i * checkpoint.BlockSize
					h := sha256.Sum256(data[lo:min(lo+checkpoint.BlockSize, len(data))])
					if got != hex.EncodeToString(h[:]) {
						t.Errorf("block %d hash %s, want %x", i, got, h)
					}
				}
			}
			b, err := os.ReadFile(filepath.Join(dir, checkpoint.ManifestName))
			if err != nil {
				t.Fatal(err)
			}
			if n := strings.Count(string(b), `"sha256"`); n != 1+btoi(tc.wantWhole) {
				t.Errorf("manifest has %d \"sha256\" fields, want %d:\n%s", n, 1+btoi(tc.wantWhole), b)
			}
			if tc.opt.Eval == nil || tc.wantWhole {
				if _, err := checkpoint.Verify(context.Background(), checkpoint.OSFS{}, dir, nil); err != nil {
					t.Fatalf("Verify = %v", err)
				}
			}
		})
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// A large file that changes size while staging hashes its blocks is
// refused with ErrSave, whichever way it changes.
func TestStageBlocksSizeChange(t *testing.T) {
	data := blockData()
	n := int64(len(data))
	for _, tc := range []struct {
		name string
		size int64
		opt  checkpoint.StageOptions
	}{
		{"truncated", n - 1, checkpoint.StageOptions{}},
		{"truncated to a block boundary", 2 * checkpoint.BlockSize, checkpoint.StageOptions{}},
		{"extended", n + 1, checkpoint.StageOptions{}},
		{"truncated, whole-file sha256", n - 1, checkpoint.StageOptions{WholeFileSHA256: true}},
		{"extended, whole-file sha256", n + 1, checkpoint.StageOptions{WholeFileSHA256: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			big := filepath.Join(dir, "big.bin")
			if err := os.WriteFile(big, data, 0o644); err != nil {
				t.Fatal(err)
			}
			fsys := &tamperFS{onOpen: func(name string) { resize(tc.size)(t, name) }}
			_, err := checkpoint.Stage(context.Background(), fsys, dir, tc.opt)
			if !errors.Is(err, checkpoint.ErrSave) || !strings.Contains(err.Error(), "changed size while staging") || !strings.Contains(err.Error(), "big.bin") {
				t.Fatalf("Stage = %v, want ErrSave: big.bin changed size while staging", err)
			}
			if _, err := os.Stat(filepath.Join(dir, checkpoint.ManifestName)); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("a manifest was written: %v", err)
			}
		})
	}
}

// Verification by blocks catches any changed byte and any change of size,
// made before verification lists the files or after (through the
// descriptors it reads with), with ReadAt or without.
func TestVerifyBlocksTampering(t *testing.T) {
	ctx := context.Background()
	data := blockData()
	n := int64(len(data))
	mid := n / 2
	for _, tc := range []struct {
		name   string
		change func(t *testing.T, name string) // nil: none
		atOpen bool                            // change when verification opens the file
		noAt   bool                            // files without ReadAt
		want   string                          // "" for no error
	}{
		{name: "unchanged", want: ""},
		{name: "unchanged without ReadAt", noAt: true, want: ""},
		{name: "middle byte flipped", change: flip(mid), want: "block 1"},
		{name: "middle byte flipped without ReadAt", change: flip(mid), noAt: true, want: "block 1"},
		{name: "first byte flipped", change: flip(0), want: "block 0"},
		{name: "last byte flipped", change: flip(n - 1), want: "block 3"},
		{name: "byte at a block boundary flipped", change: flip(2 * checkpoint.BlockSize), want: "block 2"},
		{name: "truncated by one byte", change: resize(n - 1), want: "bytes, manifest says"},
		{name: "truncated to a block boundary", change: resize(3 * checkpoint.BlockSize), want: "bytes, manifest says"},
		{name: "extended by one byte", change: resize(n + 1), want: "bytes, manifest says"},
		{name: "truncated after listing", change: resize(n - 1), atOpen: true, want: "shorter"},
		{name: "truncated after listing without ReadAt", change: resize(n - 1), atOpen: true, noAt: true, want: "shorter"},
		{name: "extended after listing", change: resize(n + 1), atOpen: true, want: "longer"},
		{name: "flipped after listing", change: flip(mid + 1), atOpen: true, want: "block 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := stageBlocks(t, data, checkpoint.StageOptions{})
			big := filepath.Join(dir, "big.bin")
			fsys := &tamperFS{noAt: tc.noAt}
			if tc.change != nil && !tc.atOpen {
				tc.change(t, big)
			}
			if tc.change != nil && tc.atOpen {
				fsys.onOpen = func(name string) {
					if name == big {
						tc.change(t, big)
					}
				}
			}
			_, err := checkpoint.Verify(ctx, fsys, dir, nil)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Verify = %v", err)
				}
				return
			}
			if !errors.Is(err, checkpoint.ErrVerification) || !strings.Contains(err.Error(), "big.bin") || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Verify = %v, want ErrVerification naming big.bin and %q", err, tc.want)
			}
		})
	}
}

func flip(off int64) func(*testing.T, string) {
	return func(t *testing.T, name string) {
		f, err := os.Open(name)
		if err != nil {
			t.Fatal(err)
		}
		b := []byte{0}
		_, err = f.ReadAt(b, off)
		f.Close()
		if err != nil {
			t.Fatal(err)
		}
		writeAt(t, name, []byte{b[0] ^ 0x10}, off)
	}
}

func resize(size int64) func(*testing.T, string) {
	return func(t *testing.T, name string) {
		if err := os.Truncate(name, size); err != nil {
			t.Fatal(err)
		}
	}
}

// tamperFS calls onOpen (once) on the first file verification opens, and
// may hide ReadAt from the files it opens.
type tamperFS struct {
	checkpoint.OSFS
	noAt   bool
	once   sync.Once
	onOpen func(name string)
}

// plainFile is a File without ReadAt.
type plainFile struct{ checkpoint.File }

func (s *tamperFS) OpenRoot(dir string) (checkpoint.Root, error) {
	r, err := s.OSFS.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &tamperRoot{Root: r, fs: s}, nil
}

type tamperRoot struct {
	checkpoint.Root
	fs *tamperFS
}

func (r *tamperRoot) OpenFile(name string, flag int, perm os.FileMode) (checkpoint.File, error) {
	s := r.fs
	full := filepath.Join(r.Path(), filepath.FromSlash(name))
	if s.onOpen != nil && filepath.Base(name) == "big.bin" {
		s.once.Do(func() { s.onOpen(full) })
	}
	f, err := r.Root.OpenFile(name, flag, perm)
	if err != nil || !s.noAt {
		return f, err
	}
	return plainFile{f}, nil
}

// A manifest without block hashes (as written before they existed)
// verifies by the whole-file SHA-256, and still catches a changed byte; a
// block list that does not fit the file's size, or an entry with no hash
// at all, is refused.
func TestVerifyManifestWithoutBlocks(t *testing.T) {
	ctx := context.Background()
	data := blockData()
	dir, _ := stageBlocks(t, data, checkpoint.StageOptions{WholeFileSHA256: true})
	rewriteManifest(t, dir, func(fs []checkpoint.FileEntry) []checkpoint.FileEntry {
		for i := range fs {
			fs[i].BlockSize, fs[i].Blocks = 0, nil
		}
		return fs
	})
	b, err := os.ReadFile(filepath.Join(dir, checkpoint.ManifestName))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), "block") {
		t.Fatalf("rewritten manifest still mentions blocks:\n%s", b)
	}
	if _, err := checkpoint.Verify(ctx, checkpoint.OSFS{}, dir, nil); err != nil {
		t.Fatalf("Verify of a manifest without blocks = %v", err)
	}
	flip(int64(len(data))/2)(t, filepath.Join(dir, "big.bin"))
	if _, err := checkpoint.Verify(ctx, checkpoint.OSFS{}, dir, nil); !errors.Is(err, checkpoint.ErrVerification) || !strings.Contains(err.Error(), "sha256") {
		t.Fatalf("Verify after a flipped byte = %v, want a whole-file sha256 mismatch", err)
	}

	for _, tc := range []struct {
		name string
		edit func(f *checkpoint.FileEntry)
	}{
		{"a block hash missing", func(f *checkpoint.FileEntry) { f.Blocks = f.Blocks[:len(f.Blocks)-1] }},
		{"a block hash too many", func(f *checkpoint.FileEntry) { f.Blocks = append(f.Blocks, f.Blocks[0]) }},
		{"block size zero", func(f *checkpoint.FileEntry) { f.BlockSize = 0 }},
		{"block size negative", func(f *checkpoint.FileEntry) { f.BlockSize = -1 }},
		{"block size doubled", func(f *checkpoint.FileEntry) { f.BlockSize *= 2 }},
		{"no hash at all", func(f *checkpoint.FileEntry) { f.BlockSize, f.Blocks = 0, nil }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir, _ := stageBlocks(t, data, checkpoint.StageOptions{})
			rewriteManifest(t, dir, func(fs []checkpoint.FileEntry) []checkpoint.FileEntry {
				for i := range fs {
					if fs[i].Path == "big.bin" {
						tc.edit(&fs[i])
					}
				}
				return fs
			})
			if _, err := checkpoint.Verify(ctx, checkpoint.OSFS{}, dir, nil); !errors.Is(err, checkpoint.ErrVerification) || !strings.Contains(err.Error(), "block") {
				t.Fatalf("Verify = %v, want ErrVerification about blocks", err)
			}
		})
	}
}

// An evaluation that names a large file whose entry has no whole-file
// SHA-256 (a forged or hand-edited manifest: staging records it for every
// file the evaluation names) fails verification instead of passing.
func TestVerifyClaimWithoutWholeSHA256(t *testing.T) {
	data := blockData()
	sum := sha256.Sum256(data)
	dir, _ := stageBlocks(t, data, checkpoint.StageOptions{Eval: json.RawMessage(`{"passed": true, "files": {"big.bin": "` + hex.EncodeToString(sum[:]) + `"}}`)})
	if _, err := checkpoint.Verify(context.Background(), checkpoint.OSFS{}, dir, nil); err != nil {
		t.Fatalf("Verify as staged = %v", err)
	}
	rewriteManifest(t, dir, func(fs []checkpoint.FileEntry) []checkpoint.FileEntry {
		for i := range fs {
			if fs[i].Path == "big.bin" {
				fs[i].SHA256 = ""
			}
		}
		return fs
	})
	_, err := checkpoint.Verify(context.Background(), checkpoint.OSFS{}, dir, nil)
	if !errors.Is(err, checkpoint.ErrVerification) || !strings.Contains(err.Error(), "no whole-file sha256") {
		t.Fatalf("Verify = %v, want ErrVerification: no whole-file sha256 for big.bin", err)
	}
}
