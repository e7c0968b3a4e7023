package tokenize

import (
	"cmp"
	"encoding/binary"
	"slices"

	"github.com/pwe-project/pwe/internal/cacheline"
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
// fixed 256 KiB.
type Counter struct {
	_      cacheline.Pad
	tab    strtab
	counts []int64
	// recent is a direct-mapped cache of the ids of short tokens, in front
	// of the hash table: a token of up to 7 bytes is its slot body
	// (inlineBody), so one compare finds it, without hashing or probing.
	recent *[recentSize]recentEntry
	// misses is AddIDs's list of the tokens of a block that the cache did
	// not find.
	misses []miss
	// touched keeps the loads AddIDs makes ahead of time from being
	// optimised away.
	touched uint64
	_       cacheline.Pad
}

// A miss is a token that AddIDs looks up in the table: its index in the
// block and its hash.
type miss struct {
	i int
	h uint64
}

// The cache has recentSize entries of 16 bytes: 256 KiB. On bench-raw, 86 %
// of the tokens are short; the cache finds 94.5 % of those, against 88 % with
// 4096 entries, which made tokenize 2 % slower on one thread. A second cache
// for tokens of 8 to 16 bytes, found 65 % of the time, saved nothing.
const (
	recentBits = 14
	recentSize = 1 << recentBits
)

type recentEntry struct {
	body uint64 // 0 for an empty entry, which no cacheable token's body is
	id   uint32
	// n, in a Counter's cache, counts the occurrences that AddIDs found
	// there and has not yet added to the token's count (flush): the entry
	// was just read, while the counts are larger than the core's caches,
	// and adding to them cost a miss. A Lookup's cache leaves it 0.
	n uint32
}

// NewCounter returns an empty Counter.
func NewCounter() *Counter { return NewCounterSize(0) }

// NewCounterSize returns an empty Counter with room for about n distinct
// tokens before its table grows.
func NewCounterSize(n int) *Counter {
	n = max(n, 0)
	return &Counter{tab: newStrtab(n), counts: make([]int64, 0, roomFor(n)), recent: new([recentSize]recentEntry)}
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

// AddIDs counts each token once and appends their ids, those AddID would
// return one at a time, to dst.
//
// It takes the tokens in blocks. A first pass settles the tokens the cache
// holds and hashes the others; a second loads those tokens' home slots of
// the table, and a third finds them in order. The table is larger than the
// caches, so a lookup mostly waits on memory: the slots a lookup would load
// one at a time, with the tokenizing and hashing of the next tokens between
// them, are loaded together in a short loop and wait together. On bench-raw
// that made tokenize on one thread 11-14 % cheaper.
func (c *Counter) AddIDs(dst []uint32, tokens [][]byte) []uint32 {
	for start := 0; start < len(tokens); start += addBlock {
		blk := tokens[start:min(len(tokens), start+addBlock)]
		k := len(dst)
		dst = slices.Grow(dst, len(blk))[:k+len(blk)]
		out := dst[k:]
		misses := c.misses[:0]
		for i, tok := range blk {
			if cacheable(tok) {
				body := inlineBody(tok)
				if e := c.cached(body); e.body == body {
					if e.n++; e.n == 0 {
						c.counts[e.id] += 1 << 32
					}
					out[i] = e.id
					continue
				}
			}
			misses = append(misses, miss{i, c.tab.hash(tok)})
		}
		var touched uint64
		slots, shift := c.tab.slots, c.tab.shift
		for _, m := range misses {
			touched += slots[m.h>>shift].head
		}
		c.touched += touched
		for _, m := range misses {
			out[m.i] = uint32(c.addHashed(blk[m.i], m.h, 1))
		}
		c.misses = misses
	}
	return dst
}

// addBlock is the number of tokens AddIDs takes at a time.
const addBlock = 256

// AddCountID counts tok n times and returns its id, as AddID does.
func (c *Counter) AddCountID(tok []byte, n int64) uint32 { return uint32(c.add(tok, n)) }

// Reset empties c, keeping its memory for the tokens counted next; once c
// has Lookups (NewLookup), it allocates its table afresh instead, since
// they may still read the old one.
func (c *Counter) Reset() {
	c.tab.reset()
	c.counts = c.counts[:0]
	clear(c.recent[:])
}

// Free drops c's memory, which the Go runtime then reuses for other
// values, and withdraws the advice to map its table in huge pages, which
// would otherwise outlive it (see pages.Unhuge): a long-lived process that
// counts tokens once, such as a pipeline whose later stages run for hours,
// should free the Counter when done. c must not be used afterwards.
func (c *Counter) Free() {
	c.tab.free()
	c.counts, c.recent, c.misses = nil, nil, nil
}

// add counts tok n times and returns its id.
func (c *Counter) add(tok []byte, n int64) int {
	if cacheable(tok) {
		body := inlineBody(tok)
		if e := c.cached(body); e.body == body {
			c.counts[e.id] += n
			return int(e.id)
		}
	}
	return c.addHashed(tok, c.tab.hash(tok), n)
}

// addHashed counts tok, whose hash is h, n times in the table and puts it in
// the cache if it is short; it returns its id.
func (c *Counter) addHashed(tok []byte, h uint64, n int64) int {
	slot, id := c.tab.find(tok, h)
	if id < 0 {
		c.counts = append(c.counts, 0)
		id = c.tab.insert(tok, h, slot)
	}
	c.counts[id] += n
	if cacheable(tok) {
		body := inlineBody(tok)
		e := c.cached(body)
		if e.n != 0 {
			c.counts[e.id] += int64(e.n)
		}
		*e = recentEntry{body: body, id: uint32(id)}
	}
	return id
}

// Flush adds to the counts the occurrences that AddIDs left in its cache
// (recentEntry.n). Every method that reads the counts flushes first, which
// writes; after Flush, until the next token is counted, they only read,
// and may run on several goroutines at once.
func (c *Counter) Flush() {
	if c.recent == nil {
		return
	}
	for i := range c.recent {
		if e := &c.recent[i]; e.n != 0 {
			c.counts[e.id] += int64(e.n)
			e.n = 0
		}
	}
}

// cacheable reports whether the cache holds tok's id: tokens of 1 to
// maxInline bytes. The empty token's slot body, 0, marks an empty entry.
func cacheable(tok []byte) bool { return uint(len(tok)-1) < maxInline }

// cached returns the cache entry of a short token, whose slot body is body.
func (c *Counter) cached(body uint64) *recentEntry { return cacheEntry(c.recent, body) }

// cacheEntry returns the entry of a cache of short tokens' ids for the
// token whose slot body is body.
func cacheEntry(cache *[recentSize]recentEntry, body uint64) *recentEntry {
	return &cache[(body*0x9E3779B97F4A7C15)>>(64-recentBits)]
}

// Token returns the token with the given id; it stays valid while c is not
// changed.
func (c *Counter) Token(id int) []byte { return c.tab.str(id) }

// Counts returns the count of each id; it stays valid while c is not
// changed.
func (c *Counter) Counts() []int64 {
	c.Flush()
	return c.counts
}

// Merge adds the counts of o to c. o is unchanged.
func (c *Counter) Merge(o *Counter) {
	o.Flush()
	for id, n := range o.counts {
		c.add(o.tab.str(id), n)
	}
}

// Len returns the number of distinct tokens counted.
func (c *Counter) Len() int { return len(c.counts) }

// Count returns how often tok was counted.
func (c *Counter) Count(tok []byte) int64 {
	if _, id := c.tab.find(tok, c.tab.hash(tok)); id >= 0 {
		c.Flush()
		return c.counts[id]
	}
	return 0
}

// MemoryBytes returns the memory the Counter holds, in bytes.
func (c *Counter) MemoryBytes() int {
	return c.tab.memory() + 8*cap(c.counts) + 16*recentSize
}

// Footprint returns the bytes the Counter's distinct tokens take: their
// bytes, offsets and counts, and the hash slots they fill. Unlike
// MemoryBytes, it falls to zero when the Counter is reset, which keeps its
// memory for the tokens counted next.
func (c *Counter) Footprint() int64 {
	n := len(c.counts)
	return int64(len(c.tab.arena) + 16*n + 16*slotsFor(n))
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
//
// A histogram of the counts gives the count of the last token to keep, so
// only the tokens counted at least that often are ranked: put in byte order
// (sortByBytes), then by count, stably (byCount). On bench-raw
// (BenchmarkVocabulary), that and the tokens' sharing one string took 4.8 ms
// for 65 536 tokens and 22.5 ms for all 322 718, against 10.7 and 60 for a
// comparison sort on (count, first 8 bytes) and a string each.
func (c *Counter) Vocabulary(maxVocab int, minCount int64) []Entry {
	least := c.histogram().cut(maxVocab, minCount).least
	n := 0
	for _, x := range c.counts {
		if x >= least {
			n++
		}
	}
	keys := make([]byteKey, 0, n)
	for id, x := range c.counts {
		if x >= least {
			tok := c.tab.str(id)
			keys = append(keys, byteKey{prefix8(tok), int32(id), int32(len(tok))})
		}
	}
	keys = c.byCount(c.sortByBytes(keys))
	if maxVocab > 0 && len(keys) > maxVocab {
		keys = keys[:maxVocab]
	}
	// The tokens share one string: one allocation, not one each.
	size := 0
	for _, key := range keys {
		size += int(key.len)
	}
	text := make([]byte, 0, size)
	for _, key := range keys {
		text = append(text, c.tab.str(int(key.id))...)
	}
	all := string(text)
	out := make([]Entry, len(keys))
	start := 0
	for k, key := range keys {
		end := start + int(key.len)
		out[k] = Entry{Token: all[start:end], Count: c.counts[key.id]}
		start = end
	}
	return out
}

// byCount orders keys by descending count, keeping the order of equal
// counts: a counting sort on counts below histCap, the larger ones (few)
// sorted stably before them.
func (c *Counter) byCount(keys []byteKey) []byteKey {
	start := make([]int, histCap+1)
	bucket := func(n int64) int { return histCap - 1 - int(min(n, histCap-1)) }
	for _, k := range keys {
		start[bucket(c.counts[k.id])+1]++
	}
	for b := 1; b < len(start); b++ {
		start[b] += start[b-1]
	}
	out := make([]byteKey, len(keys))
	for _, k := range keys {
		b := bucket(c.counts[k.id])
		out[start[b]] = k
		start[b]++
	}
	// Bucket 0 holds the counts from histCap-1 up.
	slices.SortStableFunc(out[:start[0]], func(a, b byteKey) int { return cmp.Compare(c.counts[b.id], c.counts[a.id]) })
	return out
}

// VocabularySize returns the number of entries Vocabulary(maxVocab,
// minCount) returns and the sum of their counts, without ranking the
// tokens: from the histogram of the counts alone.
func (c *Counter) VocabularySize(maxVocab int, minCount int64) (size int, covered int64) {
	k := c.histogram().cut(maxVocab, minCount)
	return k.above + k.at, k.covered
}

func (c *Counter) histogram() *countHist {
	c.Flush()
	h := new(countHist)
	for _, n := range c.counts {
		h.add(n)
	}
	return h
}

// prefix8 returns b's first 8 bytes as a big-endian number, padded with
// zero bytes: numbers that differ order their tokens as bytes.Compare does,
// and equal ones leave it to the bytes (b and b+"\x00" share a prefix).
func prefix8(b []byte) uint64 {
	if len(b) >= 8 {
		return binary.BigEndian.Uint64(b)
	}
	// Byte by byte: a copy into an array would call memmove, which took
	// most of a spill's time on short tokens.
	var x uint64
	for i, c := range b {
		x |= uint64(c) << (56 - 8*i)
	}
	return x
}

// histCap bounds countHist's table: counts from histCap up are kept as a
// list, which is sorted only if the cut falls among them.
const histCap = 1 << 12

// countHist summarises the counts of a corpus's distinct tokens, enough to
// tell which of them a vocabulary keeps (cut) without ranking them.
type countHist struct {
	hist     [histCap]int // hist[n]: the tokens counted n times, n < histCap
	big      []int64      // the counts of histCap or more
	distinct int
}

func (h *countHist) add(n int64) {
	h.distinct++
	switch {
	case n >= histCap:
		h.big = append(h.big, n)
	case n >= 0:
		h.hist[n]++
	}
}

// A vocabCut tells which tokens a vocabulary keeps: every token counted more
// than least times (above of them), and the first at of those counted
// exactly least times in byte order; covered is the sum of their counts.
type vocabCut struct {
	least     int64
	above, at int
	covered   int64
}

// cut returns the cut of the vocabulary of the maxVocab most frequent
// tokens (all if maxVocab <= 0) counted at least minCount times. least is
// the count of the maxVocab-th most frequent token if that is at least
// minCount and positive; otherwise minCount.
func (h *countHist) cut(maxVocab int, minCount int64) vocabCut {
	slices.SortFunc(h.big, func(a, b int64) int { return cmp.Compare(b, a) })
	least := minCount
	if maxVocab > 0 && maxVocab < h.distinct {
		seen := 0
		if i := maxVocab - 1; i < len(h.big) {
			least = h.big[i]
		} else {
			seen = len(h.big)
			for n := histCap - 1; n > 0; n-- {
				if seen += h.hist[n]; seen >= maxVocab {
					least = int64(n)
					break
				}
			}
		}
		least = max(least, minCount)
	}
	var k vocabCut
	k.least = least
	tied := 0
	for _, n := range h.big {
		switch {
		case n > least:
			k.above++
			k.covered += n
		case n == least:
			tied++
		}
	}
	for n := max(least+1, 0); n < histCap; n++ {
		k.above += h.hist[n]
		k.covered += n * int64(h.hist[n])
	}
	if 0 <= least && least < histCap {
		tied += h.hist[least]
	}
	k.at = tied
	if maxVocab > 0 {
		k.at = max(0, min(tied, maxVocab-k.above))
	}
	k.covered += int64(k.at) * least
	return k
}
