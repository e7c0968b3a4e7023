package counts

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/pwe-project/pwe/formats"
)

// TestAddMappedMatchesAdd counts random stream ids, a fifth of them out of
// the vocabulary, once through AddMapped in chunks of documents and once
// mapped here and given to Add a document at a time, and compares the
// rows, the statistics and the out-of-vocabulary tallies: with stores
// small enough to spill and to give up on long documents, narrow and wide,
// with gaps kept and with subsampling (both of which AddMapped leaves to
// Add).
func TestAddMappedMatchesAdd(t *testing.T) {
	rng := rand.New(rand.NewPCG(41, 42))
	const streamIDs, v = 400, 120
	vocab := make([]int32, streamIDs)
	for i := range vocab {
		vocab[i] = int32(rng.IntN(v))
		if rng.IntN(5) == 0 {
			vocab[i] = -1
		}
	}
	var sids []uint32
	var lens []int32
	for range 600 {
		n := rng.IntN(40)
		if rng.IntN(50) == 0 {
			n = 300 + rng.IntN(200) // longer than the smallest stores
		}
		for range n {
			sids = append(sids, uint32(rng.IntN(streamIDs)))
		}
		lens = append(lens, int32(n))
	}
	counts := make([]int64, v)
	for _, sid := range sids {
		if id := vocab[sid]; id >= 0 {
			counts[id]++
		}
	}
	for i := range counts {
		counts[i]++
	}
	for _, c := range []struct {
		direct    int
		wide      bool
		keep      bool
		subsample float64
	}{
		{1 << 20, false, false, 0},
		{250, false, false, 0},
		{250, true, false, 0},
		{90, false, false, 0},
		{250, false, true, 0},
		{250, false, false, 1e-3},
	} {
		name := fmt.Sprintf("direct %d wide %v keep %v subsample %g", c.direct, c.wide, c.keep, c.subsample)
		run := func(mapped bool) ([]formats.CountRow, Stats, int64, []int64) {
			cnt, err := New(Config{Window: 3, Negatives: 1, Seed: 9, Subsample: c.subsample}, counts)
			if err != nil {
				t.Fatal(err)
			}
			defer cnt.Close()
			cnt.directTokens, cnt.wideTokens = c.direct, c.direct
			cnt.narrow = cnt.narrow && !c.wide
			acc := cnt.NewAccumulator()
			byID := make([]int64, streamIDs)
			var oov int64
			rest, restLens := sids, lens
			seq := int64(0)
			var scratch []int32
			for len(restLens) > 0 {
				k := min(len(restLens), 1+rng.IntN(30))
				n := 0
				for _, l := range restLens[:k] {
					n += int(l)
				}
				if mapped {
					o, s, err := acc.AddMapped(rest[:n], restLens[:k], vocab, c.keep, byID, seq, scratch)
					if err != nil {
						t.Fatal(err)
					}
					oov, scratch = oov+o, s
				} else {
					doc := rest
					for d, l := range restLens[:k] {
						var ids []int32
						for _, sid := range doc[:l] {
							id := vocab[sid]
							if id < 0 {
								oov++
								byID[sid]++
								if !c.keep {
									continue
								}
							}
							ids = append(ids, id)
						}
						doc = doc[l:]
						if err := acc.Add(ids, seq+int64(d)); err != nil {
							t.Fatal(err)
						}
					}
				}
				rest, restLens, seq = rest[n:], restLens[k:], seq+int64(k)
			}
			rows, st := finishRows(t, cnt)
			return rows, st, oov, byID
		}
		got, gotSt, gotOOV, gotByID := run(true)
		want, wantSt, wantOOV, wantByID := run(false)
		rowsEqual(t, name, got, want)
		if gotSt != wantSt {
			t.Errorf("%s: statistics %+v, want %+v", name, gotSt, wantSt)
		}
		if gotOOV != wantOOV || !slices.Equal(gotByID, wantByID) {
			t.Errorf("%s: %d out-of-vocabulary ids, want %d (or their tallies differ)", name, gotOOV, wantOOV)
		}
		if c.direct == 90 && gotSt.Spills == 0 {
			t.Errorf("%s: no spill; the test meant the stores to fill", name)
		}
	}
}
