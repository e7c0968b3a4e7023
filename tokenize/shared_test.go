package tokenize

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
)

// lookupTokens returns random tokens of every kind a Lookup handles apart:
// short ones (in a slot), longer ones (in the arena), ones of longLen bytes
// or more (never found), and the empty token.
func lookupTokens(rng *rand.Rand, n int) [][]byte {
	toks := randomTokens(rng, n)
	for i := range toks {
		switch {
		case i%7 == 0:
			toks[i] = append(toks[i], "-longer"...)
		case i%13 == 3:
			toks[i] = []byte(strings.Repeat("y", 240+i%30) + fmt.Sprint(i%17))
		case i%101 == 5:
			toks[i] = nil
		}
	}
	return toks
}

// TestLookupSettle numbers batches of tokens as tokenize's workers do: some
// on the Counter's goroutine with AddIDs, others on other goroutines with
// Lookups, a few batches ahead and while the Counter adds tokens, then
// settled in order; the Counter is reset after some batches, as a spill
// resets it, and a batch that Settle refuses is numbered again. The ids of
// every batch, and the counts and tokens at every reset and at the end, must
// be those of one Counter numbering every batch in order.
func TestLookupSettle(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	toks := lookupTokens(rng, 80000)
	var batches [][][]byte
	for start := 0; start < len(toks); {
		end := min(len(toks), start+1+rng.IntN(2000))
		batches = append(batches, toks[start:end])
		start = end
	}
	resets := make([]bool, len(batches))
	for i := range resets {
		resets[i] = rng.IntN(8) == 0
	}
	type state struct {
		counts []int64
		tokens []string
	}
	snapshot := func(c *Counter) state {
		s := state{counts: slices.Clone(c.Counts())}
		for id := range c.Len() {
			s.tokens = append(s.tokens, string(c.Token(id)))
		}
		return s
	}
	ref := NewCounter()
	want := make([][]uint32, len(batches))
	var wantStates []state
	for i, b := range batches {
		want[i] = ref.AddIDs(nil, b)
		if resets[i] {
			wantStates = append(wantStates, snapshot(ref))
			ref.Reset()
		}
	}
	wantStates = append(wantStates, snapshot(ref))

	for _, workers := range []int{1, 3} {
		t.Run(fmt.Sprint(workers, "workers"), func(t *testing.T) {
			c := NewCounter()
			type result struct {
				ids  []uint32
				p    Pending
				done chan struct{}
			}
			results := make([]result, len(batches))
			settled := make([]chan struct{}, len(batches))
			for i := range results {
				results[i].done = make(chan struct{})
				settled[i] = make(chan struct{})
			}
			var wg sync.WaitGroup
			for w := range workers {
				l := c.NewLookup()
				wg.Go(func() {
					for i := w + 1; i < len(batches); i += workers + 1 {
						if i >= 3 {
							<-settled[i-3] // a few batches ahead, no more
						}
						r := &results[i]
						l.Begin(&r.p)
						b := batches[i]
						for start := 0; start < len(b); {
							end := min(len(b), start+1+rng2(i, start)%700)
							r.ids = l.IDs(r.ids, b[start:end], &r.p)
							start = end
						}
						close(r.done)
					}
				})
			}
			var states []state
			redone := 0
			for i, b := range batches {
				var ids []uint32
				if i%(workers+1) == 0 {
					ids = c.AddIDs(nil, b)
				} else {
					r := &results[i]
					<-r.done
					ids = r.ids
					if !c.Settle(ids, &r.p) {
						redone++
						ids = c.AddIDs(nil, b)
					}
				}
				if !slices.Equal(ids, want[i]) {
					t.Fatalf("batch %d: ids differ from one Counter's in order", i)
				}
				if resets[i] {
					states = append(states, snapshot(c))
					c.Reset()
				}
				close(settled[i])
			}
			wg.Wait()
			states = append(states, snapshot(c))
			for k := range wantStates {
				if !slices.Equal(states[k].counts, wantStates[k].counts) || !slices.Equal(states[k].tokens, wantStates[k].tokens) {
					t.Fatalf("table %d of %d: counts or tokens differ from one Counter's", k, len(wantStates))
				}
			}
			t.Logf("%d of %d batches numbered again after a reset", redone, len(batches))
		})
	}
}

// rng2 is a cheap deterministic number for the workers' block sizes, which
// must not share the test's generator across goroutines.
func rng2(i, j int) int { return (i*7919 + j*104729) & 0xffff }

