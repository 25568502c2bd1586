package checkpoint

import (
	"fmt"
	"io"
	"strings"
	"sync"
)

// Log limits: a program's stdout and stderr (and the verify command's) are
// kept in the run directory, but only their first LogHead and last LogTail
// bytes; what lies between is dropped, and the log says how much.
const (
	LogHead = 1 << 20
	LogTail = 1 << 20
)

// cappedLog writes the first head bytes of a stream to w as they come,
// keeps the last tail bytes of the stream in memory, and on Close writes
// whatever of them is not in w yet, after a line saying how many bytes were
// dropped if any were. Memory is bounded by tail whatever the stream's
// length.
type cappedLog struct {
	mu         sync.Mutex
	w          io.Writer
	head, tail int
	total      int64 // bytes of the stream
	ring       []byte
	pos        int // next write position in ring, once it is full
	err        error
}

func newCappedLog(w io.Writer, head, tail int) *cappedLog {
	return &cappedLog{w: w, head: head, tail: tail}
}

// Write implements io.Writer; it fails only if the file cannot be written.
func (c *cappedLog) Write(p []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := len(p)
	if c.total < int64(c.head) && c.w != nil && c.err == nil {
		k := min(int64(len(p)), int64(c.head)-c.total)
		if _, err := c.w.Write(p[:k]); err != nil {
			c.err = err
		}
	}
	c.total += int64(n)
	c.keep(p)
	return n, nil
}

// keep appends p to the ring of the last tail bytes.
func (c *cappedLog) keep(p []byte) {
	if len(p) >= c.tail {
		c.ring = append(c.ring[:0], p[len(p)-c.tail:]...)
		c.pos = 0
		return
	}
	if len(c.ring) < c.tail {
		room := c.tail - len(c.ring)
		k := min(room, len(p))
		c.ring = append(c.ring, p[:k]...)
		p = p[k:]
	}
	for len(p) > 0 {
		k := copy(c.ring[c.pos:], p)
		p = p[k:]
		c.pos = (c.pos + k) % c.tail
	}
}

// last returns the last n bytes of the stream (at most tail).
func (c *cappedLog) last(n int) []byte {
	var ordered []byte
	if len(c.ring) < c.tail || c.pos == 0 {
		ordered = c.ring
	} else {
		ordered = append(append([]byte(nil), c.ring[c.pos:]...), c.ring[:c.pos]...)
	}
	if len(ordered) > n {
		ordered = ordered[len(ordered)-n:]
	}
	return ordered
}

// Tail returns the stream's last n bytes as text, for error messages.
func (c *cappedLog) Tail(n int) string {
	if c == nil {
		return ""
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return strings.TrimSpace(strings.ToValidUTF8(string(c.last(n)), "\uFFFD"))
}

// Dropped returns how many bytes of the stream the log does not keep.
func (c *cappedLog) Dropped() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return max(0, c.total-int64(c.head)-int64(c.tail))
}

// Close writes the rest of the log: the bytes after the head, or a line
// saying how many were dropped and the tail.
func (c *cappedLog) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w == nil || c.err != nil || c.total <= int64(c.head) {
		return c.err
	}
	after := c.total - int64(c.head)
	rest := c.last(int(min(after, int64(c.tail))))
	if dropped := after - int64(len(rest)); dropped > 0 {
		note := fmt.Sprintf("\n[tracecheck: %d bytes dropped here; the log keeps the first %s and the last %s of the output]\n",
			dropped, sizeText(int64(c.head)), sizeText(int64(c.tail)))
		if _, err := io.WriteString(c.w, note); err != nil {
			c.err = err
			return err
		}
	}
	if _, err := c.w.Write(rest); err != nil {
		c.err = err
	}
	return c.err
}
