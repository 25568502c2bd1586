package check_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/model/program"
	"github.com/tracecheck/tracecheck/model/session"
	"github.com/tracecheck/tracecheck/trace"
)

// genSessions writes a valid trace of n events from the given number of
// interleaved sessions: deterministic random walks of the session spec,
// each ended by Teardown, every event with the full state.
func genSessions(seed uint64, sessions, n int) []byte {
	sp := session.Spec(session.Options{})
	rng := rand.New(rand.NewPCG(seed, 1))
	var buf bytes.Buffer
	w := trace.NewWriter(&buf)
	type live struct {
		name string
		seq  uint64
		s    session.State
		left int
	}
	per := n / sessions
	ss := make([]*live, sessions)
	for i := range ss {
		ss[i] = &live{name: fmt.Sprintf("session-%04d", i), left: per}
	}
	ss[len(ss)-1].left += n - per*sessions
	state := func(s session.State) map[string]any {
		return map[string]any{"conn": s.Conn, "vad": s.Vad, "resp": s.Resp, "compaction": s.Compaction}
	}
	active := append([]*live(nil), ss...)
	for len(active) > 0 {
		k := rng.IntN(len(active))
		l := active[k]
		e := trace.Event{Instance: l.name, Seq: l.seq}
		switch {
		case l.seq == 0:
			e.Action, e.State = trace.InitAction, state(l.s)
		case l.left == 1:
			a, _ := sp.Action(session.Teardown)
			a.Next(l.s, func(t session.State) { l.s = t })
			e.Action, e.State = session.Teardown, state(l.s)
		default:
			var en []string
			for _, a := range sp.Enabled(l.s) {
				if a != session.Teardown {
					en = append(en, a)
				}
			}
			name := en[rng.IntN(len(en))]
			a, _ := sp.Action(name)
			a.Next(l.s, func(t session.State) { l.s = t })
			e.Action, e.State = name, state(l.s)
		}
		if err := w.Emit(e); err != nil {
			panic(err)
		}
		l.seq++
		l.left--
		if l.left == 0 {
			active[k] = active[len(active)-1]
			active = active[:len(active)-1]
		}
	}
	return buf.Bytes()
}

var (
	genOnce sync.Map // n -> []byte
)

func generated(n int) []byte {
	if v, ok := genOnce.Load(n); ok {
		return v.([]byte)
	}
	b := genSessions(1, 1000, n)
	genOnce.Store(n, b)
	return b
}

// heapPeak samples the live heap while f runs and returns the peak growth
// over the heap in use before f.
func heapPeak(f func()) uint64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapAlloc
	peak := base
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(2 * time.Millisecond)
		defer t.Stop()
		var m runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-t.C:
				runtime.ReadMemStats(&m)
				if m.HeapAlloc > peak {
					peak = m.HeapAlloc
				}
			}
		}
	}()
	f()
	close(done)
	wg.Wait()
	runtime.ReadMemStats(&ms)
	if ms.HeapAlloc > peak {
		peak = ms.HeapAlloc
	}
	return peak - base
}

// BenchmarkCheckSessions validates a generated trace of 1,000 interleaved
// sessions, 100k and 1M events: events/s, MB/s and the peak heap growth
// (the input itself is in memory before the run and not counted).
func BenchmarkCheckSessions(b *testing.B) {
	sp := session.Spec(session.Options{})
	for _, n := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("events=%d", n), func(b *testing.B) {
			data := generated(n)
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			check1 := func() {
				rep, err := check.Check(context.Background(), sp, bytes.NewReader(data), "gen", check.Options{})
				if err != nil {
					b.Fatal(err)
				}
				if rep.Verdict() != check.Valid || rep.Events != n || len(rep.Instances) != 1000 {
					b.Fatalf("verdict %v, %d events, %d instances", rep.Verdict(), rep.Events, len(rep.Instances))
				}
			}
			runtime.GC()
			b.ResetTimer()
			start, cpu0 := time.Now(), cpuTime()
			for i := 0; i < b.N; i++ {
				check1()
			}
			b.StopTimer()
			el, cpu := time.Since(start).Seconds(), cpuTime()-cpu0
			peak := heapPeak(check1) // sampled outside the timed runs: sampling stops the world
			b.ReportMetric(float64(n)*float64(b.N)/el, "events/s")
			// CPU time of the whole process (GC included): what the check
			// costs on one core, whatever else the machine is running.
			if cpu > 0 {
				b.ReportMetric(float64(n)*float64(b.N)/cpu, "events/cpu-s")
				b.ReportMetric(float64(len(data))*float64(b.N)/cpu/1e6, "MB/cpu-s")
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MB")
		})
	}
}

// decodeBaseline is a way to decode the events of an NDJSON trace, for
// BenchmarkDecode: it returns how many events r holds.
type decodeBaseline struct {
	name   string
	decode func(r io.Reader) (int, error)
}

