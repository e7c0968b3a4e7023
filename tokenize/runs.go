package tokenize

import (
	"bufio"
	"bytes"
	"cmp"
	"container/heap"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"sync"

	"github.com/pwe-project/pwe/internal/bytesize"
	"github.com/pwe-project/pwe/internal/cleanup"
)

// Runs holds the counts of a corpus whose distinct tokens do not fit in
// memory at once. A Counter that grows past its budget is spilled as a run,
// its tokens in byte order with their counts, to a temporary file, and then
// reset; merging the runs gives every distinct token once with its total
// count, in byte order, from which the vocabulary is ranked as
// Counter.Vocabulary ranks it. The vocabulary is then exactly the one a
// single Counter would give. Spill is safe for concurrent use.
//
// A run is a sequence of (uvarint length, bytes, uvarint count).
type Runs struct {
	dir   string
	mu    sync.Mutex
	files []*os.File
	sizes []int // entries of each run
}

// NewRuns returns an empty set of runs whose files go to dir.
func NewRuns(dir string) *Runs { return &Runs{dir: dir} }

// Len returns the number of runs spilled.
func (r *Runs) Len() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.files)
}

// Spill writes c's tokens and counts as a run. c is not changed; the caller
// resets it.
func (r *Runs) Spill(c *Counter) error {
	if c.Len() == 0 {
		return nil
	}
	c.Flush()
	keys := c.sortedByBytes()
	f, err := os.CreateTemp(r.dir, "pwe-vocab-run-*")
	if err != nil {
		return fmt.Errorf("tokenize: spilling counts: %w", err)
	}
	cleanup.Add(f.Name())
	var werr error
	b := make([]byte, 0, 1<<20)
	var short [8]byte
	for i, k := range keys {
		// A token of up to 8 bytes is its key's prefix: the table's bytes,
		// read in this order at random, need not be.
		var tok []byte
		if k.len <= 8 {
			binary.BigEndian.PutUint64(short[:], k.prefix)
			tok = short[:k.len]
		} else {
			tok = c.tab.str(int(k.id))
		}
		b = binary.AppendUvarint(b, uint64(len(tok)))
		b = append(b, tok...)
		b = binary.AppendUvarint(b, uint64(c.counts[k.id]))
		if len(b) >= 1<<20-64 || i == len(keys)-1 {
			if _, werr = f.Write(b); werr != nil {
				break
			}
			b = b[:0]
		}
	}
	if werr != nil {
		f.Close()
		os.Remove(f.Name())
		cleanup.Forget(f.Name())
		return fmt.Errorf("tokenize: spilling counts to %s: %w", f.Name(), werr)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.files = append(r.files, f)
	r.sizes = append(r.sizes, len(keys))
	return nil
}

// byteKey orders a token by its bytes: their first 8 (prefix8) settle
// most comparisons.
type byteKey struct {
	prefix  uint64
	id, len int32
}

// sortedByBytes returns the keys of c's tokens in byte order.
func (c *Counter) sortedByBytes() []byteKey {
	keys := make([]byteKey, c.Len())
	for id := range keys {
		tok := c.tab.str(id)
		keys[id] = byteKey{prefix8(tok), int32(id), int32(len(tok))}
	}
	return c.sortByBytes(keys)
}

// sortByBytes puts keys of c's tokens in byte order. A radix sort on the
// prefixes, a byte at a time from the last, skipping the bytes all keys
// share, took a fraction of a comparison sort's time; tokens whose
// prefixes are equal are then put in order by their bytes.
func (c *Counter) sortByBytes(keys []byteKey) []byteKey {
	var and, or uint64 = ^uint64(0), 0
	for _, k := range keys {
		and &= k.prefix
		or |= k.prefix
	}
	tmp := make([]byteKey, len(keys))
	for shift := 0; shift < 64; shift += 8 {
		if (and^or)>>shift&0xff == 0 {
			continue // every token has this byte
		}
		var start [257]int
		for _, k := range keys {
			start[k.prefix>>shift&0xff+1]++
		}
		for d := 1; d < len(start); d++ {
			start[d] += start[d-1]
		}
		for _, k := range keys {
			d := k.prefix >> shift & 0xff
			tmp[start[d]] = k
			start[d]++
		}
		keys, tmp = tmp, keys
	}
	for i := 0; i < len(keys); {
		j := i + 1
		for j < len(keys) && keys[j].prefix == keys[i].prefix {
			j++
		}
		if j-i > 1 {
			slices.SortFunc(keys[i:j], func(a, b byteKey) int {
				return bytes.Compare(c.tab.str(int(a.id)), c.tab.str(int(b.id)))
			})
		}
		i = j
	}
	return keys
}

// Close removes the runs' files.
func (r *Runs) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	var errs []error
	for _, f := range r.files {
		errs = append(errs, f.Close(), os.Remove(f.Name()))
		cleanup.Forget(f.Name())
	}
	r.files, r.sizes = nil, nil
	return errors.Join(errs...)
}

