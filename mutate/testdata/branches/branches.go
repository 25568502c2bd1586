// Package branches is a subject of the branch-swap operator and of the
// dropped releases of locks.
package branches

import "sync"

// Abs returns |x|.
func Abs(x int) int {
	if x < 0 {
		return -x
	} else {
		return x
	}
}

// Store is a guarded value.
type Store struct {
	mu sync.RWMutex
	v  int
}

// Get reads the value under the read lock.
func (s *Store) Get() int {
	s.mu.RLock()
	v := s.v
	s.mu.RUnlock()
	return v
}

// Set writes the value under the lock.
func (s *Store) Set(v int) {
	s.mu.Lock()
	s.v = v
	s.mu.Unlock()
}
