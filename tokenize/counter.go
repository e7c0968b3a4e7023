package tokenize

import (
	"bytes"
	"slices"
)

// A Counter counts how often each distinct token occurs. It is not safe for
// concurrent use: give each goroutine its own and [Counter.Merge] them.
//
// Memory grows with the number of distinct tokens, not with the number of
// tokens counted: each distinct token costs its bytes, 16 bytes of offset
// and count, and 21 to 43 bytes of hash table (16-byte slots, which hold
// tokens of up to 7 bytes inline, kept between 3/8 and 3/4 full), and
// appending may leave up to half of each slice unused. On the bench-raw
// corpus (323 thousand distinct tokens of 9 bytes on average) that came to
// 54 bytes per distinct token, against 63 for a map[string]int32 and a slice
// of counts (BenchmarkCounterMemory). A cache of short tokens' ids adds a
// fixed 64 KiB.
type Counter struct {
	tab    strtab
	counts []int64
	// recent is a direct-mapped cache of the ids of short tokens, in front
	// of the hash table: a token of up to 7 bytes is its slot body
	// (inlineBody), so one compare finds it, without hashing or probing.
	recent *[recentSize]recentEntry
}

// The cache has recentSize entries of 16 bytes: 64 KiB.
const (
	recentBits = 12
	recentSize = 1 << recentBits
)

type recentEntry struct {
	body uint64 // 0 for an empty entry: a token's body has a non-zero length
	id   int64
}

// NewCounter returns an empty Counter.
func NewCounter() *Counter {
	return &Counter{tab: newStrtab(0), recent: new([recentSize]recentEntry)}
}

// Add counts each token once. It allocates only to store tokens not seen
// before (amortised).
func (c *Counter) Add(tokens [][]byte) {
	for _, tok := range tokens {
		c.add(tok, 1)
	}
}

// AddCount counts tok n times.
func (c *Counter) AddCount(tok []byte, n int64) { c.add(tok, n) }

// AddID counts tok once and returns its id: ids number the distinct tokens
// 0, 1, 2, ... in the order in which they were first counted, so a corpus
// counted in order gives the same ids whatever else is counted with it
// afterwards. Merge keeps the ids of the Counter merged into.
func (c *Counter) AddID(tok []byte) uint32 { return uint32(c.add(tok, 1)) }

// AddCountID counts tok n times and returns its id, as AddID does.
func (c *Counter) AddCountID(tok []byte, n int64) uint32 { return uint32(c.add(tok, n)) }

// Reset empties c, keeping its memory for the tokens counted next.
func (c *Counter) Reset() {
	c.tab.reset()
	c.counts = c.counts[:0]
	clear(c.recent[:])
}

// add counts tok n times and returns its id.
func (c *Counter) add(tok []byte, n int64) int {
	var e *recentEntry
	var body uint64
	if len(tok) <= maxInline {
		body = inlineBody(tok)
		e = &c.recent[(body*0x9E3779B97F4A7C15)>>(64-recentBits)]
		if e.body == body {
			c.counts[e.id] += n
			return int(e.id)
		}
	}
	h := c.tab.hash(tok)
	slot, id := c.tab.find(tok, h)
	if id < 0 {
		c.counts = append(c.counts, 0)
		id = c.tab.insert(tok, h, slot)
	}
	c.counts[id] += n
	if e != nil {
		*e = recentEntry{body, int64(id)}
	}
	return id
}

// Token returns the token with the given id; it stays valid while c is not
// changed.
func (c *Counter) Token(id int) []byte { return c.tab.str(id) }

// Counts returns the count of each id; it stays valid while c is not
// changed.
func (c *Counter) Counts() []int64 { return c.counts }

// Merge adds the counts of o to c. o is unchanged.
func (c *Counter) Merge(o *Counter) {
	for id, n := range o.counts {
		c.add(o.tab.str(id), n)
	}
}

// Len returns the number of distinct tokens counted.
func (c *Counter) Len() int { return len(c.counts) }

// Count returns how often tok was counted.
func (c *Counter) Count(tok []byte) int64 {
	if _, id := c.tab.find(tok, c.tab.hash(tok)); id >= 0 {
		return c.counts[id]
	}
	return 0
}

// MemoryBytes returns the memory the Counter holds, in bytes.
func (c *Counter) MemoryBytes() int {
	return c.tab.memory() + 8*cap(c.counts) + 16*recentSize
}

// An Entry is a vocabulary token and its count.
type Entry struct {
	Token string
	Count int64
}

// Vocabulary returns the maxVocab most frequent tokens counted at least
// minCount times (all of them if maxVocab <= 0), by descending count with
// ties in ascending byte order of the token. The index of an entry is its
// token id. The order depends only on the counts, so counters merged in any
// order give the same vocabulary.
func (c *Counter) Vocabulary(maxVocab int, minCount int64) []Entry {
	var ids []int
	if maxVocab <= 0 || maxVocab >= len(c.counts) {
		for id, n := range c.counts {
			if n >= minCount {
				ids = append(ids, id)
			}
		}
	} else {
		ids = c.top(maxVocab, minCount)
	}
	slices.SortFunc(ids, func(a, b int) int {
		if c.before(a, b) {
			return -1
		}
		return 1
	})
	out := make([]Entry, len(ids))
	for k, id := range ids {
		out[k] = Entry{Token: string(c.tab.str(id)), Count: c.counts[id]}
	}
	return out
}

// before reports whether token a ranks before token b in the vocabulary.
// Distinct ids hold distinct tokens, so the order is total.
func (c *Counter) before(a, b int) bool {
	if ca, cb := c.counts[a], c.counts[b]; ca != cb {
		return ca > cb
	}
	return bytes.Compare(c.tab.str(a), c.tab.str(b)) < 0
}

// top returns, unordered, the k first-ranked tokens counted at least minCount
// times, in O(n log k) time where sorting all n would take O(n log n): it
// keeps the best k seen so far in a binary heap whose root ranks last.
func (c *Counter) top(k int, minCount int64) []int {
	h := make([]int, 0, k)
	for id, n := range c.counts {
		switch {
		case n < minCount:
		case len(h) < k:
			h = append(h, id)
			for i := len(h) - 1; i > 0; {
				p := (i - 1) / 2
				if !c.before(h[p], h[i]) {
					break
				}
				h[i], h[p] = h[p], h[i]
				i = p
			}
		case c.before(id, h[0]):
			h[0] = id
			for i := 0; ; {
				m, l := i, 2*i+1
				if l < len(h) && c.before(h[m], h[l]) {
					m = l
				}
				if r := l + 1; r < len(h) && c.before(h[m], h[r]) {
					m = r
				}
				if m == i {
					break
				}
				h[i], h[m] = h[m], h[i]
				i = m
			}
		}
	}
	return h
}
