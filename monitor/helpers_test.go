package monitor

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// startServer starts an embedded NATS server with JetStream on a free
// loopback port, stopped at the end of the test.
func startServer(t testing.TB, dir string) *Embedded {
	t.Helper()
	if dir == "" {
		dir = t.TempDir()
	}
	e, err := StartEmbedded(EmbeddedConfig{Dir: dir, Port: -1})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(e.Shutdown)
	return e
}

// runMonitor runs a monitor in this process until the returned stop is
// called (or the test ends).
func runMonitor(t testing.TB, cfg Config) (*Monitor, func()) {
	t.Helper()
	if cfg.Specs == nil {
		cfg.Specs = []Spec{Of("session", sessionSpec)}
	}
	if cfg.Logf == nil {
		cfg.Logf = func(f string, a ...any) { t.Logf("monitor: "+f, a...) }
	}
	m, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			cancel()
			if err := <-done; err != nil {
				t.Errorf("monitor %s: %v", m.ID(), err)
			}
		})
	}
	t.Cleanup(stop)
	return m, stop
}

// publish publishes the sessions through a Sink, from several goroutines
// (each session's events in order, sessions interleaved), and flushes.
func publish(t testing.TB, url string, partitions int, sessions []genSession, goroutines int) SinkStats {
	t.Helper()
	s, err := NewSink(SinkConfig{URL: url, Spec: "session", Partitions: partitions, Block: -1})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < len(sessions); i += goroutines {
				for _, l := range sessions[i].lines {
					if err := s.EmitLine(sessions[i].name, l); err != nil {
						t.Errorf("emit: %v", err)
						return
					}
				}
			}
		}()
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Fatal(err)
	}
	return s.Stats()
}

// jetStream connects to url for a test: the connection is closed in t's
// cleanup.
func jetStream(t testing.TB, url string, opts ...nats.Option) jetstream.JetStream {
	t.Helper()
	nc, err := nats.Connect(url, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	js, err := jetstream.New(nc)
	if err != nil {
		t.Fatal(err)
	}
	return js
}

// verdicts reads every verdict in the bucket.
func verdicts(t testing.TB, url string) map[string]Verdict {
	t.Helper()
	js := jetStream(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	kv, err := js.KeyValue(ctx, VerdictBucket)
	if err != nil {
		t.Fatal(err)
	}
	w, err := kv.WatchAll(ctx, jetstream.IgnoreDeletes())
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	out := map[string]Verdict{}
	for e := range w.Updates() {
		if e == nil {
			break
		}
		var v Verdict
		if err := json.Unmarshal(e.Value(), &v); err != nil {
			t.Fatalf("verdict %s: %v", e.Key(), err)
		}
		if e.Key() != VerdictKey(v.Spec, v.Instance) {
			t.Fatalf("verdict of %s/%s under key %s", v.Spec, v.Instance, e.Key())
		}
		out[v.Instance] = v
	}
	return out
}

// countVerdicts counts the verdicts in the bucket.
func countVerdicts(ctx context.Context, js jetstream.JetStream) (int, error) {
	s, err := js.Stream(ctx, "KV_"+VerdictBucket)
	if err != nil {
		return 0, err
	}
	info, err := s.Info(ctx)
	if err != nil {
		return 0, err
	}
	return int(info.State.Msgs), nil
}

// waitVerdicts waits until the bucket holds n verdicts.
func waitVerdicts(t testing.TB, url string, n int, timeout time.Duration) {
	t.Helper()
	js := jetStream(t, url, nats.MaxReconnects(-1))
	deadline := time.Now().Add(timeout)
	last := -1
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		got, err := countVerdicts(ctx, js)
		cancel()
		if err == nil && got >= n {
			return
		}
		last = got
		time.Sleep(100 * time.Millisecond)
	}
	t.Fatalf("%d verdicts after %v, want %d", last, timeout, n)
}

// verdictMessages counts the messages on the verdict subjects by instance.
func verdictMessages(t testing.TB, url string) map[string]int {
	t.Helper()
	js := jetStream(t, url)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c, err := js.OrderedConsumer(ctx, VerdictStream, jetstream.OrderedConsumerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	s, _ := js.Stream(ctx, VerdictStream)
	info, err := s.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for n := uint64(0); n < info.State.Msgs; {
		b, err := c.Fetch(500, jetstream.FetchMaxWait(2*time.Second))
		if err != nil {
			t.Fatal(err)
		}
		for m := range b.Messages() {
			var v Verdict
			if err := json.Unmarshal(m.Data(), &v); err != nil {
				t.Fatal(err)
			}
			out[v.Instance]++
			n++
		}
	}
	return out
}

// compare compares every verdict with the offline check of the same
// events; it returns how many of each verdict there were.
func compare(t testing.TB, sessions []genSession, got map[string]Verdict, partitions int) map[string]int {
	t.Helper()
	kinds := map[string]int{}
	bad := 0
	for _, g := range sessions {
		v, ok := got[g.name]
		if !ok {
			t.Errorf("%s: no verdict", g.name)
			bad++
			continue
		}
		want := offline(g, EventSubject("session", Partition(g.name, partitions)))
		a, _ := json.Marshal(comparableOf(v))
		b, _ := json.Marshal(comparableOf(want))
		if string(a) != string(b) {
			bad++
			if bad <= 3 {
				t.Errorf("%s: monitor and offline check differ:\nmonitor: %s\noffline: %s\nevents:\n%s", g.name, a, b, joinLines(g.lines))
			}
		}
		kinds[v.Verdict]++
	}
	if bad > 0 {
		t.Errorf("%d of %d verdicts differ from the offline check", bad, len(sessions))
	}
	if len(got) != len(sessions) {
		t.Errorf("%d verdicts for %d sessions", len(got), len(sessions))
	}
	return kinds
}

func joinLines(lines [][]byte) string {
	var s string
	for _, l := range lines {
		s += fmt.Sprintf("  %s\n", l)
	}
	return s
}

// waitPartitions waits until the deployment has recorded its partitions.
func waitPartitions(t testing.TB, url string, want int) {
	t.Helper()
	js := jetStream(t, url)
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		kv, err := js.KeyValue(ctx, StateBucket)
		if err == nil {
			if n, err := readPartitions(ctx, kv); err == nil {
				cancel()
				if n != want {
					t.Fatalf("%d partitions recorded, want %d", n, want)
				}
				return
			}
		}
		cancel()
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatal("no monitor recorded the partitions")
}
