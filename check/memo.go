package check

import (
	"iter"
	"maps"
)

// memoBound is the usual bound of a memo: far more than the states a spec
// reaches in one trace, and a few megabytes at most.
const memoBound = 1 << 16

// memo is a pure function that remembers its results, up to a bound: a new
// key when the memo already holds bound results first empties it. Memory
// thus stays flat whatever the input, while the few keys a check keeps
// asking about (a spec's reachable states) stay remembered.
type memo[K comparable, V any] struct {
	f     func(K) V
	bound int // the most results kept; 0: no bound, for results that must never be forgotten
	m     map[K]V
}

func newMemo[K comparable, V any](f func(K) V, bound int) memo[K, V] {
	return memo[K, V]{f: f, bound: bound, m: make(map[K]V)}
}

// of returns f(k), calling f only if k's result is not remembered.
func (m *memo[K, V]) of(k K) V {
	if v, ok := m.m[k]; ok {
		return v
	}
	v := m.f(k)
	if m.bound > 0 && len(m.m) >= m.bound {
		clear(m.m)
	}
	m.m[k] = v
	return v
}

// len returns the number of results remembered.
func (m *memo[K, V]) len() int { return len(m.m) }

// all yields the remembered results, in no particular order.
func (m *memo[K, V]) all() iter.Seq2[K, V] { return maps.All(m.m) }
