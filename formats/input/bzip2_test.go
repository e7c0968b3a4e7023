package input

import (
	"bytes"
	"compress/bzip2"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// bzip2Text is n bytes of varied text: words from a small vocabulary at
// Zipf-like frequencies, lines of random lengths.
func bzip2Text(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	words := strings.Fields("the of and to a in that it was her his he she be not for with as had you at on which but my all have from they by this")
	var b bytes.Buffer
	for b.Len() < n {
		for range 1 + r.IntN(20) {
			w := words[int(float64(len(words))*r.Float64()*r.Float64())]
			if r.IntN(50) == 0 {
				w = fmt.Sprintf("w%d", r.IntN(100000))
			}
			b.WriteString(w)
			b.WriteByte(' ')
		}
		b.WriteByte('\n')
	}
	return b.Bytes()[:n]
}

// chunked reads at most n bytes a call, so that the scan's buffer meets
// every block boundary at every place.
type chunked struct {
	r io.Reader
	n int
}

func (c chunked) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }

// readBzip2 reads data through the parallel reader with workers, the raw
// stream served chunk bytes a read, and its output taken in reads of
// random sizes.
func readBzip2(data []byte, workers, chunk int, split func(int64) []int64) ([]byte, error) {
	z, stop := newParallelBzip2(chunked{bytes.NewReader(data), chunk}, workers, split)
	defer stop()
	r := rand.New(rand.NewPCG(uint64(workers), uint64(chunk)))
	var out []byte
	buf := make([]byte, 1<<17)
	for {
		n, err := z.Read(buf[:1+r.IntN(len(buf))])
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// bzip2Cases are bzip2 files and their content: blocks of every size,
// several streams with different block sizes, an empty stream, a block
// decoding to more than bzip2OutCap bytes.
func bzip2Cases(t *testing.T) map[string][2][]byte {
	text := bzip2Text(1_500_000, 1)
	small := bzip2Text(250_000, 2)
	runs := bytes.Repeat([]byte("a"), bzip2OutCap+bzip2OutCap/2)
	empty := bzip2Level(t, nil, 9)
	austen, err := os.ReadFile(filepath.Join("testdata", "austen.txt.bz2"))
	if err != nil {
		t.Fatal(err)
	}
	cat := func(b ...[]byte) []byte { return bytes.Join(b, nil) }
	return map[string][2][]byte{
		"austen":     {austen, []byte(austenBz2Text)},
		"level1":     {bzip2Level(t, text, 1), text},
		"level9":     {bzip2Level(t, text, 9), text},
		"streams":    {cat(bzip2Level(t, small, 1), empty, bzip2Level(t, text, 3), austen), cat(small, text, []byte(austenBz2Text))},
		"empty":      {empty, nil},
		"runs":       {bzip2Level(t, runs, 9), runs},
		"runs+text":  {cat(bzip2Level(t, runs, 1), bzip2Level(t, small, 1)), cat(runs, small)},
		"emptyfirst": {cat(empty, bzip2Level(t, small, 2)), small},
	}
}

// TestParallelBzip2 checks the parallel reader against the content of
// files made by the bzip2 command, on 2, 3 and 8 workers, with the raw
// stream read in chunks down to 7 bytes.
func TestParallelBzip2(t *testing.T) {
	for name, c := range bzip2Cases(t) {
		for _, workers := range []int{2, 3, 8} {
			for _, chunk := range []int{7, 1000, 1 << 20} {
				if testing.Short() && (chunk == 7 && len(c[0]) > 10000 || workers == 3) {
					continue
				}
				out, err := readBzip2(c[0], workers, chunk, nil)
				if err != nil || !bytes.Equal(out, c[1]) {
					t.Errorf("%s, %d workers, %d-byte reads: %d bytes, %v; want the %d bytes of the content", name, workers, chunk, len(out), err, len(c[1]))
				}
			}
		}
	}
}

// TestParallelBzip2FalseMagic splits blocks where no magic is, as a magic
// found by chance inside a block's coded bits would: the reader decodes
// the pieces joined. A block split more than bzip2MaxJoin times is an
// error, not missing text.
func TestParallelBzip2FalseMagic(t *testing.T) {
	c := bzip2Cases(t)["streams"]
	for cuts := 1; cuts <= bzip2MaxJoin+1; cuts++ {
		r := rand.New(rand.NewPCG(uint64(cuts), 2))
		split := func(nbits int64) []int64 {
			var at []int64
			for k := range cuts {
				// Ascending cuts past the block's magic and CRC.
				lo := 80 + (nbits-80)*int64(k)/int64(cuts)
				hi := 80 + (nbits-80)*int64(k+1)/int64(cuts)
				at = append(at, lo+1+r.Int64N(max(1, hi-lo-1)))
			}
			return at
		}
		out, err := readBzip2(c[0], 3, 4096, split)
		if cuts <= bzip2MaxJoin {
			if err != nil || !bytes.Equal(out, c[1]) {
				t.Errorf("%d false magics a block: %d bytes, %v; want the %d bytes of the content", cuts, len(out), err, len(c[1]))
			}
			continue
		}
		if err == nil || !bytes.HasPrefix(c[1], out) {
			t.Errorf("%d false magics a block: %d bytes, %v; want an error after a prefix of the content", cuts, len(out), err)
		}
	}
}

// readAllBzip2 reads data with the standard library's serial reader.
func readAllBzip2(data []byte) ([]byte, error) {
	return io.ReadAll(bzip2.NewReader(bytes.NewReader(data)))
}

// TestParallelBzip2Damage checks that the parallel reader fails where the
// standard library's does, on files with a byte changed, cut short or
// followed by other bytes, and that what it returned before failing is
// the content's start.
func TestParallelBzip2Damage(t *testing.T) {
	small := bzip2Text(250_000, 2)
	austen, err := os.ReadFile(filepath.Join("testdata", "austen.txt.bz2"))
	if err != nil {
		t.Fatal(err)
	}
	data := bytes.Join([][]byte{bzip2Level(t, small, 1), bzip2Level(t, nil, 9), bzip2Level(t, small[:100_000], 1), austen}, nil)
	text := bytes.Join([][]byte{small, small[:100_000], []byte(austenBz2Text)}, nil)
	changes, cuts := 60, 30
	if testing.Short() {
		changes, cuts = 20, 10
	}
	r := rand.New(rand.NewPCG(3, 4))
	type damaged struct {
		name string
		data []byte
	}
	var cases []damaged
	for range changes {
		d := bytes.Clone(data)
		i := r.IntN(len(d))
		d[i] ^= byte(1 + r.IntN(255))
		cases = append(cases, damaged{fmt.Sprintf("byte %d changed", i), d})
	}
	for range cuts {
		n := r.IntN(len(data))
		cases = append(cases, damaged{fmt.Sprintf("cut at %d", n), data[:n]})
	}
	// The last stream's CRC (its last 32 bits before at most 7 of
	// padding): only the check of the blocks' CRCs against it finds this.
	crc := bytes.Clone(data)
	crc[len(crc)-2] ^= 0x10
	cases = append(cases, damaged{"the stream's CRC changed", crc})
	for _, tail := range []string{"x", "\x00", "BZ", "BZh9", "BZh91AY&SY", "garbage after the end"} {
		cases = append(cases, damaged{fmt.Sprintf("followed by %q", tail), append(bytes.Clone(data), tail...)})
	}
	failed := 0
	for _, d := range cases {
		want, serialErr := readAllBzip2(d.data)
		got, err := readBzip2(d.data, 3, 1<<16, nil)
		if (err != nil) != (serialErr != nil) {
			t.Errorf("%s: parallel reader's error %v, the standard library's %v", d.name, err, serialErr)
			continue
		}
		if err == nil && !bytes.Equal(got, want) {
			t.Errorf("%s: both readers succeed with %d and %d bytes", d.name, len(got), len(want))
		}
		if err != nil {
			failed++
			if !bytes.HasPrefix(text, got) {
				t.Errorf("%s: the %d bytes before the error %v are not the content's start", d.name, len(got), err)
			}
		}
	}
	// A changed byte can fall in the padding after a stream's end, which
	// no reader checks; most damage must be found.
	if failed < len(cases)*3/4 {
		t.Errorf("only %d of %d damaged files failed", failed, len(cases))
	}
}

// TestBzip2ScanFalseEnd scans a stream whose first block holds an end
// marker followed by bytes that are no stream's start: the marker is
// taken as the block's bits, and the pieces end at the real markers.
func TestBzip2ScanFalseEnd(t *testing.T) {
	var w bitWriter
	w.b, w.n = []byte("BZh9"), 32
	first := w.n
	w.write(bzip2Block, 48)
	w.write(0x11111111, 32)
	w.write(0x5a5, 13)
	w.write(bzip2End, 48) // false: "junk" follows its CRC and padding
	w.write(0x22222222, 32)
	w.write(0, uint(8-w.n%8)%8)
	for _, c := range []byte("junk") {
		w.write(uint64(c), 8)
	}
	w.write(0x3, 3)
	second := w.n
	w.write(bzip2Block, 48)
	w.write(0x33333333, 32)
	w.write(0x1234, 17)
	end := w.n
	w.write(bzip2End, 48)
	w.write(0x44444444, 32)
	s := &bzip2Scanner{r: chunked{bytes.NewReader(w.b), 3}}
	var got []string
	err := s.scan(func(p *bzip2Piece) bool {
		got = append(got, fmt.Sprintf("end=%v crc=%x bits=%d", p.end, p.crc, p.nbits))
		return true
	})
	want := []string{
		fmt.Sprintf("end=false crc=11111111 bits=%d", second-first),
		fmt.Sprintf("end=false crc=33333333 bits=%d", end-second),
		"end=true crc=44444444 bits=0",
	}
	if err != nil || strings.Join(got, "; ") != strings.Join(want, "; ") {
		t.Errorf("pieces %q, %v; want %q", got, err, want)
	}
}

// TestBzip2Cores reads a bzip2 file through Open on one core and on four:
// the same bytes and fingerprint, and Close stops the workers.
func TestBzip2Cores(t *testing.T) {
	c := bzip2Cases(t)["level1"]
	path := filepath.Join(t.TempDir(), "text.bz2")
	if err := os.WriteFile(path, c[0], 0o644); err != nil {
		t.Fatal(err)
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	var fps []Fingerprint
	for _, procs := range []int{1, 4} {
		runtime.GOMAXPROCS(procs)
		f, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		out, err := io.ReadAll(f)
		if err != nil || !bytes.Equal(out, c[1]) {
			t.Errorf("%d cores: %d bytes, %v; want the %d bytes of the content", procs, len(out), err, len(c[1]))
		}
		fps = append(fps, f.Fingerprint())
		f.Close()
	}
	if fps[0] != fps[1] {
		t.Errorf("fingerprints differ: %+v on one core, %+v on four", fps[0], fps[1])
	}

	// Closed after its first bytes, a file's goroutines end.
	before := runtime.NumGoroutine()
	for range 5 {
		f, err := Open(path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := io.ReadFull(f, make([]byte, 1000)); err != nil {
			t.Fatal(err)
		}
		f.Close()
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		t.Errorf("%d goroutines after closing, %d before opening", n, before)
	}
}

// FuzzParallelBzip2 compares the parallel reader with the standard
// library's on any bytes: both fail or both give the same content.
func FuzzParallelBzip2(f *testing.F) {
	austen, err := os.ReadFile(filepath.Join("testdata", "austen.txt.bz2"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(austen)
	f.Add(append(bytes.Clone(austen), austen...))
	f.Add(austen[:len(austen)-3])
	f.Fuzz(func(t *testing.T, data []byte) {
		want, serialErr := io.ReadAll(io.LimitReader(bzip2.NewReader(bytes.NewReader(data)), 1<<22))
		if len(want) == 1<<22 {
			return // a small input can expand enormously
		}
		got, err := readBzip2(data, 2, 5, nil)
		if (err != nil) != (serialErr != nil) || err == nil && !bytes.Equal(got, want) {
			t.Fatalf("parallel: %d bytes, %v; serial: %d bytes, %v", len(got), err, len(want), serialErr)
		}
	})
}

// BenchmarkBzip2 decodes Jane Austen's novels (4 MB of text, bzip2 -9)
// with the standard library's reader and with the parallel reader on
// every core; MB/s counts decoded bytes, and ns/op is wall time.
func BenchmarkBzip2(b *testing.B) {
	text := readShared(b, austenPath)
	data := bzip2Level(b, text, 9)
	b.Run("serial", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			if out, err := readAllBzip2(data); err != nil || len(out) != len(text) {
				b.Fatal(len(out), err)
			}
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.SetBytes(int64(len(text)))
		for b.Loop() {
			if out, err := readBzip2(data, runtime.GOMAXPROCS(0), 1<<16, nil); err != nil || len(out) != len(text) {
				b.Fatal(len(out), err)
			}
		}
	})
	b.Run("scan", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			s := &bzip2Scanner{r: bytes.NewReader(data)}
			if err := s.scan(func(*bzip2Piece) bool { return true }); err != nil {
				b.Fatal(err)
			}
		}
	})
}
