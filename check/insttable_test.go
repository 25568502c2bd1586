package check

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestInstTable drives the instance table with random inserts, lookups
// and deletes against a Go map, through growth and shrinking, and checks
// after every operation that each entry is found from its home slot
// without crossing an empty one (what backward-shift deletion keeps).
func TestInstTable(t *testing.T) {
	for _, tc := range []struct {
		name     string
		keys     int // distinct names
		ops      int
		pDelete  float64
		checkAll bool
	}{
		{"small, many collisions", 20, 4000, 0.4, true},
		{"grow then shrink", 3000, 12000, 0.5, false},
		{"grow only", 5000, 5000, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, uint64(tc.keys)))
			tab := newInstTable[int]()
			oracle := map[string]*instance[int]{}
			for op := 0; op < tc.ops; op++ {
				name := fmt.Sprint("i", rng.IntN(tc.keys))
				if rng.Float64() < tc.pDelete {
					in := oracle[name]
					if in == nil {
						continue
					}
					tab.delete(in)
					delete(oracle, name)
				} else {
					in, h, slot := tab.find([]byte(name))
					if in != oracle[name] {
						t.Fatalf("op %d: find %s = %p, want %p", op, name, in, oracle[name])
					}
					if in == nil {
						in = &instance[int]{name: name}
						tab.insert(h, slot, in)
						oracle[name] = in
					}
				}
				if tab.Len() != len(oracle) {
					t.Fatalf("op %d: %d entries, want %d", op, tab.Len(), len(oracle))
				}
				if tc.checkAll || op == tc.ops-1 {
					checkTable(t, tab, oracle)
				}
			}
			if tc.pDelete > 0 {
				for name, in := range oracle { // empty it: it shrinks back
					tab.delete(in)
					delete(oracle, name)
				}
				if tab.Len() != 0 || len(tab.slots) > 1024 {
					t.Errorf("emptied: %d entries in %d slots", tab.Len(), len(tab.slots))
				}
			}
		})
	}
}

func checkTable(t *testing.T, tab *instTable[int], oracle map[string]*instance[int]) {
	t.Helper()
	for name, want := range oracle {
		if got := tab.get(name); got != want {
			t.Fatalf("get %s = %p, want %p", name, got, want)
		}
	}
	if tab.get("absent") != nil {
		t.Fatal("found an absent name")
	}
	mask := len(tab.slots) - 1
	n := 0
	for i, s := range tab.slots {
		if s.in == nil {
			continue
		}
		n++
		for j := int(s.hash) & mask; j != i; j = (j + 1) & mask {
			if tab.slots[j].in == nil {
				t.Fatalf("%s at slot %d is cut off from its home %d by the empty slot %d", s.in.name, i, int(s.hash)&mask, j)
			}
		}
	}
	if n != len(oracle) || (len(tab.slots) > 0 && n*4 > len(tab.slots)*3) {
		t.Fatalf("%d entries in %d slots, want %d at most 3/4 full", n, len(tab.slots), len(oracle))
	}
}

// get returns the instance named name, or nil.
func (t *instTable[S]) get(name string) *instance[S] {
	in, _, _ := t.find([]byte(name))
	return in
}
