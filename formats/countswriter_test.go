package formats

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/klauspost/compress/zstd"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
)

// TestCountsWriterLayout writes more than a row group of counts whose
// values take every path of the encoder (small and large whole numbers,
// fractions, -0, a dictionary that overflows) and reads them back bit for
// bit with parquet-go's reader, checking the chunk statistics and codecs
// against values computed here.
func TestCountsWriterLayout(t *testing.T) {
	n := RowGroupRows + 3*CountsPageRows/2
	rows := layoutRows(n)
	for _, many := range []bool{false, true} {
		p := filepath.Join(t.TempDir(), "c.parquet")
		w, err := CreateCounts(p, Meta{Stats: map[string]int{"x": 1}}, many)
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < n; i += 1000 {
			if err := w.Write(rows[i:min(i+1000, n)]); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.SetStats(map[string]int{"rows": n}); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if err := w.Write(rows[:1]); err == nil {
			t.Error("Write after Close succeeded")
		}
		got, meta, err := ReadAll[CountRow](p, SchemaCounts)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != n {
			t.Fatalf("manyValues %v: read %d rows, wrote %d", many, len(got), n)
		}
		for i, r := range rows {
			g := got[i]
			if g.TargetID != r.TargetID || g.ContextID != r.ContextID ||
				math.Float64bits(g.NPos) != math.Float64bits(r.NPos) || math.Float64bits(g.NNeg) != math.Float64bits(r.NNeg) {
				t.Fatalf("manyValues %v: row %d read %+v, wrote %+v", many, i, g, r)
			}
		}
		if s, want := string(meta.Stats.(json.RawMessage)), fmt.Sprintf(`{"rows":%d}`, n); s != want {
			t.Errorf("pwe.stats %s, want %s", s, want)
		}
		checkCountsChunks(t, p, rows, many)
	}
}

// layoutRows returns n sorted rows whose values take every path of the
// encoder: small and large whole numbers, fractions, -0, and distinct
// values that overflow a row group's dictionary.
func layoutRows(n int) []CountRow {
	rows := make([]CountRow, n)
	for i := range rows {
		r := CountRow{TargetID: int32(i / 37), ContextID: int32(i%37*11 + i/100000)}
		switch i % 5 {
		case 0:
			r.NPos = float64(i % 13)
		case 1:
			r.NPos = float64(5000 + i%17) // whole, beyond the direct-mapped table
		case 2:
			r.NPos = float64(i%9) / 4
		case 3:
			r.NPos = math.Copysign(0, -1)
		default:
			r.NPos = 1
		}
		// Distinct values: more than countsMaxDict in the first row group,
		// so its n_neg chunk falls back to PLAIN.
		r.NNeg = float64(i) / 2
		rows[i] = r
	}
	return rows
}

func checkCountsChunks(t *testing.T, path string, rows []CountRow, many bool) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	pf, err := parquet.OpenFile(f, st.Size())
	if err != nil {
		t.Fatal(err)
	}
	groups := pf.Metadata().RowGroups
	if len(groups) != 2 || groups[0].NumRows != RowGroupRows {
		t.Fatalf("%d row groups, the first of %d rows; want 2, %d", len(groups), groups[0].NumRows, RowGroupRows)
	}
	start := 0
	for g, rg := range groups {
		part := rows[start : start+int(rg.NumRows)]
		start += int(rg.NumRows)
		for c, cc := range rg.Columns {
			md := cc.MetaData
			var lo, hi []byte
			switch c {
			case 0, 1:
				minI, maxI := int32(math.MaxInt32), int32(math.MinInt32)
				for _, r := range part {
					x := r.TargetID
					if c == 1 {
						x = r.ContextID
					}
					minI, maxI = min(minI, x), max(maxI, x)
				}
				lo = binary.LittleEndian.AppendUint32(nil, uint32(minI))
				hi = binary.LittleEndian.AppendUint32(nil, uint32(maxI))
			default:
				minF, maxF := math.Inf(1), math.Inf(-1)
				for _, r := range part {
					x := r.NPos
					if c == 3 {
						x = r.NNeg
					}
					minF, maxF = min(minF, x), max(maxF, x)
				}
				if minF == 0 {
					minF = math.Copysign(0, -1)
				}
				lo = binary.LittleEndian.AppendUint64(nil, math.Float64bits(minF))
				hi = binary.LittleEndian.AppendUint64(nil, math.Float64bits(maxF))
			}
			if !bytes.Equal(md.Statistics.MinValue, lo) || !bytes.Equal(md.Statistics.MaxValue, hi) {
				t.Errorf("group %d column %s: statistics %x..%x, want %x..%x", g, md.PathInSchema[0],
					md.Statistics.MinValue, md.Statistics.MaxValue, lo, hi)
			}
			if want := countsColumns[c].codec; md.Codec != want {
				t.Errorf("group %d column %s: codec %v, want %v", g, md.PathInSchema[0], md.Codec, want)
			}
			if md.NumValues != rg.NumRows {
				t.Errorf("group %d column %s: %d values in %d rows", g, md.PathInSchema[0], md.NumValues, rg.NumRows)
			}
		}
		encs := groups[g].Columns[3].MetaData.Encoding
		switch {
		case many && !(len(encs) == 1 && encs[0] == format.ByteStreamSplit):
			t.Errorf("group %d n_neg encodings %v, want BYTE_STREAM_SPLIT", g, encs)
		case !many && g == 0 && !(len(encs) == 2 && encs[0] == format.Plain && encs[1] == format.RLEDictionary):
			t.Errorf("group 0 n_neg encodings %v, want PLAIN and RLE_DICTIONARY (dictionary, then fallback)", encs)
		}
	}
}

