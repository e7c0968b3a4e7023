package counts

import (
	"fmt"
	"testing"
)

// FuzzStoresMatchPairs: for any documents, window and weighting, counting
// rows from the stored documents gives the naive reference's positive
// counts, and every row (negatives included) that counting pairs gives,
// whether the stores hold everything or spill, on one or more workers.
func FuzzStoresMatchPairs(f *testing.F) {
	f.Add([]byte("\x05\x01\x02\x03\x00\x01\x02\xff\x04\x04\x01"), uint8(3), uint8(0), uint16(7))
	f.Add([]byte("\x00\x00\x00\x00\x00\x00\x00\x00"), uint8(15), uint8(2), uint16(1))
	f.Add([]byte("\x01\x02\xfe\x03\x01\x02\x03\x01\xfe\x02"), uint8(1), uint8(1), uint16(3))
	f.Fuzz(func(t *testing.T, data []byte, w, wt uint8, store uint16) {
		const v = 9
		window := 1 + int(w)%maxDirectWindow
		weighting := Weighting(int(wt) % 3)
		// A byte is an id below v, a gap (0xff) or a document's end (0xfe).
		var docs [][]int32
		var doc []int32
		counts := make([]int64, v)
		for _, b := range data {
			switch {
			case b == 0xfe:
				docs, doc = append(docs, doc), nil
			case b == 0xff:
				doc = append(doc, -1)
			default:
				id := int32(b % v)
				doc = append(doc, id)
				counts[id]++
			}
		}
		docs = append(docs, doc)
		// Ids by descending count, as a vocabulary has them.
		for i := 1; i < v; i++ {
			counts[i] = min(counts[i], counts[i-1])
		}
		for i := range counts {
			counts[i]++
		}
		if _, err := windowScale(window, weighting); err != nil {
			t.Skip()
		}
		ref, refPairs := refCounts(docs, window, weighting)
		cfg := Config{Window: window, Weighting: weighting, Negatives: 2, Seed: 3, TempDir: t.TempDir()}
		cfg.Workers = 1
		want, _ := runCounter(t, cfg, counts, docs, 1, &tuning{dense: -1})
		for _, tc := range []struct {
			workers int
			tune    *tuning
		}{
			{1, nil},
			{1, &tuning{direct: 1 << 20, scanRow: -1}},
			{2, &tuning{direct: 1 + int(store)%64, scanRow: 1 + int(store)%7}},
			{3, &tuning{direct: 1 + int(store)%16, dense: 4, bufPairs: 1 << 10, byLength: true}},
		} {
			cfg.Workers = tc.workers
			what := fmt.Sprintf("W=%d %v, %d workers %+v", window, weighting, tc.workers, tc.tune)
			got, st := runCounter(t, cfg, counts, docs, 2, tc.tune)
			checkAgainstRef(t, what, got, ref)
			if st.PositivePairs != refPairs {
				t.Fatalf("%s: %d positive pairs, want %d", what, st.PositivePairs, refPairs)
			}
			rowsEqual(t, what, want, got)
		}
	})
}
