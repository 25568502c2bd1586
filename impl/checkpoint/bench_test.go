package checkpoint_test

import (
	"context"
	"crypto/sha256"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/tracecheck/tracecheck/impl/checkpoint"
)

// benchBytes is the checkpoint size: $TRACECHECK_BENCH_BYTES, default 64 MiB
// (`make bench-publish` uses 1 GiB).
func benchBytes(b *testing.B) int64 {
	if s := os.Getenv("TRACECHECK_BENCH_BYTES"); s != "" {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil || n <= 0 {
			b.Fatalf("TRACECHECK_BENCH_BYTES=%q: want a positive byte count", s)
		}
		return n
	}
	return 64 << 20
}

// writeData writes n pseudo-random bytes to path: as a program would (the
// pages are dirty, not yet on disk), or, with durable, fsynced.
func writeData(b *testing.B, path string, n int64, seed uint64, durable bool) {
	b.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		b.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	r := rand.New(rand.NewPCG(seed, 1))
	buf := make([]byte, 1<<20)
	for left := n; left > 0; left -= int64(len(buf)) {
		for i := 0; i+8 <= len(buf); i += 8 {
			v := r.Uint64()
			for j := 0; j < 8; j++ {
				buf[i+j] = byte(v >> (8 * j))
			}
		}
		k := min(int64(len(buf)), left)
		if _, err := f.Write(buf[:k]); err != nil {
			b.Fatal(err)
		}
	}
	if durable {
		if err := f.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkPublishVsCopy measures, in one run and on the same data,
// publishing a checkpoint (StageAndVerify: hash + fsync + manifest, then
// reload and verify, the fsyncs overlapping both; atomic rename + fsync of
// the parent) against the baseline of a plain copy plus a sha256 of the
// copy (cp + sha256sum), and against a durable copy (cp + fsync +
// sha256sum). It reports each in seconds per operation and their ratios;
// the goal is publish <= 1.3x copy+sha256. It also reports the baseline's
// copy alone, and publish against the baseline's sha256 alone.
//
// Each side pays for the I/O it causes and no other: the baselines'
// source files are written and fsynced first, then the checkpoint is
// written and left dirty, as a program leaves it, so publishing pays for
// its writeback and neither side waits on the setup's.
//
// The sub-benchmarks are the default manifest (a large file's 16 MiB block
// hashes) and --whole-sha256 (block hashes plus the whole-file SHA-256).
func BenchmarkPublishVsCopy(b *testing.B) {
	for _, bc := range []struct {
		name string
		opt  checkpoint.StageOptions
	}{
		{"blocks", checkpoint.StageOptions{Run: "bench", Name: "ckpt"}},
		{"whole-sha256", checkpoint.StageOptions{Run: "bench", Name: "ckpt", WholeFileSHA256: true}},
	} {
		b.Run(bc.name, func(b *testing.B) { benchPublishVsCopy(b, bc.opt) })
	}
}

func benchPublishVsCopy(b *testing.B, opt checkpoint.StageOptions) {
	n := benchBytes(b)
	dir := b.TempDir()
	fsys := checkpoint.OSFS{}
	ctx := context.Background()
	for _, d := range []string{"staging", "pub"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	stRoot, err := fsys.OpenRoot(filepath.Join(dir, "staging"))
	if err != nil {
		b.Fatal(err)
	}
	defer stRoot.Close()
	pubRoot, err := fsys.OpenRoot(filepath.Join(dir, "pub"))
	if err != nil {
		b.Fatal(err)
	}
	defer pubRoot.Close()
	var tPub, tCopy, tDurable, tCopyOnly time.Duration
	buf := make([]byte, 4<<20)
	b.SetBytes(n)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		src := filepath.Join(dir, "src"+strconv.Itoa(i))
		writeData(b, src, n, uint64(i), true)
		src2 := filepath.Join(dir, "srcd"+strconv.Itoa(i))
		writeData(b, src2, n, uint64(i), true)
		staging := filepath.Join(dir, "staging", strconv.Itoa(i))
		writeData(b, filepath.Join(staging, "weights.bin"), n, uint64(i), false)
		b.StartTimer()

		start := time.Now()
		if _, err := checkpoint.StageAndVerify(ctx, fsys, staging, opt); err != nil {
			b.Fatal(err)
		}
		if err := stRoot.RenameNoReplace(strconv.Itoa(i), pubRoot, "ckpt"+strconv.Itoa(i)); err != nil {
			b.Fatal(err)
		}
		if err := pubRoot.SyncDir("."); err != nil {
			b.Fatal(err)
		}
		tPub += time.Since(start)

		start = time.Now()
		tCopyOnly += copyAndHash(b, src, filepath.Join(dir, "copy"+strconv.Itoa(i)), buf, false)
		tCopy += time.Since(start)

		start = time.Now()
		copyAndHash(b, src2, filepath.Join(dir, "copyd"+strconv.Itoa(i)), buf, true)
		tDurable += time.Since(start)

		b.StopTimer()
		target := filepath.Join(dir, "pub", "ckpt"+strconv.Itoa(i))
		for _, p := range []string{target, src, src2, filepath.Join(dir, "copy"+strconv.Itoa(i)), filepath.Join(dir, "copyd"+strconv.Itoa(i))} {
			_ = os.RemoveAll(p)
		}
		b.StartTimer()
	}
	b.StopTimer()
	k := float64(b.N)
	b.ReportMetric(tPub.Seconds()/k, "publish-s/op")
	b.ReportMetric(tCopy.Seconds()/k, "copy+sha256-s/op")
	b.ReportMetric(tCopyOnly.Seconds()/k, "copy-s/op") // the baseline's copy alone: its noisiest part
	b.ReportMetric(tDurable.Seconds()/k, "copy+fsync+sha256-s/op")
	b.ReportMetric(float64(tPub)/float64(tCopy), "x-copy+sha256")
	// Against the baseline's sha256 alone, as if its copy were free: a
	// bound that the copy's noise (page allocation, writeback) cannot flatter.
	b.ReportMetric(float64(tPub)/float64(tCopy-tCopyOnly), "x-sha256-alone")
	b.ReportMetric(float64(tPub)/float64(tDurable), "x-copy+fsync+sha256")
}

// copyAndHash is the baseline: cp src dst, then sha256sum dst. It returns
// how long the copy (with its fsync if durable) took.
func copyAndHash(b *testing.B, src, dst string, buf []byte, durable bool) time.Duration {
	start := time.Now()
	in, err := os.Open(src)
	if err != nil {
		b.Fatal(err)
	}
	out, err := os.Create(dst)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := io.CopyBuffer(out, in, buf); err != nil {
		b.Fatal(err)
	}
	in.Close()
	if durable {
		if err := out.Sync(); err != nil {
			b.Fatal(err)
		}
	}
	if err := out.Close(); err != nil {
		b.Fatal(err)
	}
	copied := time.Since(start)
	f, err := os.Open(dst)
	if err != nil {
		b.Fatal(err)
	}
	h := sha256.New()
	if _, err := io.CopyBuffer(h, f, buf); err != nil {
		b.Fatal(err)
	}
	f.Close()
	return copied
}