// decodeBaselines are BenchmarkDecode's decoders: trace.Decoder, which
// the checker uses, and the standard library's, as baselines.
// bench_jsonv2_test.go adds encoding/json/v2's when GOEXPERIMENT=jsonv2.
var decodeBaselines = []decodeBaseline{
	{"tracecheck", func(r io.Reader) (int, error) {
		d := trace.NewDecoder(r, "gen")
		n := 0
		for {
			_, err := d.Next()
			if err == io.EOF {
				return n, nil
			}
			if err != nil {
				return n, err
			}
			n++
		}
	}},
	// encoding/json, one json.Unmarshal a line into what the checker needs
	// of an event: its fields, and its state's values as raw JSON (the
	// checker converts and caches values itself). Unlike trace.Decoder, it
	// refuses no unknown or repeated field and says nothing of positions.
	{"encoding-json", func(r io.Reader) (int, error) {
		return eachLine(r, func(line []byte) error {
			var e jsonEvent
			return json.Unmarshal(line, &e)
		})
	}},
}

// jsonEvent is an event as encoding/json decodes what the checker needs
// of it.
type jsonEvent struct {
	V        int                        `json:"v"`
	Instance string                     `json:"instance"`
	Seq      uint64                     `json:"seq"`
	Action   string                     `json:"action"`
	Part     string                     `json:"part"`
	Stutter  bool                       `json:"stutter"`
	State    map[string]json.RawMessage `json:"state"`
	Time     json.RawMessage            `json:"time"`
	Detail   json.RawMessage            `json:"detail"`
}

// eachLine calls f with each line of r (without its newline) and returns
// how many there were, reading r through a buffer as trace.Decoder does.
func eachLine(r io.Reader, f func([]byte) error) (int, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	n := 0
	for {
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			if ferr := f(line); ferr != nil {
				return n, fmt.Errorf("line %d: %w", n+1, ferr)
			}
			n++
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

// BenchmarkDecode measures the decoder alone on the 1M-event trace, and
// the standard library's decoders on the same input as baselines
// (encoding/json; encoding/json/v2 and jsontext too when built with
// GOEXPERIMENT=jsonv2): MB/s and events/s each.
func BenchmarkDecode(b *testing.B) {
	data := generated(1_000_000)
	for _, d := range decodeBaselines {
		b.Run(d.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			b.ResetTimer()
			start := time.Now()
			for i := 0; i < b.N; i++ {
				n, err := d.decode(bytes.NewReader(data))
				if err != nil {
					b.Fatal(err)
				}
				if n != 1_000_000 {
					b.Fatalf("decoded %d events", n)
				}
			}
			b.ReportMetric(1e6*float64(b.N)/time.Since(start).Seconds(), "events/s")
		})
	}
}

// genInits writes a trace of n program instances of one Init event each,
// r0000001, r0000002, ...: every instance stays live to the end of the
// trace (and ends incomplete), the worst case for the checker's memory.
func genInits(n int) []byte {
	buf := make([]byte, 0, n*115)
	for i := 1; i <= n; i++ {
		buf = fmt.Appendf(buf, `{"v":1,"instance":"r%07d","seq":0,"action":"Init","state":{"phase":"Ready","verified":false,"published":false}}`+"\n", i)
	}
	return buf
}

// pipeReader hides a reader's ReaderAt and Seeker: the checker reads it as
// it would a pipe, keeping copies of the last matched lines.
type pipeReader struct{ io.Reader }

// BenchmarkCheckInstances checks a trace of a million instances of one
// Init event each, as `tracecheck check` does (results streamed through
// Options.OnResult, finished instances forgotten): events/s, and the heap
// each live instance holds, measured once all are live (at the first
// result Close reports) after a GC, over the heap before the check. The
// input is in memory before the run and not counted. "B/instance" is for
// an input the checker can read again (a file); "B/instance-pipe" for a
// pipe, where it keeps a copy of each instance's last matched lines.
func BenchmarkCheckInstances(b *testing.B) {
	const n = 1_000_000
	sp := program.Spec()
	data := genInits(n)
	opt := func(onFirst func()) check.Options {
		first := true
		return check.Options{Forget: true, OnResult: func(res check.InstanceResult) {
			if first {
				first = false
				if onFirst != nil {
					onFirst()
				}
			}
			if res.Verdict != check.Incomplete {
				b.Fatalf("instance %s: %v", res.Instance, res.Verdict)
			}
		}}
	}
	check1 := func(r io.Reader, onFirst func()) {
		rep, err := check.Check(context.Background(), sp, r, "gen", opt(onFirst))
		if err != nil {
			b.Fatal(err)
		}
		if rep.Events != n || rep.Count(check.Incomplete) != n {
			b.Fatalf("%d events, %d incomplete", rep.Events, rep.Count(check.Incomplete))
		}
	}
	perInstance := func(r io.Reader) float64 {
		var base, live runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&base)
		check1(r, func() {
			runtime.GC()
			runtime.ReadMemStats(&live)
		})
		return (float64(live.HeapAlloc) - float64(base.HeapAlloc)) / n
	}
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	runtime.GC()
	b.ResetTimer()
	start := time.Now()
	for i := 0; i < b.N; i++ {
		check1(bytes.NewReader(data), nil)
	}
	el := time.Since(start).Seconds()
	b.StopTimer()
	b.ReportMetric(float64(n)*float64(b.N)/el, "events/s")
	b.ReportMetric(perInstance(bytes.NewReader(data)), "B/instance")
	b.ReportMetric(perInstance(pipeReader{bytes.NewReader(data)}), "B/instance-pipe")
	runtime.KeepAlive(data) // in the base heap: keep it there
}
