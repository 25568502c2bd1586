package cli_test

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"sync"
	"testing"
	"time"
)

// writeInits writes a trace of n program instances of one Init event each
// (r0000001, r0000002, ...) to path: every instance stays live to the end
// of the trace and ends incomplete, the worst case for check's memory
// and output.
func writeInits(tb testing.TB, path string, n int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	for i := 1; i <= n; i++ {
		fmt.Fprintf(w, `{"v":1,"instance":"r%07d","seq":0,"action":"Init","state":{"phase":"Ready","verified":false,"published":false}}`+"\n", i)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// countWriter counts the bytes written to it.
type countWriter struct{ n int64 }

func (w *countWriter) Write(p []byte) (int, error) {
	w.n += int64(len(p))
	return len(p), nil
}

// heapSampler samples the heap while f runs: the peak of the heap's
// objects (live and not yet collected) and of the live heap as the last
// GC found it, each over the heap before f.
func heapSampler(f func()) (peakObjects, peakLive uint64) {
	runtime.GC()
	samples := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
	metrics.Read(samples)
	baseObjects, baseLive := samples[0].Value.Uint64(), samples[1].Value.Uint64()
	var mu sync.Mutex
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(time.Millisecond)
		defer t.Stop()
		s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}, {Name: "/gc/heap/live:bytes"}}
		for {
			select {
			case <-done:
				return
			case <-t.C:
				metrics.Read(s)
				mu.Lock()
				peakObjects = max(peakObjects, s[0].Value.Uint64())
				peakLive = max(peakLive, s[1].Value.Uint64())
				mu.Unlock()
			}
		}
	}()
	f()
	close(done)
	wg.Wait()
	sub := func(a, b uint64) uint64 {
		if a < b {
			return 0
		}
		return a - b
	}
	return sub(peakObjects, baseObjects), sub(peakLive, baseLive)
}

// BenchmarkCheckCLI runs `tracecheck check` end to end, as the binary
// does (run with the command line), on a generated file of 1,000,000
// program instances of one Init event each (115 MB), with its output
// counted and discarded: events/s, output bytes, and the heap per
// instance, sampled in one more, untimed run: "peak-heap-B/instance" is
// the peak of the heap's objects (garbage not yet collected included),
// "peak-live-B/instance" the peak live heap the GC found. Every instance
// is live until the end of the file, so the heap peaks there.
func BenchmarkCheckCLI(b *testing.B) {
	const n = 1_000_000
	path := filepath.Join(b.TempDir(), "1m.ndjson")
	writeInits(b, path, n)
	for _, bc := range []struct {
		name  string
		flags []string
	}{
		{"q", []string{"-q"}},
		{"all", nil},
		{"json-q", []string{"--json", "-q"}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			args := append(append([]string{"check"}, bc.flags...), path)
			var out countWriter
			check1 := func() {
				out.n = 0
				var errb countWriter
				if code := run(args, &out, &errb); code != exitIncomplete || errb.n != 0 {
					b.Fatalf("exit %d, %d bytes on stderr", code, errb.n)
				}
			}
			runtime.GC()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				check1()
			}
			el := time.Since(start).Seconds()
			b.StopTimer()
			b.ReportMetric(float64(n)*float64(b.N)/el, "events/s")
			b.ReportMetric(float64(out.n), "out-bytes")
			objects, live := heapSampler(check1)
			b.ReportMetric(float64(objects)/n, "peak-heap-B/instance")
			b.ReportMetric(float64(live)/n, "peak-live-B/instance")
		})
	}
}
