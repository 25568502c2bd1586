package monitor

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/tracecheck/tracecheck/cli"
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor waits until re matches what b holds, and returns the match.
func waitFor(t *testing.T, b *syncBuffer, re *regexp.Regexp) []string {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		if m := re.FindStringSubmatch(b.String()); m != nil {
			return m
		}
	}
	t.Fatalf("no %v in:\n%s", re, b.String())
	return nil
}

// TestCommand runs `tracecheck monitor` with its embedded server: it says
// the URL to emit to, prints the verdicts (a violation with its divergence
// report), serves the metrics, and stops on a signal with exit code 0.
func TestCommand(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer func(f func() (context.Context, context.CancelFunc)) { commandContext = f }(commandContext)
	commandContext = func() (context.Context, context.CancelFunc) { return ctx, cancel }
	var stdout, stderr syncBuffer
	code := make(chan int, 1)
	cmd := Command(Of("session", sessionSpec))
	go func() {
		code <- cmd.Run([]string{"--data", filepath.Join(t.TempDir(), "nats"), "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0",
			"--partitions", "2", "--idle", "1s", "--lease", "1s", "--all"}, &stdout, &stderr)
	}()
	url := waitFor(t, &stderr, regexp.MustCompile(`emitters: tracecheck session-demo --nats (\S+);`))[1]
	metrics := waitFor(t, &stderr, regexp.MustCompile(`metrics at (http://\S+/metrics)`))[1]
	waitPartitions(t, url, 2)
	sessions := genSessions(5, 100, "c")
	publish(t, url, 2, sessions, 1)
	waitVerdicts(t, url, len(sessions), 30*time.Second)
	out := waitFor(t, &stdout, regexp.MustCompile(`(?s)session/\S+: violation, \d+ events.*candidate states before the event`))[0]
	_ = out
	resp, err := http.Get(metrics)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, name := range []string{"tracecheck_monitor_events_total", "tracecheck_monitor_live_instances", `tracecheck_monitor_verdicts_total{spec="session",verdict="violation"}`,
		"tracecheck_monitor_consumer_lag", "tracecheck_monitor_partitions_held 2", "go_goroutines"} {
		if !strings.Contains(string(body), name) {
			t.Errorf("metrics lack %s", name)
		}
	}
	cancel()
	select {
	case c := <-code:
		if c != cli.ExitOK {
			t.Errorf("exit code %d; stderr:\n%s", c, stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("monitor did not stop")
	}
	if !strings.Contains(stderr.String(), "stopped: ") {
		t.Errorf("no summary on stderr:\n%s", stderr.String())
	}
	lines := strings.Count(stdout.String(), "session/")
	if lines < len(sessions) {
		t.Errorf("%d verdict lines for %d sessions (--all)", lines, len(sessions))
	}
}

// TestCommandUsage: bad flags are usage errors; no server is a NATS error.
func TestCommandUsage(t *testing.T) {
	cmd := Command(Of("session", sessionSpec))
	var out, errb bytes.Buffer
	if c := cmd.Run([]string{"--listen", "nonsense"}, &out, &errb); c != cli.ExitUsage {
		t.Errorf("--listen nonsense: exit %d", c)
	}
	if c := cmd.Run([]string{"extra"}, &out, &errb); c != cli.ExitUsage {
		t.Errorf("an argument: exit %d", c)
	}
	if c := Command(Spec{Name: "verdicts"}).Run([]string{"--nats", "nats://127.0.0.1:1", "--metrics", ""}, &out, &errb); c != cli.ExitUsage {
		t.Errorf("spec named verdicts: exit %d", c)
	}
	if c := cmd.Run([]string{"--nats", "nats://127.0.0.1:1", "--metrics", ""}, &out, &errb); c != cli.ExitInput {
		t.Errorf("no server: exit %d: %s", c, errb.String())
	}
}
