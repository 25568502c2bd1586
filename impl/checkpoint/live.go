package checkpoint

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// Limits of a [LiveOutput].
const (
	// LiveBuffer is the most bytes of output a LiveOutput holds for a slow
	// terminal; what arrives while it is full is dropped.
	LiveBuffer = 256 << 10
	// LiveLine is the longest line a LiveOutput shows; the rest of a longer
	// line is cut (the logs keep it).
	LiveLine = 4 << 10
)

// LiveOutput shows a program's output live, line by line, on a writer such
// as a terminal, without ever making the program or the publisher wait for
// that writer. Output is untrusted: each line is shown with a prefix naming
// its stream, its control characters (escape sequences, carriage returns,
// backspaces) and invalid UTF-8 escaped as \xNN, cut at [LiveLine] bytes.
// Writes go into a buffer of [LiveBuffer] bytes that one goroutine drains
// into the writer; what does not fit while the writer is slow is dropped,
// and a line says how many bytes were (the run directory's logs keep the
// output). Set it as Config.Live; Close it after the run.
type LiveOutput struct {
	w       io.Writer
	mu      sync.Mutex
	chunks  []liveChunk
	size    int
	dropped int64 // bytes dropped since the last note
	total   int64 // bytes dropped in all
	closed  bool
	wake    chan struct{}
	done    chan struct{}
	partial map[string][]byte // a stream's line so far
}

type liveChunk struct {
	stream string
	b      []byte
}

// NewLiveOutput returns a LiveOutput that writes to w, with its goroutine
// started.
func NewLiveOutput(w io.Writer) *LiveOutput {
	l := &LiveOutput{w: w, wake: make(chan struct{}, 1), done: make(chan struct{}), partial: map[string][]byte{}}
	go l.drain()
	return l
}

// Writer returns the writer of the stream named stream ("stdout",
// "stderr"): it never blocks and never fails.
func (l *LiveOutput) Writer(stream string) io.Writer {
	if l == nil {
		return nil
	}
	return liveWriter{l, stream}
}

type liveWriter struct {
	l      *LiveOutput
	stream string
}

func (w liveWriter) Write(p []byte) (int, error) {
	w.l.put(w.stream, p)
	return len(p), nil
}

// put queues a copy of p, or drops it if the buffer is full.
func (l *LiveOutput) put(stream string, p []byte) {
	l.mu.Lock()
	if l.closed || l.size+len(p) > LiveBuffer {
		l.dropped += int64(len(p))
		l.total += int64(len(p))
	} else {
		l.chunks = append(l.chunks, liveChunk{stream, append([]byte(nil), p...)})
		l.size += len(p)
	}
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
}

// Dropped returns how many bytes of output were not shown.
func (l *LiveOutput) Dropped() int64 {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.total
}

// drain is the goroutine that writes to the writer.
func (l *LiveOutput) drain() {
	defer close(l.done)
	for {
		l.mu.Lock()
		chunks, dropped, closed := l.chunks, l.dropped, l.closed
		l.chunks, l.size, l.dropped = nil, 0, 0
		l.mu.Unlock()
		var out strings.Builder
		for _, c := range chunks {
			l.lines(&out, c.stream, c.b)
		}
		if dropped > 0 {
			fmt.Fprintf(&out, "[tracecheck: %d bytes of the program's output not shown here: the terminal was slower than the program (the run directory's logs keep them)]\n", dropped)
		}
		if closed {
			for _, s := range []string{"stdout", "stderr"} {
				if len(l.partial[s]) > 0 {
					l.lines(&out, s, []byte{'\n'})
				}
			}
		}
		if out.Len() > 0 {
			_, _ = io.WriteString(l.w, out.String())
		}
		if closed {
			return
		}
		<-l.wake
	}
}

// lines appends to out the complete lines of stream that b ends.
func (l *LiveOutput) lines(out *strings.Builder, stream string, b []byte) {
	for len(b) > 0 {
		i := strings.IndexByte(string(b), '\n')
		if i < 0 {
			if room := LiveLine + 1 - len(l.partial[stream]); room > 0 {
				l.partial[stream] = append(l.partial[stream], b[:min(len(b), room)]...)
			}
			return
		}
		line := append(l.partial[stream], b[:min(i, max(0, LiveLine+1-len(l.partial[stream])))]...)
		l.partial[stream] = nil
		b = b[i+1:]
		out.WriteString(stream)
		out.WriteString("| ")
		writeEscaped(out, line)
		out.WriteByte('\n')
	}
}

// writeEscaped writes line, cut at LiveLine bytes, with control characters
// and invalid UTF-8 escaped.
func writeEscaped(out *strings.Builder, line []byte) {
	cut := len(line) > LiveLine
	if cut {
		line = line[:LiveLine]
	}
	for len(line) > 0 {
		r, n := utf8.DecodeRune(line)
		switch {
		case r == utf8.RuneError && n <= 1:
			fmt.Fprintf(out, `\x%02x`, line[0])
		case r == '\t':
			out.WriteByte('\t')
		case r < 0x20 || r == 0x7f:
			fmt.Fprintf(out, `\x%02x`, r)
		case (r >= 0x80 && r < 0xa0) || r == '\u2028' || r == '\u2029' || r == '\u202e' || r == '\u2066' || r == '\u2067' || r == '\u2068' || r == '\u2069':
			fmt.Fprintf(out, `\u%04x`, r) // C1 controls, line separators, bidirectional overrides
		default:
			out.Write(line[:n])
		}
		line = line[n:]
	}
	if cut {
		out.WriteString(" [tracecheck: line cut]")
	}
}

// Close shows what is buffered (and each stream's unfinished line) and
// stops the goroutine. It waits for the writer at most wait (0: not at
// all): past it, Close returns and the goroutine ends once the writer
// accepts its last write.
func (l *LiveOutput) Close(wait time.Duration) {
	if l == nil {
		return
	}
	l.mu.Lock()
	l.closed = true
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-l.done:
	case <-t.C:
	}
}

// EscapeLines returns text (a program's output: untrusted) for a
// terminal: each line prefixed with prefix, its control characters and
// invalid UTF-8 escaped as \xNN, cut at [LiveLine] bytes, as a
// [LiveOutput] shows them.
func EscapeLines(text, prefix string) string {
	var out strings.Builder
	for _, line := range strings.Split(strings.TrimRight(text, "\n"), "\n") {
		out.WriteString(prefix)
		writeEscaped(&out, []byte(line))
		out.WriteByte('\n')
	}
	return out.String()
}
