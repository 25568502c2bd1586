package monitor

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

func itoa(n int) string { return fmt.Sprint(n) }

// publishPaced publishes sessions through one Sink from two goroutines,
// about rate sessions a second, while restart (if set) is called once,
// halfway; it returns when every event is acknowledged.
func publishPaced(t testing.TB, url string, parts int, sessions []genSession, rate int, restart func()) SinkStats {
	t.Helper()
	s, err := NewSink(SinkConfig{URL: url, Spec: "session", Partitions: parts, Block: -1,
		Logf: func(f string, a ...any) { t.Logf("sink: "+f, a...) }})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var once sync.Once
	tick := time.Second / time.Duration(rate)
	for g := range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < len(sessions); i += 2 {
				if restart != nil && i >= len(sessions)/2 {
					once.Do(restart)
				}
				for _, l := range sessions[i].lines {
					if err := s.EmitLine(sessions[i].name, l); err != nil {
						t.Errorf("emit: %v", err)
						return
					}
				}
				time.Sleep(2 * tick)
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

// TestNATSRestart restarts the (embedded) server under a Sink and a monitor
// in the middle of a stream: nothing acknowledged is lost, every instance
// gets one verdict, equal to the offline check.
func TestNATSRestart(t *testing.T) {
	dir := t.TempDir()
	port := freePort(t)
	start := func() *Embedded {
		e, err := StartEmbedded(EmbeddedConfig{Dir: filepath.Join(dir, "nats"), Port: port})
		if err != nil {
			t.Fatal(err)
		}
		return e
	}
	var mu sync.Mutex
	srv := start()
	defer func() { mu.Lock(); srv.Shutdown(); mu.Unlock() }()
	const parts = 4
	_, stop := runMonitor(t, Config{URL: srv.URL(), Partitions: parts, Idle: 4 * time.Second, Lease: 2 * time.Second})
	waitPartitions(t, srv.URL(), parts)
	sessions := genSessions(3, 1200, "r")
	st := publishPaced(t, srv.URL(), parts, sessions, 400, func() {
		mu.Lock()
		defer mu.Unlock()
		srv.Shutdown()
		t.Logf("server down")
		time.Sleep(time.Second)
		srv = start()
		t.Logf("server up")
	})
	t.Logf("sink: %+v", st)
	if st.Dropped != 0 || st.Published < st.Emitted {
		t.Fatalf("sink lost events: %+v", st)
	}
	waitVerdicts(t, srv.URL(), len(sessions), time.Minute)
	stop()
	kinds := compare(t, sessions, verdicts(t, srv.URL()), parts)
	t.Logf("verdicts %v", kinds)
}

// TestExternalServer runs the monitor and a Sink against a real
// nats-server process (Debian's package), killed (SIGKILL) and restarted
// in the middle of the stream.
func TestExternalServer(t *testing.T) {
	bin, err := exec.LookPath("nats-server")
	if err != nil {
		t.Skip("SKIPPED LOUDLY: no nats-server on PATH: the test against an external NATS server did not run (apt-get install nats-server)")
	}
	dir := t.TempDir()
	port := freePort(t)
	url := fmt.Sprintf("nats://127.0.0.1:%d", port)
	var cmd *exec.Cmd
	var logs bytes.Buffer
	start := func() {
		cmd = exec.Command(bin, "-js", "-sd", filepath.Join(dir, "js"), "-a", "127.0.0.1", "-p", itoa(port))
		cmd.Stdout, cmd.Stderr = &logs, &logs
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
			if c, err := netDial(port); err == nil {
				c.Close()
				return
			}
		}
		t.Fatalf("nats-server did not start:\n%s", logs.String())
	}
	stopServer := func() {
		_ = cmd.Process.Signal(os.Interrupt)
		_ = cmd.Wait()
	}
	killServer := func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	var mu sync.Mutex
	start()
	defer func() { mu.Lock(); stopServer(); mu.Unlock() }()
	out, _ := exec.Command(bin, "--version").Output()
	t.Logf("external %s", bytes.TrimSpace(out))
	const parts = 3
	_, stop := runMonitor(t, Config{URL: url, Partitions: parts, Idle: 4 * time.Second, Lease: 2 * time.Second})
	waitPartitions(t, url, parts)
	sessions := genSessions(11, 600, "x")
	st := publishPaced(t, url, parts, sessions, 400, func() {
		mu.Lock()
		defer mu.Unlock()
		killServer() // SIGKILL: what it acknowledged is in its files (the page cache) all the same
		time.Sleep(500 * time.Millisecond)
		start()
	})
	if st.Dropped != 0 || st.Published < st.Emitted {
		t.Fatalf("sink lost events: %+v", st)
	}
	waitVerdicts(t, url, len(sessions), time.Minute)
	stop()
	kinds := compare(t, sessions, verdicts(t, url), parts)
	t.Logf("verdicts %v", kinds)
	_ = context.Background
}
