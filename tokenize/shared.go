package tokenize

import (
	"bytes"
	"hash/maphash"
	"slices"
	"sync/atomic"

	"github.com/pwe-project/pwe/internal/cacheline"
)

// A tableView is what a shared strtab publishes for its readers: its slots
// and its arena, which it changes afterwards only in ways a reader can
// tell. It fills empty slots, each with its body before its head, and
// appends to the arena within its capacity (the view holds the arena up to
// it), so a reader that loads a slot's head atomically sees its body and
// its string. When the slots are replaced (the table grows or is reset) or
// the arena moved, a new view is published; a reader of the old one misses
// the strings inserted since, which it takes for strings not yet inserted.
type tableView struct {
	slots []slot
	shift uint
	arena []byte
	seed  maphash.Seed
	epoch uint64 // the table's resets: ids of different epochs differ
}

// share makes t publish its changes for readers on other goroutines, and
// returns where it does.
func (t *strtab) share() *atomic.Pointer[tableView] {
	if t.view == nil {
		t.view = new(atomic.Pointer[tableView])
		t.publish()
	}
	return t.view
}

// publish publishes t's slots and arena, if t is shared.
func (t *strtab) publish() {
	if t.view == nil {
		return
	}
	t.view.Store(&tableView{slots: t.slots, shift: t.shift, arena: t.arena[:cap(t.arena)], seed: t.seed, epoch: t.epoch})
}

// find returns the number of b, whose hash is h, or -1 if the view does not
// hold it. It does not look for strings of longLen bytes or more, whose
// lengths are in ends, which a view does not share. A string longer than
// maxInline is compared in the arena of the latest view, which holds it if
// the slot was filled in the view's epoch: the arena may have moved since v
// was published, and it was published again before the slot's head was
// stored.
func (v *tableView) find(b []byte, h uint64, latest *atomic.Pointer[tableView]) int {
	n := len(b)
	if n >= longLen {
		return -1
	}
	mask := uint64(len(v.slots) - 1)
	tag := h &^ 0xffffffff
	var body uint64
	if n <= maxInline {
		body = inlineBody(b)
	}
	for i := h >> v.shift; ; i = (i + 1) & mask {
		s := &v.slots[i]
		head := atomic.LoadUint64(&s.head)
		if head == 0 {
			return -1
		}
		if head&^0xffffffff != tag {
			continue
		}
		id := int(head&0xffffffff) - 1
		if n <= maxInline {
			if s.body == body {
				return id
			}
			continue
		}
		if s.body&0xff != uint64(n) {
			continue
		}
		a := latest.Load()
		if a.epoch != v.epoch {
			// The table was reset: its ids are of no use to v's reader.
			return -1
		}
		start := int(s.body >> 8)
		if bytes.Equal(a.arena[start:start+n], b) {
			return id
		}
	}
}

// A Lookup numbers tokens as a Counter does, on another goroutine than the
// Counter's, while the Counter counts others: it finds the ids of the
// tokens the Counter holds, and leaves the others to the Counter
// ([Counter.Settle]), which counts them all.
//
// A worker that tokenizes a batch of a corpus ahead of the Counter's
// goroutine numbers it so: the Counter then only counts the batch's ids and
// numbers the tokens it did not hold when the worker looked, which are few
// once the corpus's common tokens are in. That costs less than numbering
// the batch in a table of its own and then the table's distinct tokens in
// the Counter.
type Lookup struct {
	_    cacheline.Pad
	view *atomic.Pointer[tableView]
	// recent caches the ids of short tokens, as the Counter's cache does,
	// for the epoch of the last Begin.
	recent *[recentSize]recentEntry
	epoch  uint64
	misses []miss
	// touched keeps the loads IDs makes ahead of time from being optimised
	// away.
	touched uint64
	_       cacheline.Pad
}

// Missing marks, in the ids a Lookup numbers, a token the Counter did not
// hold: Missing|k is the k-th such token of its Pending. A token the Counter
// holds with an id of Missing or more is left to it in the same way.
const Missing = 1 << 31

