package trace

import (
	"encoding/json"
	"fmt"
	"io"
	"sync"
)

// Syncer is implemented by writers that can flush to stable storage, such
// as *os.File.
type Syncer interface {
	Sync() error
}

// Writer is a Sink that writes NDJSON to an io.Writer, one event a line,
// each line in a single Write call. It is safe for concurrent use. If
// SyncEach is set and the underlying writer is a [Syncer], every event is
// synced before Emit returns (a journal's receipts need that).
type Writer struct {
	mu       sync.Mutex
	w        io.Writer
	buf      []byte
	SyncEach bool
}

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Emit writes e as one line. A zero e.V is written as [Version].
func (w *Writer) Emit(e Event) error {
	if e.V == 0 {
		e.V = Version
	}
	line, err := json.Marshal(e)
	if err != nil {
		return fmt.Errorf("trace: encode event %s#%d: %w", e.Instance, e.Seq, err)
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(append(w.buf[:0], line...), '\n')
	if _, err := w.w.Write(w.buf); err != nil {
		return fmt.Errorf("trace: write event %s#%d: %w", e.Instance, e.Seq, err)
	}
	if s, ok := w.w.(Syncer); ok && w.SyncEach {
		if err := s.Sync(); err != nil {
			return fmt.Errorf("trace: sync event %s#%d: %w", e.Instance, e.Seq, err)
		}
	}
	return nil
}
