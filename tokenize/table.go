package tokenize

import (
	"bytes"
	"encoding/binary"
	"hash/maphash"
	"math/bits"
	"sync/atomic"

	"github.com/pwe-project/pwe/internal/pages"
)

// strtab interns byte strings: it numbers distinct strings 0, 1, 2, ... in
// the order they are first inserted. The strings live back to back in one
// arena, and an open-addressing hash table with linear probing maps them to
// their numbers. Compared with a map[string]int32 this saves a string header
// and an allocation per string, and looks up []byte keys without converting
// them.
type strtab struct {
	slots []slot
	// shift makes a hash's top bits the index of its home slot: h >> shift.
	// The slots keep the top 32 bits of their string's hash, so a growing
	// table moves them without hashing the strings again, in nearly the
	// order it reads them.
	shift uint
	arena []byte
	ends  []int // string i is arena[ends[i-1]:ends[i]], with ends[-1] = 0
	seed  maphash.Seed
	// view, once the table is shared (share), is where it publishes its
	// slots and arena for the goroutines that look strings up while it
	// inserts others (tableView).
	view  *atomic.Pointer[tableView]
	epoch uint64 // the number of resets since the table was shared
}

// A slot describes its string well enough that a lookup touches nothing else
// for strings of up to 7 bytes (most tokens), and only the arena, not ends,
// for longer ones: each of those would be another cache miss.
type slot struct {
	// head is 0 for an empty slot, or the top 32 bits of the string's hash
	// and its number plus one, so that most mismatches are rejected at once
	// (the bits that chose the home slot tell nothing there, but the rest
	// do).
	head uint64
	// body is the string's length in the low byte (longLen for 255 bytes or
	// more) above which come the bytes themselves, for up to 7 bytes, or
	// the string's offset in the arena.
	body uint64
}

const (
	minSlots = 16
	// The table grows when more than 3/4 of the slots are in use, so between
	// 3/8 and 3/4 of them are.
	maxLoadNum, maxLoadDen = 3, 4
	// maxInline is the longest string held in its slot.
	maxInline = 7
	// longLen marks a length that does not fit the body's low byte.
	longLen = 255
	// arenaGuess is the bytes of a distinct token newStrtab makes room for:
	// bench-raw's average is 9.
	arenaGuess = 10
)

// newStrtab returns a table with slots for n strings, and room for half as
// many more in its arena and ends: the slots are mapped in at once, but room
// not used takes no memory, and a guess a little short would otherwise
// leave arena and ends to be copied, each copy fresh pages to fault in.
func newStrtab(n int) strtab {
	t := strtab{seed: maphash.MakeSeed()}
	t.setSlots(slotsFor(n))
	t.ends = make([]int, 0, roomFor(n))
	t.arena = make([]byte, 0, roomFor(n)*arenaGuess)
	return t
}

// roomFor is the room that newStrtab makes for n strings in arena and ends.
func roomFor(n int) int { return n + n/2 }

func slotsFor(n int) int {
	s := minSlots
	for s*maxLoadNum/maxLoadDen < n {
		s *= 2
	}
	return s
}

// setSlots gives t n empty slots, n a power of two.
func (t *strtab) setSlots(n int) {
	if uint64(n) > 1<<32 {
		// The home slot's index must come from the 32 bits a slot keeps.
		panic("tokenize: more than 3<<30 distinct strings")
	}
	t.slots = make([]slot, n)
	pages.Huge(t.slots)
	pages.Touch(t.slots)
	t.shift = uint(64 - bits.TrailingZeros(uint(n)))
}

// home returns the index of the first slot to probe for hash h.
func (t *strtab) home(h uint64) uint64 { return h >> t.shift }

func (t *strtab) len() int { return len(t.ends) }

// reset empties the table, keeping its memory; a shared table allocates its
// slots and arena afresh instead, since readers may still be reading the
// old ones.
func (t *strtab) reset() {
	if t.view == nil {
		clear(t.slots)
		t.arena, t.ends = t.arena[:0], t.ends[:0]
		return
	}
	pages.Unhuge(t.slots)
	t.setSlots(len(t.slots))
	t.arena, t.ends = make([]byte, 0, cap(t.arena)), t.ends[:0]
	t.epoch++
	t.publish()
}