// TestCountsWriterEmptyAndAbort checks that a file without rows is valid and
// that Abort leaves nothing behind.
func TestCountsWriterEmptyAndAbort(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "empty.parquet")
	w, err := CreateCounts(p, Meta{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, _, err := ReadAll[CountRow](p, SchemaCounts)
	if err != nil || len(got) != 0 {
		t.Fatalf("empty file: %d rows, %v", len(got), err)
	}

	q := filepath.Join(dir, "aborted.parquet")
	w, err = CreateCounts(q, Meta{}, false)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(make([]CountRow, 3*CountsPageRows)); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	w.Abort()
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "empty.parquet" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("after Abort the directory holds %v", names)
	}
}

// TestCountsWriterFailureMidway fails the writer while pages and row groups
// are in flight in the column encoders and the assembler, as an encoding or
// file error would, and checks that Write and Close report the error,
// that nothing is left behind and that no goroutine waits forever.
func TestCountsWriterFailureMidway(t *testing.T) {
	errInjected := errors.New("injected")
	for _, after := range []int{0, CountsPageRows, RowGroupRows + CountsPageRows/2, 2 * RowGroupRows} {
		dir := t.TempDir()
		w, err := CreateCounts(filepath.Join(dir, "c.parquet"), Meta{}, false)
		if err != nil {
			t.Fatal(err)
		}
		rows := make([]CountRow, 4096)
		written := 0
		for ; written < after; written += len(rows) {
			if err := w.Write(rows); err != nil {
				t.Fatalf("after %d rows: %v", written, err)
			}
		}
		w.fail(errInjected)
		var werr error
		for i := 0; i < 2*CountsPageRows/len(rows) && werr == nil; i++ {
			werr = w.Write(rows)
		}
		if !errors.Is(werr, errInjected) {
			t.Errorf("failed after %d rows: Write returned %v, want the injected error", after, werr)
		}
		if err := w.Close(); !errors.Is(err, errInjected) {
			t.Errorf("failed after %d rows: Close returned %v, want the injected error", after, err)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("failed after %d rows: %d files left behind", after, len(entries))
		}
	}
}

