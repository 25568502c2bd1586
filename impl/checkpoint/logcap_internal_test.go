package checkpoint

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// A capped log keeps the stream whole up to head+tail bytes, and beyond
// that its first head and last tail bytes with a line saying how many were
// dropped between them, whatever the sizes of the writes.
func TestCappedLog(t *testing.T) {
	stream := func(n int) []byte {
		var b bytes.Buffer
		for i := 0; b.Len() < n; i++ {
			fmt.Fprintf(&b, "line %d\n", i)
		}
		return b.Bytes()[:n]
	}
	for _, tc := range []struct {
		n, chunk int
	}{{0, 1}, {10, 3}, {100, 7}, {160, 1}, {161, 5}, {1000, 1}, {1000, 64}, {1000, 1000}, {5000, 333}} {
		t.Run(fmt.Sprintf("%d bytes in writes of %d", tc.n, tc.chunk), func(t *testing.T) {
			const head, tail = 100, 60
			data := stream(tc.n)
			var out bytes.Buffer
			c := newCappedLog(&out, head, tail)
			for i := 0; i < len(data); i += tc.chunk {
				if _, err := c.Write(data[i:min(i+tc.chunk, len(data))]); err != nil {
					t.Fatal(err)
				}
			}
			if got, want := c.Tail(20), strings.TrimSpace(string(data[max(0, len(data)-20):])); got != want {
				t.Errorf("Tail(20) = %q, want %q", got, want)
			}
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
			dropped := max(0, tc.n-head-tail)
			if c.Dropped() != int64(dropped) {
				t.Errorf("Dropped = %d, want %d", c.Dropped(), dropped)
			}
			if dropped == 0 {
				if !bytes.Equal(out.Bytes(), data) {
					t.Fatalf("log %q, want the whole stream %q", out.Bytes(), data)
				}
				return
			}
			note := fmt.Sprintf("\n[tracecheck: %d bytes dropped here; the log keeps the first 100 bytes and the last 60 bytes of the output]\n", dropped)
			want := string(data[:head]) + note + string(data[len(data)-tail:])
			if out.String() != want {
				t.Fatalf("log\n%q\nwant\n%q", out.String(), want)
			}
		})
	}
}
