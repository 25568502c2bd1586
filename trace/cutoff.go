package trace

import (
	"sync"
	"sync/atomic"
)

// Cutoff passes events to a Sink until Cut, then drops and counts them.
// It makes a trace final at a moment of the producer's choosing (once
// every session is closed, say), while a goroutine its producer abandoned
// may still emit: what such a goroutine emits afterwards is counted, for
// the caller to report, and never written. Emit may be called from many
// goroutines; they do not wait for one another (only Cut waits for the
// Emits in flight).
type Cutoff struct {
	mu   sync.RWMutex // held shared by Emit, exclusively by Cut
	sink Sink
	cut  bool
	late atomic.Int64
}

// NewCutoff returns a Cutoff in front of s.
func NewCutoff(s Sink) *Cutoff { return &Cutoff{sink: s} }

// Emit passes e to the sink, or, after Cut, counts it and returns nil.
func (c *Cutoff) Emit(e Event) error {
	c.mu.RLock()
	defer c.mu.RUnlock()
	if c.cut {
		c.late.Add(1)
		return nil
	}
	return c.sink.Emit(e)
}

// Cut stops passing events on, once the Emits in flight have returned,
// and returns how many arrived late so far.
func (c *Cutoff) Cut() int {
	c.mu.Lock()
	c.cut = true
	c.mu.Unlock()
	return c.Late()
}

// Late returns how many events arrived after Cut.
func (c *Cutoff) Late() int { return int(c.late.Load()) }
