package monitor

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
	"github.com/tracecheck/tracecheck/check"
	"github.com/tracecheck/tracecheck/trace"
)

// The monitor's benchmarks (make bench-monitor; figures in
// docs/monitor.md). One iteration each: they time whole pipelines.

// benchSessions are the benchmarks' events: generated sessions, about ten
// events each, interleaved as a Sink's goroutines would publish them.
// Sessions with an input error are left out: `tracecheck check` stops a
// stream at its first input error.
func benchSessions(n int) ([]genSession, int) {
	var s []genSession
	events := 0
	for _, g := range genSessions(42, n+n/10, "b") {
		if len(s) < n && !hasInputError(g) {
			s = append(s, g)
			events += len(g.lines)
		}
	}
	return s, events
}

const benchParts = 16

func benchEvents() int { return envInt("TRACECHECK_BENCH_SESSIONS", 20000) }

func hasInputError(g genSession) bool {
	var buf bytes.Buffer
	for _, l := range g.lines {
		buf.Write(l)
		buf.WriteByte('\n')
	}
	_, err := check.Check(context.Background(), sessionSpec, &buf, "x", check.Options{})
	return err != nil
}

// BenchmarkMonitorPublish: events/s a Sink gets acknowledged by the
// embedded JetStream (no monitor running).
func BenchmarkMonitorPublish(b *testing.B) {
	sessions, events := benchSessions(benchEvents())
	for b.Loop() {
		srv := startServer(b, "")
		setUp(b, srv.URL())
		start := time.Now()
		publish(b, srv.URL(), benchParts, sessions, 4)
		el := time.Since(start)
		b.ReportMetric(float64(events)/el.Seconds(), "events/s")
		srv.Shutdown()
	}
}

// BenchmarkMonitorConsume: events/s 1 and 2 monitors (in this process)
// take, check and judge from a stream published beforehand.
func BenchmarkMonitorConsume(b *testing.B) {
	sessions, events := benchSessions(benchEvents())
	for _, n := range []int{1, 2} {
		b.Run(fmt.Sprintf("monitors=%d", n), func(b *testing.B) {
			for b.Loop() {
				srv := startServer(b, "")
				setUp(b, srv.URL()) // the stream fills with no one reading
				publish(b, srv.URL(), benchParts, sessions, 4)
				start := time.Now()
				ms := startMonitors(b, srv.URL(), n)
				waitEvents(b, ms, events)
				el := time.Since(start)
				b.ReportMetric(float64(events)/el.Seconds(), "events/s")
				for _, m := range ms {
					m.stop()
				}
				srv.Shutdown()
			}
		})
	}
}

// BenchmarkMonitorEndToEnd: events/s from a Sink to the monitors' checkers
// with 1 and 2 monitors running (publisher, server and monitors share the
// machine's cores), until every event is taken.
func BenchmarkMonitorEndToEnd(b *testing.B) {
	sessions, events := benchSessions(benchEvents())
	for _, n := range []int{1, 2} {
		b.Run(fmt.Sprintf("monitors=%d", n), func(b *testing.B) {
			for b.Loop() {
				srv := startServer(b, "")
				ms := startMonitors(b, srv.URL(), n)
				waitHeld(b, ms, benchParts)
				start := time.Now()
				publish(b, srv.URL(), benchParts, sessions, 4)
				waitEvents(b, ms, events)
				el := time.Since(start)
				b.ReportMetric(float64(events)/el.Seconds(), "events/s")
				for _, m := range ms {
					m.stop()
				}
				srv.Shutdown()
			}
		})
	}
}