// BenchmarkCountsWriter writes 2^20 rows shaped like the benchmark corpus's
// counts (sorted ids, small whole-number counts, a third of them negatives
// only) and reports the CPU time per row, which includes the column encoder
// and assembler goroutines'.
func BenchmarkCountsWriter(b *testing.B) {
	rows := make([]CountRow, RowGroupRows)
	x := uint64(1)
	for i := range rows {
		x = x*6364136223846793005 + 1442695040888963407
		r := CountRow{TargetID: int32(i / 30), ContextID: int32(i%30*2000 + int(x>>54))}
		if x>>62 != 0 {
			r.NPos = float64(1 + x>>60&7)
		}
		r.NNeg = float64(x >> 61 & 3)
		rows[i] = r
	}
	p := filepath.Join(b.TempDir(), "c.parquet")
	var cpu0 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &cpu0)
	for b.Loop() {
		w, err := CreateCounts(p, Meta{}, false)
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < len(rows); i += 4096 {
			if err := w.Write(rows[i : i+4096]); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(); err != nil {
			b.Fatal(err)
		}
	}
	var cpu1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &cpu1)
	cpu := time.Duration(cpu1.Utime.Nano() + cpu1.Stime.Nano() - cpu0.Utime.Nano() - cpu0.Stime.Nano())
	st, _ := os.Stat(p)
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N*len(rows)), "cpu-ns/row")
	b.ReportMetric(float64(st.Size())/float64(len(rows)), "B/row")
}

// TestInt32Range compares int32Range with a plain loop on slices of every
// length up to 40 (each remainder of the four-way loop and of the assembly's
// sixteen values, on amd64 with AVX2), with the extremes in every position.
func TestInt32Range(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for n := range 41 {
		for trial := range 50 {
			col := make([]int32, n)
			for i := range col {
				col[i] = int32(rng.Uint32())
			}
			if n > 0 && trial%5 == 0 {
				col[rng.IntN(n)] = math.MinInt32
				col[rng.IntN(n)] = math.MaxInt32
			}
			lo0, hi0 := int32(rng.IntN(1000)-500), int32(rng.IntN(1000)-500)
			lo0, hi0 = min(lo0, hi0), max(lo0, hi0)
			if trial%7 == 0 {
				// The empty range that a chunk starts with.
				lo0, hi0 = math.MaxInt32, math.MinInt32
			}
			lo, hi := lo0, hi0
			for _, x := range col {
				lo, hi = min(lo, x), max(hi, x)
			}
			if gotLo, gotHi := int32Range(col, lo0, hi0); gotLo != lo || gotHi != hi {
				t.Fatalf("int32Range(%v, %d, %d) = %d, %d; want %d, %d", col, lo0, hi0, gotLo, gotHi, lo, hi)
			}
		}
	}
}