// Vocabulary returns what Counter.Vocabulary returns for a Counter holding
// every token of the runs, and the number of distinct tokens. It reads the
// runs twice: once for the histogram of the counts, once for the tokens
// the vocabulary keeps, which are all it holds in memory; it refuses, before
// the second reading, a vocabulary whose tokens would take more than limit
// bytes.
func (r *Runs) Vocabulary(maxVocab int, minCount int64, limit int64) ([]Entry, int, error) {
	h, textBytes, err := r.histogram()
	if err != nil {
		return nil, 0, err
	}
	k := h.cut(maxVocab, minCount)
	size := k.above + k.at
	// An entry holds its token's bytes, a string header and a count; the
	// tokens' average length stands for the kept ones'.
	if need := int64(size) * (40 + textBytes/int64(max(h.distinct, 1))); need > limit {
		return nil, h.distinct, fmt.Errorf("a vocabulary of %d tokens would take about %s, more than the %s the memory budget leaves it; set --max-vocab or --min-count, or raise --memory",
			size, bytesize.Format(need), bytesize.Format(limit))
	}
	entries := make([]Entry, 0, size)
	tied := 0
	err = r.each(func(tok []byte, n int64) error {
		switch {
		case n == k.least && tied < k.at:
			tied++
			fallthrough
		case n > k.least:
			entries = append(entries, Entry{Token: string(tok), Count: n})
		}
		return nil
	})
	if err != nil {
		return nil, h.distinct, err
	}
	// The entries come in byte order, so a stable sort by count leaves
	// equal counts in it.
	slices.SortStableFunc(entries, func(a, b Entry) int { return cmp.Compare(b.Count, a.Count) })
	return entries, h.distinct, nil
}

func (r *Runs) histogram() (*countHist, int64, error) {
	h := new(countHist)
	var text int64
	err := r.each(func(tok []byte, n int64) error {
		h.add(n)
		text += int64(len(tok))
		return nil
	})
	return h, text, err
}

// each merges the runs and calls fn with every distinct token, in byte
// order, and its total count; tok is valid during the call only.
func (r *Runs) each(fn func(tok []byte, n int64) error) error {
	r.mu.Lock()
	files, sizes := slices.Clone(r.files), slices.Clone(r.sizes)
	r.mu.Unlock()
	var q runHeap
	for i, f := range files {
		size, err := f.Seek(0, io.SeekEnd)
		if err != nil {
			return fmt.Errorf("tokenize: reading spilled counts: %w", err)
		}
		c := &runCursor{name: f.Name(), r: bufio.NewReaderSize(io.NewSectionReader(f, 0, size), 64<<10), left: sizes[i]}
		if ok, err := c.next(); err != nil {
			return err
		} else if ok {
			q = append(q, c)
		}
	}
	heap.Init(&q)
	var tok []byte
	for len(q) > 0 {
		c := q[0]
		tok = append(tok[:0], c.tok...)
		n := int64(0)
		for len(q) > 0 && bytes.Equal(q[0].tok, tok) {
			c = q[0]
			n += c.n
			ok, err := c.next()
			if err != nil {
				return err
			}
			if ok {
				heap.Fix(&q, 0)
			} else {
				heap.Pop(&q)
			}
		}
		if err := fn(tok, n); err != nil {
			return err
		}
	}
	return nil
}

// runCursor reads one run.
type runCursor struct {
	name string
	r    *bufio.Reader
	left int // entries not yet read
	tok  []byte
	n    int64
}

// next reads the next entry; it returns false at the end of the run.
func (c *runCursor) next() (bool, error) {
	l, err := binary.ReadUvarint(c.r)
	switch {
	case err == io.EOF && c.left == 0:
		return false, nil
	case err == nil && c.left == 0:
		err = errors.New("more entries than were written")
	}
	c.left--
	if err == nil && l > 1<<30 {
		err = errors.New("corrupt token length")
	}
	if err == nil {
		c.tok = slices.Grow(c.tok[:0], int(l))[:l]
		_, err = io.ReadFull(c.r, c.tok)
	}
	var n uint64
	if err == nil {
		n, err = binary.ReadUvarint(c.r)
	}
	if err == nil && n > 1<<62 {
		err = errors.New("corrupt count")
	}
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return false, fmt.Errorf("tokenize: reading spilled counts %s: %w", c.name, err)
	}
	c.n = int64(n)
	return true, nil
}

// runHeap orders cursors by their current token.
type runHeap []*runCursor

func (q runHeap) Len() int           { return len(q) }
func (q runHeap) Less(i, j int) bool { return bytes.Compare(q[i].tok, q[j].tok) < 0 }
func (q runHeap) Swap(i, j int)      { q[i], q[j] = q[j], q[i] }
func (q *runHeap) Push(x any)        { *q = append(*q, x.(*runCursor)) }
func (q *runHeap) Pop() any {
	old := *q
	c := old[len(old)-1]
	*q = old[:len(old)-1]
	return c
}
