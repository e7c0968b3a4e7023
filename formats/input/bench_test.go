package input

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/parquet-go/parquet-go"
)

const (
	austenPath   = "/work/shared/data/austen.txt.zst"
	benchRawPath = "/work/shared/data/bench-raw.txt.zst" // 72 MB of mixed text, the performance corpus
)

// readShared returns the decompressed text of a shared data file, skipping
// the benchmark without it.
func readShared(b *testing.B, path string) []byte {
	b.Helper()
	if _, err := os.Stat(path); err != nil {
		b.Skipf("%s not available: %v", path, err)
	}
	f, err := Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	text, err := io.ReadAll(f)
	if err != nil {
		b.Fatal(err)
	}
	return text
}

// BenchmarkReader reads Jane Austen's novels (4 MB of text, zstd) in every
// format; MB/s counts decompressed text bytes.
func BenchmarkReader(b *testing.B) {
	text := readShared(b, austenPath)
	dir := b.TempDir()
	plain := writeFile(b, dir, "austen.txt", text)
	gz := writeFile(b, dir, "austen.txt.gz", gzipBytes(b, text))
	jsonl := writeFile(b, dir, "austen.jsonl", austenJSONL(text))
	pq := filepath.Join(dir, "austen.parquet")
	writeAustenParquet(b, pq, text)

	run := func(name string, paths []string, opt Options, batch bool) {
		b.Run(name, func(b *testing.B) { benchRead(b, text, paths, opt, batch) })
	}
	run("zstd/lines", []string{austenPath}, Options{}, false)
	run("zstd/paragraphs", []string{austenPath}, Options{DocSep: DocSepBlank}, false)
	run("zstd/batches", []string{austenPath}, Options{}, true)
	run("plain/lines", []string{plain}, Options{}, false)
	run("gzip/lines", []string{gz}, Options{}, false)
	run("jsonl/lines", []string{jsonl}, Options{TextField: "text"}, false)
	run("parquet/rows", []string{pq}, Options{TextColumn: "text"}, false)
}

// BenchmarkReaderBenchRaw reads the 72 MB performance corpus in 1 MiB
// batches, as the tokenize and count stages do.
func BenchmarkReaderBenchRaw(b *testing.B) {
	text := readShared(b, benchRawPath)
	benchRead(b, text, []string{benchRawPath}, Options{}, true)
}

func benchRead(b *testing.B, text []byte, paths []string, opt Options, batch bool) {
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	var docs int
	var bt Batch
	cpu0, cpuOK := cpuTime()
	for b.Loop() {
		r := NewReader(paths, opt)
		docs = 0
		if batch {
			for r.NextBatch(&bt, 1<<20) {
				docs += bt.Len()
			}
		} else {
			for r.Next() {
				docs++
			}
		}
		if err := r.Err(); err != nil {
			b.Fatal(err)
		}
		r.Close()
	}
	b.ReportMetric(float64(docs), "docs/op")
	// Decoding may run on other goroutines, so CPU time can exceed
	// wall time; text MB per CPU-second is the figure to compare.
	if cpu1, ok := cpuTime(); ok && cpuOK && cpu1 > cpu0 {
		b.ReportMetric(float64(b.N)*float64(len(text))/1e6/(cpu1-cpu0).Seconds(), "MB/cpu-s")
	}
}

// austenJSONL puts every line in a record, escaped as a JSON encoder would.
func austenJSONL(text []byte) []byte {
	var out bytes.Buffer
	for i, line := range bytes.Split(text, []byte("\n")) {
		quoted, err := json.Marshal(string(line))
		if err != nil {
			panic(err)
		}
		fmt.Fprintf(&out, `{"id": %d, "text": %s, "source": "austen"}`+"\n", i, quoted)
	}
	return out.Bytes()
}

func writeAustenParquet(b *testing.B, path string, text []byte) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	type row struct {
		Text string `parquet:"text,zstd"`
	}
	w := parquet.NewGenericWriter[row](f)
	var rows []row
	for line := range bytes.SplitSeq(text, []byte("\n")) {
		rows = append(rows, row{string(line)})
	}
	if _, err := w.Write(rows); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}
