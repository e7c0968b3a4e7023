package tokenize

import (
	"bytes"
	"hash/maphash"
)

// strtab interns byte strings: it numbers distinct strings 0, 1, 2, ... in
// the order they are first inserted. The strings live back to back in one
// arena, and an open-addressing hash table with linear probing maps them to
// their numbers. Compared with a map[string]int32 this saves a string header
// and an allocation per string, and looks up []byte keys without converting
// them.
type strtab struct {
	// slots hold 0 for an empty slot, or the top 32 bits of the string's hash
	// and its number plus one, so that most mismatches are rejected without
	// touching the arena.
	slots []uint64
	arena []byte
	ends  []int // string i is arena[ends[i-1]:ends[i]], with ends[-1] = 0
	seed  maphash.Seed
}

const (
	minSlots = 16
	// The table grows when more than 3/4 of the slots are in use, so between
	// 3/8 and 3/4 of them are.
	maxLoadNum, maxLoadDen = 3, 4
)

func newStrtab(n int) strtab {
	t := strtab{seed: maphash.MakeSeed()}
	t.slots = make([]uint64, slotsFor(n))
	t.ends = make([]int, 0, n)
	return t
}

func slotsFor(n int) int {
	s := minSlots
	for s*maxLoadNum/maxLoadDen < n {
		s *= 2
	}
	return s
}

func (t *strtab) len() int { return len(t.ends) }

func (t *strtab) str(i int) []byte {
	start := 0
	if i > 0 {
		start = t.ends[i-1]
	}
	return t.arena[start:t.ends[i]]
}

func (t *strtab) hash(b []byte) uint64 { return maphash.Bytes(t.seed, b) }

// find returns the number of b, whose hash is h, or the slot where it would
// go and -1.
func (t *strtab) find(b []byte, h uint64) (slot, id int) {
	mask := uint64(len(t.slots) - 1)
	tag := h &^ 0xffffffff
	for i := h & mask; ; i = (i + 1) & mask {
		s := t.slots[i]
		if s == 0 {
			return int(i), -1
		}
		if s&^0xffffffff == tag {
			id := int(s&0xffffffff) - 1
			if bytes.Equal(t.str(id), b) {
				return int(i), id
			}
		}
	}
}

// insert adds b, whose hash is h and which is not in the table, into slot and
// returns its number.
func (t *strtab) insert(b []byte, h uint64, slot int) int {
	id := len(t.ends)
	t.arena = append(t.arena, b...)
	t.ends = append(t.ends, len(t.arena))
	t.slots[slot] = h&^0xffffffff | uint64(id+1)
	if len(t.ends) > len(t.slots)*maxLoadNum/maxLoadDen {
		t.rehash()
	}
	return id
}

func (t *strtab) rehash() {
	t.slots = make([]uint64, 2*len(t.slots))
	mask := uint64(len(t.slots) - 1)
	for id := range t.ends {
		h := t.hash(t.str(id))
		i := h & mask
		for t.slots[i] != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = h&^0xffffffff | uint64(id+1)
	}
}

// memory returns the bytes held by the table.
func (t *strtab) memory() int {
	return 8*cap(t.slots) + cap(t.arena) + 8*cap(t.ends)
}
