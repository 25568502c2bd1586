package check

import "testing"

// TestMemo: a memo calls its function once per key until it is full, then
// forgets everything before remembering a new key; a bound of 0 keeps
// every result.
func TestMemo(t *testing.T) {
	upTo := func(n int) []int { // 0, 1, ..., n-1
		keys := make([]int, n)
		for i := range keys {
			keys[i] = i
		}
		return keys
	}
	for _, tc := range []struct {
		name  string
		bound int
		keys  []int
		calls int // how often the function ran
		kept  int // results remembered at the end
	}{
		{"repeated keys are remembered", 4, []int{1, 2, 1, 2, 1}, 2, 2},
		{"a new key when full empties it first", 2, []int{1, 2, 3, 1}, 4, 2},
		{"a known key when full keeps it", 2, []int{1, 2, 2, 1, 2}, 2, 2},
		{"bound 1 remembers the last key", 1, []int{1, 1, 2, 2, 1}, 3, 1},
		{"no keys", 3, nil, 0, 0},
		{"memoBound", memoBound, append(upTo(memoBound+1), memoBound), memoBound + 1, 1},
		{"0: no bound", 0, append(upTo(memoBound+1), 0), memoBound + 1, memoBound + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			m := newMemo(func(k int) string {
				calls++
				return string(rune('a' + k%26))
			}, tc.bound)
			for _, k := range tc.keys {
				if got, want := m.of(k), string(rune('a'+k%26)); got != want {
					t.Fatalf("of(%d) = %q, want %q", k, got, want)
				}
			}
			if calls != tc.calls || m.len() != tc.kept {
				t.Errorf("%d calls, %d kept; want %d calls, %d kept", calls, m.len(), tc.calls, tc.kept)
			}
			n := 0
			for k, v := range m.all() {
				if want := string(rune('a' + k%26)); v != want {
					t.Errorf("all: the result of %d is %q, want %q", k, v, want)
				}
				n++
			}
			if n != m.len() {
				t.Errorf("all yields %d results, len is %d", n, m.len())
			}
		})
	}
}