// BenchmarkMonitorInProcess: the same events checked without NATS: by
// `tracecheck check`'s library call on the interleaved NDJSON (one checker
// for the stream), and by the monitor's per-instance checkers (a partition
// worker fed directly).
func BenchmarkMonitorInProcess(b *testing.B) {
	sessions, events := benchSessions(benchEvents())
	lines := interleave(sessions)
	var nd bytes.Buffer
	for _, l := range lines {
		nd.Write(l.line)
		nd.WriteByte('\n')
	}
	b.Run("check", func(b *testing.B) {
		for b.Loop() {
			start := time.Now()
			rep, err := check.Check(context.Background(), sessionSpec, bytes.NewReader(nd.Bytes()), "bench", check.Options{Forget: true, OnResult: func(check.InstanceResult) {}})
			if err != nil || rep.Events != events {
				b.Fatalf("check: %v, %d events of %d", err, rep.Events, events)
			}
			b.ReportMetric(float64(events)/time.Since(start).Seconds(), "events/s")
		}
	})
	b.Run("monitor-judges", func(b *testing.B) {
		for b.Loop() {
			w := offlineWorker(1)
			start := time.Now()
			for i, l := range lines {
				w.handle(nil, l.line, uint64(i+1))
			}
			for _, in := range w.insts {
				if !in.judged {
					w.judge(in, "", CauseIdle, "", resultOf(in.j.result()))
				}
			}
			b.ReportMetric(float64(events)/time.Since(start).Seconds(), "events/s")
		}
	})
}

// BenchmarkMonitorHeapPerInstance: heap per live instance in a partition
// worker (its entry, its checker), with 100,000 sessions open.
func BenchmarkMonitorHeapPerInstance(b *testing.B) {
	const n = 100000
	var lines [][]byte
	for i := range n {
		lines = append(lines, fmt.Appendf(nil, `{"v":1,"instance":"open-%d","seq":0,"action":"Init","state":{"conn":0,"vad":0,"resp":0,"compaction":0}}`, i),
			fmt.Appendf(nil, `{"v":1,"instance":"open-%d","seq":1,"action":"VadStart","state":{"vad":1}}`, i))
	}
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		w := offlineWorker(1)
		for i, l := range lines {
			w.handle(nil, l, uint64(i+1))
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		if len(w.insts) != n {
			b.Fatalf("%d live instances", len(w.insts))
		}
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "B/instance")
		runtime.KeepAlive(w)
	}
}

// BenchmarkMonitorTakeover: from the SIGKILL of one of two monitor
// processes to the survivor holding (and reading) all the partitions,
// with the lease at 1s and at the default 3s; median of 3 kills.
func BenchmarkMonitorTakeover(b *testing.B) {
	for _, lease := range []time.Duration{time.Second, 3 * time.Second} {
		b.Run("lease="+lease.String(), func(b *testing.B) {
			for b.Loop() {
				dir := b.TempDir()
				srv := startServer(b, filepath.Join(dir, "nats"))
				var times []time.Duration
				for k := range 3 {
					a := startProc(b, dir, srv.URL(), fmt.Sprintf("a%d", k), benchParts, time.Hour, lease)
					waitLeases(b, srv.URL(), benchParts, map[string]bool{a.id: true}, time.Minute)
					c := startProc(b, dir, srv.URL(), fmt.Sprintf("c%d", k), benchParts, time.Hour, lease)
					waitLeases(b, srv.URL(), benchParts, map[string]bool{a.id: true, c.id: true}, time.Minute)
					waitShared(b, srv.URL(), benchParts, a.id, c.id)
					victim, survivor := a, c
					if rand.IntN(2) == 0 {
						victim, survivor = c, a
					}
					start := time.Now()
					victim.kill()
					waitLeases(b, srv.URL(), benchParts, map[string]bool{survivor.id: true}, time.Minute)
					times = append(times, time.Since(start))
					survivor.term(b)
				}
				slices.Sort(times)
				b.ReportMetric(times[1].Seconds(), "s-takeover-median")
				b.ReportMetric(times[0].Seconds(), "s-takeover-min")
				b.ReportMetric(times[2].Seconds(), "s-takeover-max")
				srv.Shutdown()
			}
		})
	}
}

// setUp sets a deployment up (streams, buckets) with a monitor that then
// stops.
func setUp(b testing.TB, url string) {
	_, stop := runMonitor(b, Config{URL: url, Partitions: benchParts, Idle: time.Hour, Lease: time.Second, Logf: func(string, ...any) {}})
	waitPartitions(b, url, benchParts)
	stop()
}