// Pending holds what a Lookup leaves to its Counter: the tokens it did not
// find, copied, in order.
type Pending struct {
	text  []byte
	ends  []int
	epoch uint64
	// stale is set if the Counter was reset while the Lookup numbered:
	// the ids then mix two epochs.
	stale bool
	// toks and ids are Settle's scratch.
	toks [][]byte
	ids  []uint32
}

// NewLookup returns a Lookup of c's ids, for another goroutine. From the
// first call on, c publishes the changes to its table, and Reset allocates
// the table afresh rather than clearing it.
func (c *Counter) NewLookup() *Lookup {
	return &Lookup{view: c.tab.share(), recent: new([recentSize]recentEntry)}
}

// Begin empties p for the ids of a batch that l numbers next.
func (l *Lookup) Begin(p *Pending) {
	v := l.view.Load()
	if v.epoch != l.epoch {
		clear(l.recent[:])
		l.epoch = v.epoch
	}
	p.text, p.ends = p.text[:0], p.ends[:0]
	p.epoch, p.stale = v.epoch, false
}

// IDs appends to dst the ids of tokens that the Counter holds, and
// Missing|k for the k-th token of p that it does not, which is added to p.
// Like Counter.AddIDs, it takes the tokens in blocks: the cache first, then
// the loads of the table's slots, then the lookups. The cache loop is
// written out in both: a method shared by the two caches was not inlined
// (cost 126), a call per token.
func (l *Lookup) IDs(dst []uint32, tokens [][]byte, p *Pending) []uint32 {
	v := l.view.Load()
	if v.epoch != p.epoch {
		p.stale = true
	}
	for start := 0; start < len(tokens); start += addBlock {
		blk := tokens[start:min(len(tokens), start+addBlock)]
		k := len(dst)
		dst = slices.Grow(dst, len(blk))[:k+len(blk)]
		out := dst[k:]
		misses := l.misses[:0]
		for i, tok := range blk {
			if cacheable(tok) {
				body := inlineBody(tok)
				if e := l.cached(body); e.body == body {
					out[i] = e.id
					continue
				}
			}
			misses = append(misses, miss{i, maphash.Bytes(v.seed, tok)})
		}
		var touched uint64
		for _, m := range misses {
			touched += atomic.LoadUint64(&v.slots[m.h>>v.shift].head)
		}
		for _, m := range misses {
			tok := blk[m.i]
			id := v.find(tok, m.h, l.view)
			if uint(id) >= Missing {
				// Not found, or an id Missing would hide (a Counter of 2^31
				// tokens): the Counter numbers it.
				out[m.i] = Missing | uint32(len(p.ends))
				p.text = append(p.text, tok...)
				p.ends = append(p.ends, len(p.text))
				continue
			}
			out[m.i] = uint32(id)
			if cacheable(tok) {
				body := inlineBody(tok)
				*l.cached(body) = recentEntry{body: body, id: uint32(id)}
			}
		}
		l.misses = misses
		l.touched += touched
	}
	return dst
}

func (l *Lookup) cached(body uint64) *recentEntry { return cacheEntry(l.recent, body) }

// Settle counts the tokens whose ids a Lookup of c appended to ids with p,
// numbering in order those it did not find and putting their ids in place
// of Missing|k, so that ids end as c.AddIDs would have made them. It reports
// false, leaving c and ids as they were, if c was reset since the Lookup's
// Begin: ids are then void, and the batch's tokens must be counted again.
func (c *Counter) Settle(ids []uint32, p *Pending) bool {
	if p.stale || p.epoch != c.tab.epoch {
		return false
	}
	toks := p.toks[:0]
	start := 0
	for _, end := range p.ends {
		toks = append(toks, p.text[start:end])
		start = end
	}
	p.toks = toks
	p.ids = c.AddIDs(p.ids[:0], toks)
	found := p.ids
	counts := c.counts
	for i, id := range ids {
		if id&Missing != 0 {
			ids[i] = found[id&^Missing]
			continue
		}
		counts[id]++
	}
	return true
}
