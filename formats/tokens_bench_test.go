package formats

import (
	"fmt"
	"io"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/zstd"
)

// benchTokenDocs is about 2^22 Zipf-distributed ids over 300,000 distinct
// tokens in documents of 1-40 tokens, like bench-raw's (10.7 M tokens,
// 323 thousand distinct, 6.7 tokens per line), with ids numbered by first
// appearance as tokenize numbers them.
func benchTokenDocs() (docLens []int32, ids []uint32, dict int) {
	const tokens, v = 1 << 22, 300_000
	r := rand.New(rand.NewPCG(1, 2))
	z := rand.NewZipf(r, 1.05, 1, v-1)
	first := map[uint64]uint32{}
	for len(ids) < tokens {
		n := 1 + r.IntN(40)
		docLens = append(docLens, int32(n))
		for range n {
			w := z.Uint64()
			id, ok := first[w]
			if !ok {
				id = uint32(len(first))
				first[w] = id
			}
			ids = append(ids, id)
		}
	}
	return docLens, ids, len(first)
}

// BenchmarkTokenStream writes a stream in chunks of about 2^17 ids (a
// reading batch of bench-raw) and reads it back, decoding every chunk, and
// reports the CPU per token of each direction and the bytes per token.
func BenchmarkTokenStream(b *testing.B) {
	docLens, ids, dict := benchTokenDocs()
	tokens := make([][]byte, dict)
	counts := make([]int64, dict)
	for i := range tokens {
		tokens[i] = fmt.Appendf(nil, "t%d", i)
	}
	for _, id := range ids {
		counts[id]++
	}
	path := filepath.Join(b.TempDir(), "tokens.bin")
	var write, read float64
	var size int64
	for b.Loop() {
		t0 := cpuTime()
		w, err := CreateTokenStream(path)
		if err != nil {
			b.Fatal(err)
		}
		d, k := 0, 0
		for d < len(docLens) {
			d0, k0 := d, k
			for d < len(docLens) && k-k0 < 1<<17 {
				k += int(docLens[d])
				d++
			}
			if err := w.WriteChunk(docLens[d0:d], ids[k0:k]); err != nil {
				b.Fatal(err)
			}
		}
		if err := w.Close(Meta{}, DictionaryOf(tokens, counts)); err != nil {
			b.Fatal(err)
		}
		t1 := cpuTime()
		s, err := OpenTokenStream(path)
		if err != nil {
			b.Fatal(err)
		}
		var c TokenChunk
		n := 0
		for {
			ok, err := s.NextChunk(&c)
			if err != nil {
				b.Fatal(err)
			}
			if !ok {
				break
			}
			if err := c.Decode(); err != nil {
				b.Fatal(err)
			}
			n += len(c.IDs)
		}
		size = s.Size
		s.Close()
		if n != len(ids) {
			b.Fatalf("read %d ids, wrote %d", n, len(ids))
		}
		write += (t1 - t0).Seconds()
		read += (cpuTime() - t1).Seconds()
	}
	per := float64(b.N) * float64(len(ids))
	b.ReportMetric(write/per*1e9, "write-cpu-ns/token")
	b.ReportMetric(read/per*1e9, "read-cpu-ns/token")
	b.ReportMetric(float64(size)/float64(len(ids)), "B/token")
	b.ReportMetric(float64(dict), "distinct")
}

// BenchmarkTokenStreamDictionary opens a stream with a dictionary the size of
// bench-raw's (323 thousand tokens) and reads the dictionary through, as
// pwe count does before counting: open reads it once to check it.
func BenchmarkTokenStreamDictionary(b *testing.B) {
	const dict = 323_000
	r := rand.New(rand.NewPCG(1, 2))
	tokens := make([][]byte, dict)
	counts := make([]int64, dict)
	for i := range tokens {
		// Tokens of 1 to 16 bytes, 9 on average like bench-raw's.
		tokens[i] = fmt.Appendf(nil, "%0*d", 1+r.IntN(16), i)
		counts[i] = 1 + r.Int64N(1000)
	}
	path := filepath.Join(b.TempDir(), "tokens.bin")
	w, err := CreateTokenStream(path)
	if err != nil {
		b.Fatal(err)
	}
	if err := w.Close(Meta{}, DictionaryOf(tokens, counts)); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		s, err := OpenTokenStream(path)
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		if err := s.Dictionary(func(_ int, tok []byte, _ int64) error { n += len(tok); return nil }); err != nil {
			b.Fatal(err)
		}
		s.Close()
	}
}

// BenchmarkReadVocab reads and checks a vocabulary of 65536 tokens
// (bench-raw's --max-vocab) with ReadVocab's column reader and with
// parquet-go's row reader, which it replaced.
func BenchmarkReadVocab(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	rows := make([]VocabRow, 1<<16)
	for i := range rows {
		rows[i] = VocabRow{TokenID: int32(i), Token: fmt.Sprintf("%0*d", 1+r.IntN(16), i), Count: int64(len(rows) - i)}
	}
	path := filepath.Join(b.TempDir(), "vocab.parquet")
	if err := WriteVocab(path, rows, Meta{}); err != nil {
		b.Fatal(err)
	}
	b.Run("columns", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := ReadVocab(path); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("rows", func(b *testing.B) {
		for b.Loop() {
			rows, _, err := ReadAll[VocabRow](path, SchemaVocab)
			if err == nil {
				err = checkVocab(path, rows)
			}
			if err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkWriteVocab writes a vocabulary of 65536 tokens, as tokenize does
// once per run, with a fresh codec each time: pwe's zstd codec with its
// window of 1 MiB, and parquet-go's at the same level with zstd's default
// window of 8 MiB, whose encoders allocate 16 MiB of history each.
func BenchmarkWriteVocab(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	rows := make([]VocabRow, 1<<16)
	for i := range rows {
		rows[i] = VocabRow{TokenID: int32(i), Token: fmt.Sprintf("%0*d", 1+r.IntN(16), i), Count: int64(len(rows) - i)}
	}
	codecs := []struct {
		name  string
		codec func() compress.Codec
	}{
		{"window1MiB", func() compress.Codec { return new(zstdCodec) }},
		{"window8MiB", func() compress.Codec { return &zstd.Codec{Level: zstd.SpeedFastest} }},
	}
	for _, c := range codecs {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				w := parquet.NewGenericWriter[VocabRow](io.Discard, parquet.Compression(c.codec()), parquet.MaxRowsPerRowGroup(RowGroupRows))
				if _, err := w.Write(rows); err != nil {
					b.Fatal(err)
				}
				if err := w.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
