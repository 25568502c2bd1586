package check

import "hash/maphash"

// instTable maps instance names to instances, for a trace that may hold a
// million of them at once. It is an open-addressing hash table with
// linear probing over a power-of-two array of (hash, *instance) slots,
// kept at most 3/4 full. It keeps each name's hash, so growing it never
// reads a name again: a Go map rehashes every string key as it grows,
// reading each from wherever it lies in memory, and that was most of the
// time a check of a million one-event instances took. It costs 16 bytes
// a slot, 21 to 43 bytes an instance.
type instTable[S comparable] struct {
	seed  maphash.Seed
	slots []instSlot[S] // len is 0 or a power of two
	n     int
}

type instSlot[S comparable] struct {
	hash uint64
	in   *instance[S] // nil: empty
}

const minTableSlots = 8

func newInstTable[S comparable]() *instTable[S] {
	return &instTable[S]{seed: maphash.MakeSeed()}
}

// Len returns the number of instances in the table.
func (t *instTable[S]) Len() int { return t.n }

// find returns the instance named name, or nil and the slot where it
// would go. h is name's hash.
func (t *instTable[S]) find(name []byte) (in *instance[S], h uint64, slot int) {
	h = maphash.Bytes(t.seed, name)
	if len(t.slots) == 0 {
		return nil, h, -1
	}
	mask := len(t.slots) - 1
	for i := int(h) & mask; ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.in == nil {
			return nil, h, i
		}
		if s.hash == h && s.in.name == string(name) {
			return s.in, h, i
		}
	}
}

// insert adds in, which find did not find at slot (-1: none yet) under
// the hash h.
func (t *instTable[S]) insert(h uint64, slot int, in *instance[S]) {
	if slot < 0 || (t.n+1)*4 > len(t.slots)*3 {
		t.resize(max(minTableSlots, 2*len(t.slots)))
		slot = t.free(h)
	}
	t.slots[slot] = instSlot[S]{h, in}
	t.n++
}

// free returns the first empty slot on h's probe sequence.
func (t *instTable[S]) free(h uint64) int {
	mask := len(t.slots) - 1
	i := int(h) & mask
	for t.slots[i].in != nil {
		i = (i + 1) & mask
	}
	return i
}

func (t *instTable[S]) resize(size int) {
	old := t.slots
	t.slots = make([]instSlot[S], size)
	for _, s := range old {
		if s.in != nil {
			t.slots[t.free(s.hash)] = s
		}
	}
}

// delete removes in, which must be in the table, and shrinks the table
// once it is less than an eighth full, so that its memory follows the
// live instances.
func (t *instTable[S]) delete(in *instance[S]) {
	_, _, i := t.find([]byte(in.name))
	if i < 0 || t.slots[i].in != in {
		return
	}
	// Backward-shift deletion: move up every later entry of the run that
	// the hole would cut off from its home slot.
	mask := len(t.slots) - 1
	t.slots[i] = instSlot[S]{}
	for j := (i + 1) & mask; t.slots[j].in != nil; j = (j + 1) & mask {
		home := int(t.slots[j].hash) & mask
		// The entry at j may stay unless its home is cyclically in (i, j].
		if (j > i && (home <= i || home > j)) || (j < i && home <= i && home > j) {
			t.slots[i] = t.slots[j]
			t.slots[j] = instSlot[S]{}
			i = j
		}
	}
	t.n--
	if len(t.slots) > 1024 && t.n*8 < len(t.slots) {
		t.resize(len(t.slots) / 2)
	}
}