func (t *strtab) str(i int) []byte {
	start := 0
	if i > 0 {
		start = t.ends[i-1]
	}
	return t.arena[start:t.ends[i]]
}

func (t *strtab) hash(b []byte) uint64 { return maphash.Bytes(t.seed, b) }

// inlineBody returns the body of a slot holding b, len(b) <= maxInline.
func inlineBody(b []byte) uint64 {
	n := len(b)
	var x uint64
	switch {
	case n >= 4:
		// Two overlapping loads cover 4 to 7 bytes.
		x = uint64(binary.LittleEndian.Uint32(b)) | uint64(binary.LittleEndian.Uint32(b[n-4:]))<<(8*(n-4))
	case n > 0:
		x = uint64(b[0]) | uint64(b[n/2])<<(8*(n/2)) | uint64(b[n-1])<<(8*(n-1))
	}
	return x<<8 | uint64(n)
}

// find returns the number of b, whose hash is h, or the slot where it would
// go and -1.
func (t *strtab) find(b []byte, h uint64) (slot, id int) {
	mask := uint64(len(t.slots) - 1)
	tag := h &^ 0xffffffff
	n := len(b)
	if n <= maxInline {
		body := inlineBody(b)
		for i := t.home(h); ; i = (i + 1) & mask {
			s := &t.slots[i]
			if s.head == 0 {
				return int(i), -1
			}
			if s.head&^0xffffffff == tag && s.body == body {
				return int(i), int(s.head&0xffffffff) - 1
			}
		}
	}
	lenByte := uint64(min(n, longLen))
	for i := t.home(h); ; i = (i + 1) & mask {
		s := &t.slots[i]
		if s.head == 0 {
			return int(i), -1
		}
		if s.head&^0xffffffff != tag || s.body&0xff != lenByte {
			continue
		}
		id := int(s.head&0xffffffff) - 1
		var str []byte
		if n < longLen {
			start := int(s.body >> 8)
			str = t.arena[start : start+n]
		} else {
			str = t.str(id)
		}
		if bytes.Equal(str, b) {
			return int(i), id
		}
	}
}

// insert adds b, whose hash is h and which is not in the table, into slot and
// returns its number.
func (t *strtab) insert(b []byte, h uint64, slot int) int {
	id := len(t.ends)
	room := cap(t.arena)
	t.arena = append(t.arena, b...)
	t.ends = append(t.ends, len(t.arena))
	s := t.slotOf(id, h)
	if t.view == nil {
		t.slots[slot] = s
	} else {
		// A reader that sees the head sees the body and the string's bytes,
		// in the arena it then loads.
		if cap(t.arena) != room {
			t.publish()
		}
		t.slots[slot].body = s.body
		atomic.StoreUint64(&t.slots[slot].head, s.head)
	}
	if len(t.ends) > len(t.slots)*maxLoadNum/maxLoadDen {
		t.rehash()
	}
	return id
}

// slotOf returns the slot of string id, whose hash is h.
func (t *strtab) slotOf(id int, h uint64) slot {
	b := t.str(id)
	s := slot{head: h&^0xffffffff | uint64(id+1)}
	if len(b) <= maxInline {
		s.body = inlineBody(b)
	} else {
		s.body = uint64(t.ends[id]-len(b))<<8 | uint64(min(len(b), longLen))
	}
	return s
}

// rehash doubles the slots. Old slot i's strings have their homes at new
// slots 2i and 2i+1, give or take the probing, so the new slots are written
// almost in order.
func (t *strtab) rehash() {
	old := t.slots
	t.setSlots(2 * len(old))
	mask := uint64(len(t.slots) - 1)
	for _, s := range old {
		if s.head == 0 {
			continue
		}
		i := t.home(s.head)
		for t.slots[i].head != 0 {
			i = (i + 1) & mask
		}
		t.slots[i] = s
	}
	// A reader of the old slots finds no string inserted from now on,
	// which it takes for one not yet inserted.
	t.publish()
	pages.Unhuge(old)
}

// free drops the table's memory, withdrawing the huge-page advice from its
// slots.
func (t *strtab) free() {
	pages.Unhuge(t.slots)
	t.slots, t.arena, t.ends = nil, nil, nil
}

// memory returns the bytes held by the table.
func (t *strtab) memory() int {
	return 16*cap(t.slots) + cap(t.arena) + 8*cap(t.ends)
}
