package trace

import (
	"bytes"
	"sync"
)

// Recorder is a [Sink] that keeps every event emitted to it, for a test or
// a harness to look at ([Recorder.Events]) or to check as a trace
// ([Recorder.NDJSON]). It is safe for concurrent use, and records events
// in the order their Emit calls took its lock: the events of one emitting
// goroutine keep their order, and so do the events an implementation
// serializes itself (one session's, one run's).
//
// The zero Recorder is ready to use. A Recorder must not be copied after
// its first use.
type Recorder struct {
	mu     sync.Mutex
	events []Event
	buf    bytes.Buffer
	w      *Writer // writes to buf; created by the first Emit
}

// Emit records e. Like a [Writer], it refuses an event that cannot be
// encoded as JSON (a float NaN in its state, say): it returns the Writer's
// error and records nothing.
func (r *Recorder) Emit(e Event) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.w == nil {
		r.w = NewWriter(&r.buf)
	}
	n := r.buf.Len()
	if err := r.w.Emit(e); err != nil {
		r.buf.Truncate(n) // a Writer writes a line whole or not at all; be sure
		return err
	}
	r.events = append(r.events, e)
	return nil
}

// Events returns the events recorded so far, in the order they were
// recorded, as given to Emit (a zero V stays zero). The slice is the
// caller's; the events' State and Detail maps are the emitter's, and must
// not be modified.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}

// NDJSON returns the events recorded so far as a trace: the bytes a
// [Writer] would have written for them, one line each, encoded when they
// were emitted (a later change to an event's maps does not show). The
// slice is the caller's.
func (r *Recorder) NDJSON() []byte {
	r.mu.Lock()
	defer r.mu.Unlock()
	return bytes.Clone(r.buf.Bytes())
}
