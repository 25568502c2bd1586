package monitor

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"
)

// The kill test runs monitors as real processes: this test binary, told
// by the environment to be a monitor (helperMonitor).
const (
	envHelperURL   = "TRACECHECK_TEST_MONITOR_URL"
	envHelperID    = "TRACECHECK_TEST_MONITOR_ID"
	envHelperParts = "TRACECHECK_TEST_MONITOR_PARTITIONS"
	envHelperIdle  = "TRACECHECK_TEST_MONITOR_IDLE"
	envHelperLease = "TRACECHECK_TEST_MONITOR_LEASE"
)

// helperMonitor runs a monitor until SIGTERM if the environment asks for
// one, and exits; otherwise it returns false.
func helperMonitor() bool {
	url := os.Getenv(envHelperURL)
	if url == "" {
		return false
	}
	parts, _ := strconv.Atoi(os.Getenv(envHelperParts))
	idle, _ := time.ParseDuration(os.Getenv(envHelperIdle))
	lease, _ := time.ParseDuration(os.Getenv(envHelperLease))
	id := os.Getenv(envHelperID)
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	fmt.Fprintln(os.Stderr, "started")
	m, err := New(Config{URL: url, Specs: []Spec{Of("session", sessionSpec)}, Partitions: parts, Idle: idle, Lease: lease, ID: id,
		Logf: func(f string, a ...any) {
			fmt.Fprintf(os.Stderr, "%s %s: %s\n", time.Now().Format("15:04:05.000"), id, fmt.Sprintf(f, a...))
		}})
	if err == nil {
		err = m.Run(ctx)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(3)
	}
	st := m.Stats()
	fmt.Fprintf(os.Stderr, "stats: verdicts=%d duplicates=%d acquired=%d\n", st.Verdicts, st.Duplicates, st.Acquired)
	os.Exit(0)
	return true
}

// proc is a monitor process.
type proc struct {
	id  string
	cmd *exec.Cmd
	log string
}

func startProc(t testing.TB, dir, url, id string, parts int, idle, lease time.Duration) *proc {
	t.Helper()
	log := filepath.Join(dir, id+".log")
	f, err := os.Create(log)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), envHelperURL+"="+url, envHelperID+"="+id, envHelperParts+"="+strconv.Itoa(parts),
		envHelperIdle+"="+idle.String(), envHelperLease+"="+lease.String())
	cmd.Stdout, cmd.Stderr = f, f
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	// Wait until it takes SIGTERM as a request to stop.
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if b, _ := os.ReadFile(log); bytes.HasPrefix(b, []byte("started\n")) {
			break
		}
	}
	return &proc{id: id, cmd: cmd, log: log}
}

func (p *proc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	_ = p.cmd.Wait()
}

func (p *proc) term(t testing.TB) {
	_ = p.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- p.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("monitor %s: %v", p.id, err)
		}
	case <-time.After(30 * time.Second):
		p.kill()
		t.Errorf("monitor %s did not stop on SIGTERM", p.id)
	}
}