// TestSettleRefusesStale resets the Counter between a Lookup's Begin and
// Settle, and between Begin and IDs: Settle must refuse both batches,
// leaving the counts alone. Growth of the table between IDs calls must
// not: ids found in the old slots stay right.
func TestSettleRefusesStale(t *testing.T) {
	c := NewCounter()
	l := c.NewLookup()
	c.Add(toBytes("a", "bb", "a-much-longer-token"))
	var p Pending
	l.Begin(&p)
	ids := l.IDs(nil, toBytes("a", "new", "a-much-longer-token"), &p)
	if want := []uint32{0, Missing, 2}; !slices.Equal(ids, want) { // Missing|0: the first token not found
		t.Fatalf("ids %x, want %x", ids, want)
	}
	c.Reset()
	c.Add(toBytes("x"))
	if c.Settle(ids, &p) || !slices.Equal(c.Counts(), []int64{1}) {
		t.Fatalf("Settle after a reset since Begin: accepted, or counts %v changed", c.Counts())
	}
	l.Begin(&p)
	ids = l.IDs(nil, toBytes("x"), &p)
	c.Reset()
	ids = l.IDs(ids, toBytes("x"), &p)
	if c.Settle(ids, &p) {
		t.Fatal("Settle accepted ids found on both sides of a reset")
	}

	// Growth: the slots are replaced many times between IDs calls.
	c = NewCounter()
	l = c.NewLookup()
	c.Add(toBytes("first", "a-much-longer-first"))
	l.Begin(&p)
	ids = l.IDs(nil, toBytes("first", "a-much-longer-first"), &p)
	for i := range 10000 {
		c.AddID([]byte(fmt.Sprint("t", i)))
	}
	ids = l.IDs(ids, toBytes("t5", "first", "a-much-longer-first", "t9999", "later"), &p)
	if !c.Settle(ids, &p) {
		t.Fatal("Settle refused a batch numbered while the table grew")
	}
	want := []uint32{0, 1, 7, 0, 1, 10001, 10002}
	if !slices.Equal(ids, want) {
		t.Fatalf("ids %v, want %v", ids, want)
	}
	if got := c.Count([]byte("first")); got != 3 {
		t.Fatalf("count of first %d, want 3", got)
	}
}

// FuzzLookupSettle numbers batches of tokens cut from the input (at commas,
// seven to a batch) on one goroutine, each batch whose first token has a
// length not divisible by 3 through a Lookup before the batch ahead of it
// is counted, the others with AddIDs; a batch holding the token "R" resets
// the Counter after it. Every batch's ids must be those of a Counter that
// numbers every batch in order with AddIDs, and so must the counts.
func FuzzLookupSettle(f *testing.F) {
	f.Add([]byte("a,b,c,a,bb,the,cat,sat,on,the,mat,R,x,y,a-longer-token,the,cat"))
	f.Add([]byte(strings.Repeat("word,", 40) + strings.Repeat("z", 300) + ",R," + strings.Repeat("q", 9) + ",,a,"))
	f.Fuzz(func(t *testing.T, data []byte) {
		toks := bytes.Split(data, []byte(","))
		if len(toks) > 4000 {
			toks = toks[:4000]
		}
		var batches [][][]byte
		for i := 0; i < len(toks); i += 7 {
			batches = append(batches, toks[i:min(len(toks), i+7)])
		}
		viaLookup := func(b [][]byte) bool { return len(b[0])%3 != 0 }
		resets := func(b [][]byte) bool {
			return slices.ContainsFunc(b, func(tok []byte) bool { return string(tok) == "R" })
		}
		ref, c := NewCounter(), NewCounter()
		l := c.NewLookup()
		pending := make([]Pending, len(batches))
		ids := make([][]uint32, len(batches))
		finish := func(i int) {
			b := batches[i]
			want := ref.AddIDs(nil, b)
			got := ids[i]
			if !viaLookup(b) || !c.Settle(got, &pending[i]) {
				got = c.AddIDs(nil, b)
			}
			if !slices.Equal(got, want) {
				t.Fatalf("batch %d: ids %v, want %v", i, got, want)
			}
			if resets(b) {
				ref.Reset()
				c.Reset()
			}
		}
		for i, b := range batches {
			if viaLookup(b) {
				l.Begin(&pending[i])
				ids[i] = l.IDs(nil, b, &pending[i])
			}
			if i > 0 {
				finish(i - 1)
			}
		}
		if len(batches) > 0 {
			finish(len(batches) - 1)
		}
		if !slices.Equal(c.Counts(), ref.Counts()) {
			t.Fatal("counts differ")
		}
	})
}