// TestWriteColumns checks that rows written as columns, in batches of
// uneven sizes, give the same bytes as the same rows written as rows, for
// counts.parquet and for a counts stream; and so do columns given to
// TakeColumns, which keeps the memory of whole pages at page boundaries.
func TestWriteColumns(t *testing.T) {
	rows := randomCounts(3*CountsPageRows+StreamBatchRows+1234, 7)
	meta := Meta{CreatedAt: "2026-01-02T03:04:05Z", Config: map[string]int{"window": 5}}
	sizes := []int{1, 4096, 3 * CountsPageRows / 2, 77, CountsPageRows}
	writeCols := func(w interface {
		WriteColumns(*CountColumns) error
	}) {
		var cols CountColumns
		for i, k := 0, 0; i < len(rows); k++ {
			n := min(sizes[k%len(sizes)], len(rows)-i)
			cols.Reset()
			cols.AppendRows(rows[i : i+n])
			if err := w.WriteColumns(&cols); err != nil {
				t.Fatal(err)
			}
			i += n
		}
	}

	// Whole pages at page boundaries are taken (the first and the fifth
	// batch), other batches copied, whole pages in mid-page too.
	takeSizes := []int{CountsPageRows, 5, CountsPageRows, CountsPageRows - 5, CountsPageRows, 77}
	taken := 0
	takeCols := func(w interface {
		TakeColumns(*CountColumns) error
	}) {
		var cols CountColumns
		for i, k := 0, 0; i < len(rows); k++ {
			n := min(takeSizes[k%len(takeSizes)], len(rows)-i)
			cols.AppendRows(rows[i : i+n])
			before := &cols.Target[0]
			if err := w.TakeColumns(&cols); err != nil {
				t.Fatal(err)
			}
			if cols.Len() != 0 || cap(cols.Target) < n {
				t.Fatalf("TakeColumns left %d rows and room for %d, want none and room for %d", cols.Len(), cap(cols.Target), n)
			}
			if &cols.Target[:1][0] != before {
				taken++
			}
			i += n
		}
	}

	dir := t.TempDir()
	files := [3]string{filepath.Join(dir, "rows.parquet"), filepath.Join(dir, "cols.parquet"), filepath.Join(dir, "take.parquet")}
	for i, p := range files {
		w, err := CreateCounts(p, meta, false)
		if err != nil {
			t.Fatal(err)
		}
		switch i {
		case 0:
			err = w.Write(rows)
		case 1:
			writeCols(w)
		case 2:
			takeCols(w)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if taken != 2 {
		t.Errorf("counts.parquet: TakeColumns kept the memory of %d batches, want 2", taken)
	}
	want, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range files[1:] {
		if got, err := os.ReadFile(p); err != nil {
			t.Fatal(err)
		} else if !bytes.Equal(got, want) {
			t.Errorf("%s: %d bytes, from rows %d, not the same", filepath.Base(p), len(got), len(want))
		}
	}

	want = writeCountsStream(t, rows, meta, nil, 5000)
	for _, take := range []bool{false, true} {
		var buf bytes.Buffer
		w, err := CreateCountsStream(&buf, meta)
		if err != nil {
			t.Fatal(err)
		}
		if take {
			takeCols(w)
		} else {
			writeCols(w)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(buf.Bytes(), want) {
			t.Errorf("counts stream (TakeColumns %v): %d bytes from rows, %d from columns, not the same", take, len(want), buf.Len())
		}
	}
}

// lender lends batches of rows to a CountsWriter, each in memory of its
// own, and checks their releases: each exactly once, and none while the
// writer may still read it. A released batch is overwritten at once, so a
// writer that read it later would write other bytes (and -race sees the
// encoders' reads race with the overwrite).
type lender struct {
	t        *testing.T
	lent     int
	released atomic.Int64
	held     int // batches not yet released when LendColumns returned
	calls    []atomic.Int32
}

func newLender(t *testing.T, n int) *lender { return &lender{t: t, calls: make([]atomic.Int32, n)} }

func (l *lender) lend(w *CountsWriter, rows []CountRow) error {
	k := l.lent
	l.lent++
	cols := MakeCountColumns(len(rows))
	cols.AppendRows(rows)
	err := w.LendColumns(&cols, func() {
		if l.calls[k].Add(1) != 1 {
			l.t.Errorf("batch %d released twice", k)
		}
		for i := range cols.Target {
			cols.Target[i], cols.Context[i], cols.NPos[i], cols.NNeg[i] = -1, -1, math.NaN(), -1
		}
		l.released.Add(1)
	})
	if l.calls[k].Load() == 0 {
		l.held++
	}
	return err
}

// check reports batches not released once the writer is done.
func (l *lender) check(what string) {
	l.t.Helper()
	if n := l.released.Load(); n != int64(l.lent) {
		l.t.Errorf("%s: %d of %d lent batches released", what, n, l.lent)
	}
}

// TestLendColumns checks that rows lent to the writer give the same bytes
// as the same rows written, for every encoding of the values (dictionary,
// its fallback to PLAIN, byte-stream-split): lent in batches of uneven
// sizes, some too short to lend and many to a page, with rows written,
// copied and taken between them. It checks that the writer holds batches
// past LendColumns and releases each once by Close.
func TestLendColumns(t *testing.T) {
	n := RowGroupRows + 5*CountsPageRows/2
	rows := layoutRows(n)
	// 4096-row batches put more than countsMaxLoans in a page; 100 and
	// 1000 rows are too few to lend.
	sizes := []int{CountsPageRows, 4096, 4096, 4096, 4096, 4096, 4096, 4096, 4096, 100, 16384, 1000, 20000,
		3 * CountsPageRows / 2, CountsPageRows - 5, 5, CountsPageRows, 16384, 16384, 77}
	for _, many := range []bool{false, true} {
		meta := Meta{CreatedAt: "2026-01-02T03:04:05Z"}
		ref := writeCountsFileWith(t, rows, meta, many)
		lent := filepath.Join(t.TempDir(), "lent.parquet")
		w, err := CreateCounts(lent, meta, many)
		if err != nil {
			t.Fatal(err)
		}
		l := newLender(t, n)
		for i, k := 0, 0; i < n; k++ {
			m := min(sizes[k%len(sizes)], n-i)
			batch := rows[i : i+m]
			switch k % 7 {
			case 3:
				err = w.Write(batch)
			case 5:
				var cols CountColumns
				cols.AppendRows(batch)
				err = w.TakeColumns(&cols)
			default:
				err = l.lend(w, batch)
			}
			if err != nil {
				t.Fatal(err)
			}
			i += m
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
		l.check(fmt.Sprintf("manyValues %v", many))
		if l.held == 0 {
			t.Errorf("manyValues %v: every one of %d batches was released before LendColumns returned", many, l.lent)
		}
		want, err := os.ReadFile(ref)
		if err != nil {
			t.Fatal(err)
		}
		if got, err := os.ReadFile(lent); err != nil {
			t.Fatal(err)
		} else if !bytes.Equal(got, want) {
			t.Errorf("manyValues %v: %d bytes lent, %d written, not the same", many, len(got), len(want))
		}
	}
}

// TestLendColumnsAbort checks that the batches a writer holds are
// released when it is aborted, fails, or is written after Close.
func TestLendColumnsAbort(t *testing.T) {
	rows := layoutRows(3 * CountsPageRows)
	errInjected := errors.New("injected")
	for _, how := range []string{"abort", "fail", "closed"} {
		dir := t.TempDir()
		w, err := CreateCounts(filepath.Join(dir, "c.parquet"), Meta{}, false)
		if err != nil {
			t.Fatal(err)
		}
		l := newLender(t, 100)
		// Two and a half pages: the last half stays in the current page.
		for i := 0; i < 5*CountsPageRows/2; i += 8192 {
			if err := l.lend(w, rows[i:i+8192]); err != nil {
				t.Fatal(err)
			}
		}
		switch how {
		case "abort":
			w.Abort()
		case "fail":
			w.fail(errInjected)
			var err error
			for i := 0; i < 4 && err == nil; i++ {
				err = l.lend(w, rows[:CountsPageRows/2])
			}
			if !errors.Is(err, errInjected) {
				t.Errorf("LendColumns after a failure returned %v, want the injected error", err)
			}
			if err := w.Close(); !errors.Is(err, errInjected) {
				t.Errorf("Close after a failure returned %v, want the injected error", err)
			}
		case "closed":
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if err := l.lend(w, rows[:8192]); err == nil {
				t.Error("LendColumns after Close succeeded")
			}
		}
		l.check(how)
		if how != "closed" {
			if entries, _ := os.ReadDir(dir); len(entries) != 0 {
				t.Errorf("%s: %d files left behind", how, len(entries))
			}
		}
	}
}

// TestCountsDictLookup compares countsDict.lookup, which takes groups of
// four whole numbers at a time in assembly on amd64 with AVX2, with a
// dictionary written here (checkDictLookup). The values mix small whole
// numbers (where the groups run), whole numbers on either side of the
// direct-mapped table's end, fractions, and values the conversion to int32
// gets wrong or loses (-0, NaN, the infinities, 2^31, tiny and negative
// numbers), in slices of every length around a group of four, cut into up
// to three pages.
func TestCountsDictLookup(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	specials := []float64{0, math.Copysign(0, -1), -1, 0.5, countsSmallDict - 1, countsSmallDict, countsSmallDict - 0.5,
		math.NaN(), math.Inf(1), math.Inf(-1), 1e10, -countsSmallDict, 2.5e-300, 1 << 31, -(1 << 31), 1 << 32}
	for range 400 {
		var d countsDict
		ref := map[uint64]int32{}
		for range 4 {
			vals := make([]float64, rng.IntN(40))
			for i := range vals {
				switch r := rng.IntN(20); {
				case r < 14:
					vals[i] = float64(rng.IntN(6))
				case r < 17:
					vals[i] = float64(rng.IntN(countsSmallDict + 200))
				case r < 19:
					vals[i] = specials[rng.IntN(len(specials))]
				default:
					vals[i] = float64(rng.IntN(100)) / 4
				}
			}
			cut1 := rng.IntN(len(vals) + 1)
			cut2 := cut1 + rng.IntN(len(vals)-cut1+1)
			for _, page := range [][]float64{vals[:cut1], vals[cut1:cut2], vals[cut2:]} {
				checkDictLookup(t, &d, ref, page)
			}
		}
	}
}

// FuzzCountsDictLookup is TestCountsDictLookup on values of any bits, in
// three pages: two parts of the values, then all of them, which the first
// two left in the dictionary.
func FuzzCountsDictLookup(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0xf0, 0x3f, 0, 0, 0, 0, 0, 0, 0, 0x80}, 1)
	f.Add(make([]byte, 8*13), 5)
	f.Fuzz(func(t *testing.T, b []byte, split int) {
		vals := make([]float64, len(b)/8)
		for i := range vals {
			vals[i] = math.Float64frombits(binary.LittleEndian.Uint64(b[8*i:]))
		}
		split = min(max(split, 0), len(vals))
		var d countsDict
		ref := map[uint64]int32{}
		checkDictLookup(t, &d, ref, vals[:split])
		checkDictLookup(t, &d, ref, vals[split:])
		checkDictLookup(t, &d, ref, vals)
	})
}

// checkDictLookup looks vals up in d as one page and checks the indices,
// their bit width and the dictionary against ref, the index of each value's
// bits in the order they first appeared, which it brings up to date.
func checkDictLookup(t *testing.T, d *countsDict, ref map[uint64]int32, vals []float64) {
	t.Helper()
	var idx []int32
	var width int
	if !d.lookup([][]float64{vals}, &idx, &width) {
		t.Fatalf("dictionary full after %d values", d.len())
	}
	var or int32
	for i, v := range vals {
		j, ok := ref[math.Float64bits(v)]
		if !ok {
			j = int32(len(ref))
			ref[math.Float64bits(v)] = j
		}
		if idx[i] != j {
			t.Fatalf("%v: index %d of value %v (bits %#x) is %d, want %d", vals, i, v, math.Float64bits(v), idx[i], j)
		}
		or |= j
	}
	if want := bits.Len32(uint32(or)); width != want {
		t.Fatalf("%v: bit width %d, want %d", vals, width, want)
	}
	if d.len() != len(ref) {
		t.Fatalf("%d values in the dictionary, want %d", d.len(), len(ref))
	}
	for k, v := range d.values {
		if ref[math.Float64bits(v)] != int32(k) {
			t.Fatalf("dictionary value %d is %v", k, v)
		}
	}
}

// TestCountsIndexWidth writes n_pos and n_neg columns whose dictionaries
// need 4, 5 and 7 bits, reads them back, and reads the bit width that
// each dictionary-encoded data page stores before its indices: 8 for
// indices of 5 to 7 bits (indexWidth), their own width otherwise.
func TestCountsIndexWidth(t *testing.T) {
	for _, c := range []struct {
		distinctPos, distinctNeg int
		widthPos, widthNeg       byte
	}{
		{20, 100, 8, 8}, // 5 and 7 bits
		{9, 16, 4, 4},   // 4 bits, and 16 values whose largest index is 15
		{3, 200, 2, 8},
	} {
		n := 2*CountsPageRows + 100
		rows := make([]CountRow, n)
		for i := range rows {
			rows[i] = CountRow{TargetID: int32(i / 50), ContextID: int32(i % 50),
				NPos: float64(i*7%c.distinctPos) + 1, NNeg: float64(i*3%c.distinctNeg) / 2}
		}
		p := writeCountsFileWith(t, rows, Meta{}, false)
		got, _, err := ReadAll[CountRow](p, SchemaCounts)
		if err != nil {
			t.Fatal(err)
		}
		for i := range rows {
			if got[i] != rows[i] {
				t.Fatalf("%d and %d values: row %d read %+v, wrote %+v", c.distinctPos, c.distinctNeg, i, got[i], rows[i])
			}
		}
		for col, want := range map[int]byte{2: c.widthPos, 3: c.widthNeg} {
			widths := dictPageWidths(t, p, col)
			if len(widths) != 3 {
				t.Fatalf("column %d: %d dictionary-encoded pages, want 3", col, len(widths))
			}
			for k, w := range widths {
				if w != want {
					t.Errorf("%d and %d values: column %d page %d stores indices in %d bits, want %d",
						c.distinctPos, c.distinctNeg, col, k, w, want)
				}
			}
		}
	}
}

// dictPageWidths returns the bit width that each RLE_DICTIONARY data page
// of column col of the file's first row group stores as its first byte.
func dictPageWidths(t *testing.T, path string, col int) []byte {
	t.Helper()
	var widths []byte
	for _, p := range dataPages(t, path, col) {
		if p.encoding == format.RLEDictionary {
			widths = append(widths, p.raw[0])
		}
	}
	return widths
}

// A readPage is a data page read by dataPages: its encoding, its zstd
// body and the bytes that decodes to.
type readPage struct {
	encoding  format.Encoding
	body, raw []byte
}

// dataPages reads the data pages of column col of the file's first row
// group, their headers and zstd bodies, itself.
func dataPages(t *testing.T, path string, col int) []readPage {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	md := pf.Metadata().RowGroups[0].Columns[col].MetaData
	start := md.DataPageOffset
	if md.DictionaryPageOffset > 0 {
		start = min(start, md.DictionaryPageOffset)
	}
	chunk := data[start : start+md.TotalCompressedSize]
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	var pages []readPage
	for len(chunk) > 0 {
		r := new(thrift.CompactProtocol).NewReaderFromBytes(chunk)
		var h format.PageHeader
		if err := thrift.NewDecoder(r).Decode(&h); err != nil {
			t.Fatal(err)
		}
		body := chunk[r.BytesRead() : r.BytesRead()+int(h.CompressedPageSize)]
		chunk = chunk[r.BytesRead()+int(h.CompressedPageSize):]
		dp, ok := h.DataPageHeader.Get()
		if h.Type != format.DataPage || !ok {
			continue
		}
		raw, err := dec.DecodeAll(body, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(raw) != int(h.UncompressedPageSize) {
			t.Fatalf("page of %d bytes, its header says %d", len(raw), h.UncompressedPageSize)
		}
		pages = append(pages, readPage{dp.Encoding, body, raw})
	}
	return pages
}

// TestCountsContextStored checks that the context ids' delta-coded pages
// are zstd frames of raw blocks (codeStored), and the counts' index pages
// frames of Huffman-coded literals, smaller than their bytes (those long
// enough to be coded).
func TestCountsContextStored(t *testing.T) {
	p := writeCountsFileWith(t, layoutRows(3*CountsPageRows+10), Meta{}, false)
	ctx := dataPages(t, p, 1)
	if len(ctx) != 4 {
		t.Fatalf("%d context id pages, want 4", len(ctx))
	}
	for k, pg := range ctx {
		types, regen := literalBlocks(t, pg.body)
		if pg.encoding != format.DeltaBinaryPacked || slices.ContainsFunc(types, func(b int) bool { return b != 0 }) || regen != len(pg.raw) {
			t.Errorf("context id page %d (%v): block types %v, want raw blocks alone", k, pg.encoding, types)
		}
	}
	for _, pg := range dataPages(t, p, 2) {
		if types, _ := literalBlocks(t, pg.body); pg.encoding == format.RLEDictionary && len(pg.raw) >= literalMinHuffman && (!slices.Contains(types, 2) || len(pg.body) >= len(pg.raw)) {
			t.Errorf("n_pos page of %d bytes: blocks %v in %d bytes, want Huffman-coded literals", len(pg.raw), types, len(pg.body))
		}
	}
}
