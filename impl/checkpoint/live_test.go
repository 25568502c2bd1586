package checkpoint

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// gateWriter blocks every Write until open is closed, as a terminal that
// does not read (a stopped terminal, a full pty) does.
type gateWriter struct {
	open chan struct{}
	mu   sync.Mutex
	buf  bytes.Buffer
}

func (g *gateWriter) Write(p []byte) (int, error) {
	<-g.open
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.buf.Write(p)
}

func (g *gateWriter) String() string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.buf.String()
}

func TestLiveOutputEscapes(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"plain", "hello\n", "stdout| hello\n"},
		{"escape sequence", "a\x1b[2Jb\n", `stdout| a\x1b[2Jb` + "\n"},
		{"carriage return and backspace", "x\ry\bz\n", `stdout| x\x0dy\x08z` + "\n"},
		{"invalid utf-8", "a\xffb\n", `stdout| a\xffb` + "\n"},
		{"C1 control and bidi override", "a\u009bb\u202ec\n", `stdout| a\u009bb\u202ec` + "\n"},
		{"tab kept, unicode kept", "é\tü\n", "stdout| é\tü\n"},
		{"unfinished line shown at close", "no newline", "stdout| no newline\n"},
		{"long line cut", strings.Repeat("x", LiveLine+10) + "\n", "stdout| " + strings.Repeat("x", LiveLine) + " [tracecheck: line cut]\n"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var out bytes.Buffer
			l := NewLiveOutput(&out)
			w := l.Writer("stdout")
			// Byte by byte: lines are assembled across writes.
			for i := 0; i < len(tc.in); i++ {
				if n, err := w.Write([]byte{tc.in[i]}); n != 1 || err != nil {
					t.Fatalf("write: %d %v", n, err)
				}
			}
			l.Close(10 * time.Second)
			if got := out.String(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

// TestLiveOutputSlowTerminal: while the writer does not take anything,
// writes never wait; what does not fit in LiveBuffer is dropped and said.
func TestLiveOutputSlowTerminal(t *testing.T) {
	g := &gateWriter{open: make(chan struct{})}
	l := NewLiveOutput(g)
	w := l.Writer("stderr")
	line := []byte(strings.Repeat("y", 1023) + "\n")
	const n = 4 * LiveBuffer / 1024
	for i := 0; i < n; i++ { // 4 buffers' worth: would block if Write waited
		w.Write(line)
	}
	if d := l.Dropped(); d < int64(2*LiveBuffer) {
		t.Fatalf("dropped %d bytes, want at least %d", d, 2*LiveBuffer)
	}
	close(g.open)
	l.Close(10 * time.Second)
	out := g.String()
	shown := strings.Count(out, "stderr| ")
	if !strings.Contains(out, "bytes of the program's output not shown here") {
		t.Errorf("the drop is not said:\n%s", out[max(0, len(out)-300):])
	}
	if int64(shown*1024)+l.Dropped() != n*1024 {
		t.Errorf("%d lines shown, %d bytes dropped: not the %d lines written", shown, l.Dropped(), n)
	}
}

// TestLiveOutputCloseBounded: Close returns after its wait even if the
// writer never takes the last lines.
func TestLiveOutputCloseBounded(t *testing.T) {
	g := &gateWriter{open: make(chan struct{})}
	l := NewLiveOutput(g)
	l.Writer("stdout").Write([]byte("stuck\n"))
	start := time.Now()
	l.Close(50 * time.Millisecond)
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("Close waited %v", d)
	}
	close(g.open) // the goroutine ends (goleak checks)
	<-l.done
	if !strings.Contains(g.String(), "stdout| stuck") {
		t.Errorf("the last line was lost: %q", g.String())
	}
}

func TestEscapeLines(t *testing.T) {
	got := EscapeLines("Traceback\n  x\x1b[0m\n", "  | ")
	if want := "  | Traceback\n  |   x\\x1b[0m\n"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