// TestKillMonitors publishes thousands of sessions while monitor processes
// are killed with SIGKILL and restarted, and checks that every instance
// gets exactly one verdict (in the bucket and on the verdict subject),
// equal to the offline check of its events. TRACECHECK_KILL_SESSIONS and
// TRACECHECK_KILL_KILLS make it longer (make monitor-campaign).
func TestKillMonitors(t *testing.T) {
	if testing.Short() {
		t.Skip("starts monitor processes")
	}
	nSessions := envInt("TRACECHECK_KILL_SESSIONS", 3000)
	nKills := envInt("TRACECHECK_KILL_KILLS", 4)
	const parts = 4
	idle, lease := 2*time.Second, time.Second
	dir := t.TempDir()
	srv := startServer(t, filepath.Join(dir, "nats"))
	sessions := genSessions(uint64(time.Now().UnixNano()), nSessions, "k")

	var mu sync.Mutex
	procs := map[string]*proc{}
	next := 0
	spawn := func() {
		next++
		p := startProc(t, dir, srv.URL(), fmt.Sprintf("m%d", next), parts, idle, lease)
		mu.Lock()
		procs[p.id] = p
		mu.Unlock()
	}
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		for _, p := range procs {
			p.kill()
		}
		if t.Failed() {
			for _, p := range procs {
				b, _ := os.ReadFile(p.log)
				t.Logf("log of %s:\n%s", p.id, tail(b, 40))
			}
		}
	}()
	spawn()
	spawn()
	// Wait for the monitors to set the deployment up.
	waitPartitions(t, srv.URL(), parts)

	// Kill a monitor every so often while the sessions are published,
	// and start another; now and then both die.
	stopKills := make(chan struct{})
	killsDone := make(chan int)
	go func() {
		r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
		kills := 0
		defer func() { killsDone <- kills }()
		for kills < nKills {
			select {
			case <-stopKills:
				return
			case <-time.After(time.Duration(1500+r.IntN(1500)) * time.Millisecond):
			}
			mu.Lock()
			var victims []*proc
			for _, p := range procs {
				victims = append(victims, p)
			}
			mu.Unlock()
			if len(victims) == 0 {
				continue
			}
			v := victims[r.IntN(len(victims))]
			v.kill()
			kills++
			t.Logf("%s: SIGKILL %s", time.Now().Format("15:04:05.000"), v.id)
			mu.Lock()
			delete(procs, v.id)
			mu.Unlock()
			if kills%3 == 0 && len(victims) > 1 { // both dead for a while
				w := victims[0]
				if w == v {
					w = victims[1]
				}
				w.kill()
				mu.Lock()
				delete(procs, w.id)
				mu.Unlock()
				t.Logf("%s: SIGKILL %s too", time.Now().Format("15:04:05.000"), w.id)
				time.Sleep(500 * time.Millisecond)
				spawn()
			}
			time.Sleep(time.Duration(r.IntN(500)) * time.Millisecond)
			spawn()
		}
	}()

	// Publish in batches, so that the stream is live while monitors die.
	start := time.Now()
	batch := max(1, nSessions/30)
	pause := max(200*time.Millisecond, time.Duration(nKills)*2250*time.Millisecond/30)
	for i := 0; i < len(sessions); i += batch {
		publish(t, srv.URL(), parts, sessions[i:min(len(sessions), i+batch)], 2)
		time.Sleep(pause)
	}
	t.Logf("published %d sessions in %v", len(sessions), time.Since(start).Round(time.Millisecond))
	kills := <-killsDone
	close(stopKills)
	waitVerdicts(t, srv.URL(), len(sessions), 2*time.Minute)
	mu.Lock()
	var dups, acquired int
	for _, p := range procs {
		p.term(t)
		delete(procs, p.id)
		b, _ := os.ReadFile(p.log)
		var v, d, a int
		if i := bytes.LastIndex(b, []byte("stats: ")); i >= 0 {
			_, _ = fmt.Sscanf(string(b[i:]), "stats: verdicts=%d duplicates=%d acquired=%d", &v, &d, &a)
		}
		dups += d
		acquired += a
	}
	mu.Unlock()
	t.Logf("the monitors alive at the end refused %d duplicate verdicts (instances judged again after a takeover) and acquired %d leases", dups, acquired)
	got := verdicts(t, srv.URL())
	kinds := compare(t, sessions, got, parts)
	msgs := verdictMessages(t, srv.URL())
	for _, g := range sessions {
		if msgs[g.name] != 1 {
			t.Errorf("%s: %d messages on the verdict subject", g.name, msgs[g.name])
		}
	}
	t.Logf("%d sessions, %d kills, verdicts %v, all equal to the offline check", len(sessions), kills, kinds)
	if kills < nKills {
		t.Errorf("only %d kills", kills)
	}
}

func envInt(name string, def int) int {
	if n, err := strconv.Atoi(os.Getenv(name)); err == nil && n > 0 {
		return n
	}
	return def
}

func tail(b []byte, lines int) string {
	n := 0
	for i := len(b) - 1; i >= 0; i-- {
		if b[i] == '\n' {
			n++
			if n > lines {
				return string(b[i+1:])
			}
		}
	}
	return string(b)
}