// offlineWorker is a partition worker without NATS, for the benchmarks of
// checking alone.
func offlineWorker(parts int) *worker {
	m := &Monitor{cfg: Config{Idle: time.Hour, MaxLine: trace.DefaultMaxLine, ID: "bench"}, m: newMetrics(nil), parts: parts}
	return newWorker(m, Of("session", sessionSpec), 0, 1)
}

type benchLine struct {
	instance string
	line     []byte
}

// interleave orders the sessions' events as several emitters would: each
// session's in order, sessions mixed.
func interleave(sessions []genSession) []benchLine {
	r := rand.New(rand.NewPCG(1, 2))
	next := make([]int, len(sessions))
	live := make([]int, 0, 64)
	var out []benchLine
	i := 0
	for i < len(sessions) || len(live) > 0 {
		for len(live) < 64 && i < len(sessions) {
			live = append(live, i)
			i++
		}
		k := r.IntN(len(live))
		s := live[k]
		out = append(out, benchLine{sessions[s].name, sessions[s].lines[next[s]]})
		next[s]++
		if next[s] == len(sessions[s].lines) {
			live = slices.Delete(live, k, k+1)
		}
	}
	return out
}

type benchMonitor struct {
	m    *Monitor
	stop func()
}

func startMonitors(b testing.TB, url string, n int) []benchMonitor {
	var ms []benchMonitor
	for i := range n {
		m, stop := runMonitor(b, Config{URL: url, Partitions: benchParts, Idle: 2 * time.Second, Lease: time.Second, ID: fmt.Sprintf("bench-%d", i),
			Logf: func(string, ...any) {}})
		ms = append(ms, benchMonitor{m, stop})
	}
	return ms
}

func waitEvents(b testing.TB, ms []benchMonitor, events int) {
	for deadline := time.Now().Add(10 * time.Minute); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		var got int64
		for _, m := range ms {
			got += m.m.Stats().Events
		}
		if got >= int64(events) {
			return
		}
	}
	b.Fatalf("not all %d events taken", events)
}

func waitHeld(b testing.TB, ms []benchMonitor, parts int) {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		held := 0
		for _, m := range ms {
			held += m.m.Stats().Held
		}
		if held == parts && (len(ms) == 1 || ms[0].m.Stats().Held < parts) {
			return
		}
	}
	b.Fatal("the partitions were not shared out")
}

// leases returns each lease's holder.
func leases(url string) (map[string]string, error) {
	nc, err := nats.Connect(url)
	if err != nil {
		return nil, err
	}
	defer nc.Close()
	js, _ := jetstream.New(nc)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	kv, err := js.KeyValue(ctx, LeaseBucket)
	if err != nil {
		return nil, err
	}
	w, err := kv.Watch(ctx, "lease.>", jetstream.IgnoreDeletes())
	if err != nil {
		return nil, err
	}
	defer w.Stop()
	out := map[string]string{}
	for e := range w.Updates() {
		if e == nil {
			break
		}
		out[e.Key()] = string(e.Value())
	}
	return out, nil
}

// waitLeases waits until every partition is leased, by the monitors in ids
// only.
func waitLeases(b testing.TB, url string, parts int, ids map[string]bool, timeout time.Duration) {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		l, err := leases(url)
		if err != nil || len(l) != parts {
			continue
		}
		ok := true
		for _, holder := range l {
			ok = ok && ids[holder]
		}
		if ok {
			return
		}
	}
	b.Fatalf("the partitions were not leased by %v", ids)
}

// waitShared waits until both monitors hold half the partitions.
func waitShared(b testing.TB, url string, parts int, x, y string) {
	for deadline := time.Now().Add(time.Minute); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		l, _ := leases(url)
		n := map[string]int{}
		for _, h := range l {
			n[h]++
		}
		if n[x] == parts/2 && n[y] == parts/2 {
			return
		}
	}
	b.Fatal("the partitions were not shared")
}
