package formats

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// tsChunk is one chunk as given to TokenStreamWriter.WriteChunk.
type tsChunk struct {
	docLens []int32
	ids     []uint32
}

// tsStream is everything a token stream holds.
type tsStream struct {
	chunks []tsChunk
	tokens [][]byte
	counts []int64
	meta   Meta
}

// tsConfig stands for a stage's configuration in Meta.Config.
type tsConfig struct {
	Lowercase bool      `json:"lowercase"`
	MinCount  int       `json:"min_count"`
	Name      string    `json:"name"`
	Weights   []float64 `json:"weights"`
}

// tsSpecial are dictionary entries that a careless encoding could lose: the
// empty token, non-ASCII, invalid UTF-8 and a NUL byte.
var tsSpecial = [][]byte{[]byte(""), []byte("a"), []byte("héllo"), []byte("日本語"), []byte("\xff\xfe"), []byte("two words"), {0}}

// tsRandomStream makes a stream of nChunks chunks of up to maxDocs
// documents over a dictionary of dictSize tokens. Documents and chunks are
// sometimes empty: chunk 1 has no documents and chunk 2 only empty ones. Ids
// are mostly below 3000, but when the dictionary is large enough some need
// 3- and 4-byte varints.
func tsRandomStream(r *rand.Rand, nChunks, maxDocs, dictSize int) tsStream {
	var s tsStream
	// The dictionary is cheap to make even with millions of entries: short
	// tokens and small counts, with the largest count the reader accepts
	// now and then.
	filler := make([][]byte, 97)
	for i := range filler {
		filler[i] = fmt.Appendf(nil, "w%d", i)
	}
	s.tokens = make([][]byte, dictSize)
	s.counts = make([]int64, dictSize)
	for i := range dictSize {
		s.tokens[i] = filler[i%len(filler)]
		s.counts[i] = int64(i % 1000)
		if i%1013 == 5 {
			s.counts[i] = 1 << 62
		}
	}
	copy(s.tokens, tsSpecial)
	for c := range nChunks {
		var ch tsChunk
		nDocs := 1 + r.IntN(maxDocs)
		switch c {
		case 1:
			nDocs = 0
		case 2:
			ch.docLens = make([]int32, 3)
			nDocs = 0
		}
		for range nDocs {
			n := 0
			if r.IntN(5) > 0 {
				n = 1 + r.IntN(50)
			}
			ch.docLens = append(ch.docLens, int32(n))
			for range n {
				ch.ids = append(ch.ids, tsID(r, dictSize))
			}
		}
		s.chunks = append(s.chunks, ch)
	}
	s.meta = Meta{
		Config: tsConfig{Lowercase: true, MinCount: 5, Name: "<a&b> 日本", Weights: []float64{0.5, 1e-9}},
		Inputs: []string{"corpus/a.txt.zst", "corpus/b.txt"},
		Stats:  map[string]int64{"documents": int64(r.IntN(1000)), "tokens": int64(r.IntN(100000))},
	}
	return s
}

// tsID draws an id below dictSize: mostly a small one, sometimes one that
// needs 3 bytes (≥ 2^14) or 4 bytes (≥ 2^21) as a varint.
func tsID(r *rand.Rand, dictSize int) uint32 {
	switch k := r.IntN(16); {
	case k == 0 && dictSize > 1<<21:
		return uint32(1<<21 + r.IntN(dictSize-1<<21))
	case k == 1 && dictSize > 1<<14:
		return uint32(1<<14 + r.IntN(min(dictSize, 1<<21)-1<<14))
	default:
		return uint32(r.IntN(min(dictSize, 3000)))
	}
}

// tsWrite writes s to path, failing the test on any error.
func tsWrite(t testing.TB, path string, s tsStream) {
	t.Helper()
	w, err := CreateTokenStream(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	for i, c := range s.chunks {
		if err := w.WriteChunk(c.docLens, c.ids); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
	}
	if err := w.Close(s.meta, DictionaryOf(s.tokens, s.counts)); err != nil {
		t.Fatal(err)
	}
}

// tsBytes returns the bytes of s written as a token stream.
func tsBytes(t testing.TB, s tsStream) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "s.tokens")
	tsWrite(t, path, s)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// tsChunkBytes is the size a chunk should take in the file, computed from
// the layout: an 8-byte header, then uvarints.
func tsChunkBytes(c tsChunk) int64 {
	n := 8 + tsUvarintLen(uint64(len(c.docLens))) + tsUvarintLen(uint64(len(c.ids)))
	for _, l := range c.docLens {
		n += tsUvarintLen(uint64(l))
	}
	for _, id := range c.ids {
		n += tsUvarintLen(uint64(id))
	}
	return int64(n)
}

func tsUvarintLen(v uint64) int { return len(binary.AppendUvarint(nil, v)) }

// tsDecoded is a chunk as read back.
type tsDecoded struct {
	offset, bytes, docSeq int64
	docLens               []int32
	ids                   []uint32
}

// tsRead opens path and reads and decodes every chunk, stopping at the
// first error; stage says where that happened: "open", "next" or "decode".
// The returned stream is closed, but its fields remain readable.
func tsRead(path string) (s *TokenStream, got []tsDecoded, stage string, err error) {
	s, err = OpenTokenStream(path)
	if err != nil {
		return nil, nil, "open", err
	}
	defer s.Close()
	var c TokenChunk
	for {
		ok, err := s.NextChunk(&c)
		if err != nil {
			return s, got, "next", err
		}
		if !ok {
			return s, got, "", nil
		}
		if err := c.Decode(); err != nil {
			return s, got, "decode", err
		}
		got = append(got, tsDecoded{c.Offset, c.Bytes, c.DocSeq, slices.Clone(c.DocLens), slices.Clone(c.IDs)})
	}
}

// tsStreamErr reports what is wrong with err as the error of a malformed
// stream at path, or "" if nothing is: it must wrap ErrTokenStream and name
// the path and a byte offset.
func tsStreamErr(err error, path string) string {
	switch {
	case err == nil:
		return "no error"
	case !errors.Is(err, ErrTokenStream):
		return fmt.Sprintf("error %q does not wrap ErrTokenStream", err)
	case !strings.Contains(err.Error(), path):
		return fmt.Sprintf("error %q does not name %s", err, path)
	case !strings.Contains(err.Error(), ": byte "):
		return fmt.Sprintf("error %q names no byte offset", err)
	}
	return ""
}

// TestTokenStreamRoundTrip writes random documents in several chunks, with a
// dictionary large enough for 4-byte ids, and checks that everything reads
// back: the dictionary, the metadata, every chunk's documents, DocSeq, and
// offsets that tile the file from the magic to the trailer. It then decodes
// chunks concurrently in reverse order to show Decode depends only on its
// chunk.
func TestTokenStreamRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	const dictSize = 1<<21 + 500
	want := tsRandomStream(r, 7, 30, dictSize)
	// A document with an id at each varint width boundary.
	edges := []uint32{0, 0x7f, 0x80, 1<<14 - 1, 1 << 14, 1<<21 - 1, 1 << 21, dictSize - 1}
	want.chunks[0].docLens = append(want.chunks[0].docLens, int32(len(edges)))
	want.chunks[0].ids = append(want.chunks[0].ids, edges...)
	// Tokens about as long as the reader's 64 KiB window, and one longer:
	// each ends at a different place in the window, and the count after
	// it may or may not fit there.
	for i, n := range []int{64<<10 - 12, 64<<10 - 9, 64<<10 - 3, 64 << 10, 64<<10 + 5, 3 << 16} {
		want.tokens[2*i+1] = bytes.Repeat([]byte{byte('a' + i)}, n)
	}
	// A document long enough that its length takes a 3-byte varint.
	long := make([]uint32, 1<<14+3)
	for i := range long {
		long[i] = tsID(r, dictSize)
	}
	want.chunks[3].docLens = append(want.chunks[3].docLens, int32(len(long)))
	want.chunks[3].ids = append(want.chunks[3].ids, long...)
	want.meta.Version = "v0.0.0-test"
	want.meta.CreatedAt = "2024-01-02T03:04:05Z"

	path := filepath.Join(t.TempDir(), "corpus.tokens")
	w, err := CreateTokenStream(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	docs := int64(0)
	for _, c := range want.chunks {
		if err := w.WriteChunk(c.docLens, c.ids); err != nil {
			t.Fatal(err)
		}
		docs += int64(len(c.docLens))
	}
	if w.Documents() != docs {
		t.Errorf("Documents() = %d, want %d", w.Documents(), docs)
	}
	if err := w.Close(want.meta, DictionaryOf(want.tokens, want.counts)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	s, err := OpenTokenStream(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.Path != path || s.Size != int64(len(data)) {
		t.Errorf("Path, Size = %q, %d; want %q, %d", s.Path, s.Size, path, len(data))
	}

	// The dictionary.
	tokens, counts := tsDictionary(t, s)
	if s.DictLen != dictSize || len(tokens) != dictSize {
		t.Fatalf("dictionary of %d tokens (DictLen %d), want %d", len(tokens), s.DictLen, dictSize)
	}
	for i := range dictSize {
		if tokens[i] != string(want.tokens[i]) || counts[i] != want.counts[i] {
			t.Fatalf("dictionary entry %d = %q, %d; want %q, %d", i, tokens[i], counts[i], want.tokens[i], want.counts[i])
		}
	}
	// Dictionary stops at its callback's first error.
	stop := errors.New("stop")
	calls := 0
	if err := s.Dictionary(func(int, []byte, int64) error { calls++; return stop }); err != stop || calls != 1 {
		t.Errorf("Dictionary after a callback error: %v after %d calls, want %v after 1", err, calls, stop)
	}

	// The metadata: Config, Inputs and Stats come back as the JSON written.
	m := s.Meta
	if m.Schema != TokenStreamSchema || m.Version != want.meta.Version || m.CreatedAt != want.meta.CreatedAt {
		t.Errorf("schema, version, created = %q, %q, %q", m.Schema, m.Version, m.CreatedAt)
	}
	for _, f := range []struct {
		name      string
		got, sent any
	}{{"Config", m.Config, want.meta.Config}, {"Inputs", m.Inputs, want.meta.Inputs}, {"Stats", m.Stats, want.meta.Stats}} {
		js, err := json.Marshal(f.sent)
		if err != nil {
			t.Fatal(err)
		}
		raw, ok := f.got.(json.RawMessage)
		if !ok || !bytes.Equal(raw, js) {
			t.Errorf("Meta.%s = %#v, want raw JSON %s", f.name, f.got, js)
		}
	}

	// The file's frame: magic, footer, and where the trailer starts.
	if string(data[:8]) != "PWETOKS1" || string(data[len(data)-4:]) != "PWTK" {
		t.Fatalf("file starts %q and ends %q", data[:8], data[len(data)-4:])
	}
	foot := data[len(data)-16:]
	trailer := int64(binary.LittleEndian.Uint64(foot))
	if got := crc32.Checksum(data[trailer:len(data)-16], crc32.MakeTable(crc32.Castagnoli)); got != binary.LittleEndian.Uint32(foot[8:]) {
		t.Errorf("footer checksum %#x, trailer's is %#x", binary.LittleEndian.Uint32(foot[8:]), got)
	}
	if s.ChunkBytes() != trailer-8 {
		t.Errorf("ChunkBytes() = %d, want %d", s.ChunkBytes(), trailer-8)
	}

	// Every chunk, read and decoded in order into one reused TokenChunk.
	var c TokenChunk
	off, seq := int64(8), int64(0)
	for i, wc := range want.chunks {
		ok, err := s.NextChunk(&c)
		if err != nil || !ok {
			t.Fatalf("chunk %d: NextChunk = %v, %v", i, ok, err)
		}
		if c.Offset != off || c.Bytes != tsChunkBytes(wc) || c.DocSeq != seq {
			t.Errorf("chunk %d: Offset, Bytes, DocSeq = %d, %d, %d; want %d, %d, %d", i, c.Offset, c.Bytes, c.DocSeq, off, tsChunkBytes(wc), seq)
		}
		if err := c.Decode(); err != nil {
			t.Fatalf("chunk %d: %v", i, err)
		}
		if !slices.Equal(c.DocLens, wc.docLens) || !slices.Equal(c.IDs, wc.ids) {
			t.Errorf("chunk %d: decoded %d documents of %d ids, want %d of %d (or different values)", i, len(c.DocLens), len(c.IDs), len(wc.docLens), len(wc.ids))
		}
		off += c.Bytes
		seq += int64(len(wc.docLens))
	}
	if off != trailer {
		t.Errorf("the chunks end at byte %d, the trailer starts at %d", off, trailer)
	}
	for range 2 {
		if ok, err := s.NextChunk(&c); ok || err != nil {
			t.Errorf("NextChunk after the last chunk = %v, %v; want false, nil", ok, err)
		}
	}

	// Read all chunks first, then decode them concurrently, last first.
	s2, err := OpenTokenStream(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	chunks := make([]*TokenChunk, 0, len(want.chunks))
	for {
		c := new(TokenChunk)
		ok, err := s2.NextChunk(c)
		if err != nil {
			t.Fatal(err)
		}
		if !ok {
			break
		}
		chunks = append(chunks, c)
	}
	if len(chunks) != len(want.chunks) {
		t.Fatalf("read %d chunks, want %d", len(chunks), len(want.chunks))
	}
	var wg sync.WaitGroup
	errs := make([]error, len(chunks))
	for i := len(chunks) - 1; i >= 0; i-- {
		wg.Go(func() { errs[i] = chunks[i].Decode() })
	}
	wg.Wait()
	for i, c := range chunks {
		if errs[i] != nil {
			t.Fatalf("chunk %d: %v", i, errs[i])
		}
		if !slices.Equal(c.DocLens, want.chunks[i].docLens) || !slices.Equal(c.IDs, want.chunks[i].ids) {
			t.Errorf("chunk %d decoded out of order differs from what was written", i)
		}
	}
}

// TestTokenStreamEmpty shows that a stream without chunks or dictionary
// reads back as such, and that Close fills schema, version and creation
// time (from SOURCE_DATE_EPOCH) when they are unset.
func TestTokenStreamEmpty(t *testing.T) {
	t.Setenv("SOURCE_DATE_EPOCH", "86400")
	path := filepath.Join(t.TempDir(), "empty.tokens")
	tsWrite(t, path, tsStream{})
	s, got, stage, err := tsRead(path)
	if err != nil {
		t.Fatalf("%s: %v", stage, err)
	}
	if len(got) != 0 || s.DictLen != 0 {
		t.Errorf("read %d chunks and %d tokens from an empty stream", len(got), s.DictLen)
	}
	if s.ChunkBytes() != 0 {
		t.Errorf("ChunkBytes() = %d, want 0", s.ChunkBytes())
	}
	m := s.Meta
	if m.Schema != TokenStreamSchema || m.Version == "" || m.CreatedAt != "1970-01-02T00:00:00Z" {
		t.Errorf("schema, version, created = %q, %q, %q", m.Schema, m.Version, m.CreatedAt)
	}
	if m.Config != nil || m.Inputs != nil || m.Stats != nil {
		t.Errorf("unset Config, Inputs, Stats read back as %#v, %#v, %#v", m.Config, m.Inputs, m.Stats)
	}
}

// tsSmall is a small stream for the truncation, corruption and fuzz tests.
func tsSmall(t testing.TB, seed uint64, chunks, dictSize int) []byte {
	return tsBytes(t, tsRandomStream(rand.New(rand.NewPCG(seed, 7)), chunks, 5, dictSize))
}

// TestTokenStreamTruncated cuts a valid stream at every length. The footer
// is at the end, so every cut loses it and OpenTokenStream itself fails,
// with an ErrTokenStream error naming the file and a byte offset.
func TestTokenStreamTruncated(t *testing.T) {
	data := tsSmall(t, 3, 5, 150)
	path := filepath.Join(t.TempDir(), "cut.tokens")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	// The full stream is fine.
	if _, got, stage, err := tsRead(path); err != nil || len(got) != 5 {
		t.Fatalf("untruncated: %d chunks, %s: %v", len(got), stage, err)
	}
	failures := 0
	// Cut the file shorter and shorter, in place.
	for n := len(data) - 1; n >= 0; n-- {
		if err := os.Truncate(path, int64(n)); err != nil {
			t.Fatal(err)
		}
		s, err := OpenTokenStream(path)
		if err == nil {
			s.Close()
			_, _, stage, err := tsRead(path)
			t.Errorf("cut at %d of %d bytes: OpenTokenStream succeeded (then %s: %v)", n, len(data), stage, err)
		} else if msg := tsStreamErr(err, path); msg != "" {
			t.Errorf("cut at %d of %d bytes: %s", n, len(data), msg)
		} else {
			continue
		}
		if failures++; failures == 10 {
			t.Fatal("too many failures")
		}
	}
	t.Logf("cut a stream of %d bytes at every length", len(data))
}

// TestTokenStreamCorrupt flips every bit and every byte of a small stream:
// the magic and footer are checked and the chunk payloads and trailer are
// CRC-32C protected, so every flip must give an ErrTokenStream error naming
// the file and a byte offset somewhere along open, NextChunk and Decode, and
// none may panic. Removing a chunk or appending bytes is caught too.
func TestTokenStreamCorrupt(t *testing.T) {
	data := tsSmall(t, 4, 5, 40)
	dir := t.TempDir()
	// check reads path through, and reports whether it failed as it should,
	// and at which stage.
	check := func(what, path string) (stage string, ok bool) {
		t.Helper()
		defer func() {
			if p := recover(); p != nil {
				t.Errorf("%s: panic: %v", what, p)
				ok = false
			}
		}()
		_, _, stage, err := tsRead(path)
		if msg := tsStreamErr(err, path); msg != "" {
			t.Errorf("%s: %s (at %s)", what, msg, stage)
			return stage, false
		}
		return stage, true
	}

	path := filepath.Join(dir, "flipped.tokens")
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
	_, got, _, err := tsRead(path)
	if err != nil || len(got) != 5 {
		t.Fatalf("the stream: %d chunks, %v", len(got), err)
	}
	// Every single-bit flip and every byte inverted; in the chunks' 8-byte
	// headers, which no checksum covers, every possible byte value.
	masks := []byte{1, 2, 4, 8, 16, 32, 64, 128, 255}
	var all []byte
	for m := 1; m < 256; m++ {
		all = append(all, byte(m))
	}
	masksAt := make([][]byte, len(data))
	for i := range masksAt {
		masksAt[i] = masks
	}
	for _, c := range got {
		for i := c.offset; i < c.offset+8; i++ {
			masksAt[i] = all
		}
	}

	// Flip bytes in place, restoring each before flipping the next.
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	stages := map[string]int{}
	flips, failures := 0, 0
	for i := range data {
		for _, mask := range masksAt[i] {
			flips++
			if _, err := f.WriteAt([]byte{data[i] ^ mask}, int64(i)); err != nil {
				t.Fatal(err)
			}
			stage, ok := check(fmt.Sprintf("byte %d of %d ^ %#x", i, len(data), mask), path)
			stages[stage]++
			if !ok {
				if failures++; failures == 10 {
					t.Fatal("too many failures")
				}
			}
		}
		if _, err := f.WriteAt(data[i:i+1], int64(i)); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d flips of %d bytes caught at: %v", flips, len(data), stages)

	// Splice out the second chunk, keeping the trailer and footer; append a
	// byte; repeat the footer.
	c := got[1]
	for i, b := range [][]byte{
		slices.Concat(data[:c.offset], data[c.offset+c.bytes:]),
		slices.Concat(data, []byte{0}),
		slices.Concat(data, data[len(data)-16:]),
	} {
		path := filepath.Join(dir, fmt.Sprintf("edit%d.tokens", i))
		if err := os.WriteFile(path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		check(fmt.Sprintf("edit %d", i), path)
	}
}

// tsEncode is an encoder of the layout documented in tokens.go, written
// independently of TokenStreamWriter: the magic, each payload behind its
// length and CRC-32C, the trailer, and the footer.
func tsEncode(payloads [][]byte, trailer []byte) []byte {
	return tsFrame(tsChunkRegion(payloads...), trailer)
}

// tsChunkRegion encodes payloads as chunks, each behind its length and
// CRC-32C.
func tsChunkRegion(payloads ...[]byte) []byte {
	var b []byte
	for _, p := range payloads {
		b = binary.LittleEndian.AppendUint32(b, uint32(len(p)))
		b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(p, crc32.MakeTable(crc32.Castagnoli)))
		b = append(b, p...)
	}
	return b
}

// tsFrame puts the chunks' bytes between the magic and the trailer, and
// appends the footer.
func tsFrame(chunks, trailer []byte) []byte {
	b := slices.Concat([]byte("PWETOKS1"), chunks, trailer)
	b = binary.LittleEndian.AppendUint64(b, uint64(8+len(chunks)))
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(trailer, crc32.MakeTable(crc32.Castagnoli)))
	return append(b, "PWTK"...)
}

// tsUvarints encodes vs as uvarints, back to back.
func tsUvarints(vs ...uint64) []byte {
	var b []byte
	for _, v := range vs {
		b = binary.AppendUvarint(b, v)
	}
	return b
}

// tsTrailer encodes metadata and a dictionary as a trailer.
func tsTrailer(meta map[string]string, tokens []string, counts []uint64) []byte {
	js, err := json.Marshal(meta)
	if err != nil {
		panic(err)
	}
	t := slices.Concat(tsUvarints(uint64(len(js))), js, tsUvarints(uint64(len(tokens))))
	for i, tok := range tokens {
		t = slices.Concat(t, tsUvarints(uint64(len(tok))), []byte(tok), tsUvarints(counts[i]))
	}
	return t
}

// TestTokenStreamLayout compares the writer's bytes with the documented
// layout, encoded independently.
func TestTokenStreamLayout(t *testing.T) {
	s := tsStream{
		chunks: []tsChunk{{[]int32{2, 0, 1}, []uint32{0, 2, 1}}, {}, {[]int32{0}, nil},
			// An id of every varint width, around each width's limits.
			{[]int32{0, 12}, []uint32{0x7f, 0x80, 1<<14 - 1, 1 << 14, 1<<21 - 1, 1 << 21, 1<<28 - 1, 1 << 28, math.MaxUint32, 0, 0x80, 1 << 14}}},
		tokens: [][]byte{[]byte("a"), nil, []byte("é")},
		counts: []int64{300, 0, 1 << 62},
		meta:   Meta{Version: "v1", CreatedAt: "2024-01-02T03:04:05Z", Stats: map[string]int{"documents": 4}},
	}
	got := tsBytes(t, s)
	want := tsEncode(
		[][]byte{tsUvarints(3, 3, 2, 0, 1, 0, 2, 1), tsUvarints(0, 0), tsUvarints(1, 0, 0),
			tsUvarints(2, 12, 0, 12, 0x7f, 0x80, 1<<14-1, 1<<14, 1<<21-1, 1<<21, 1<<28-1, 1<<28, math.MaxUint32, 0, 0x80, 1<<14)},
		tsTrailer(map[string]string{
			"pwe.schema": TokenStreamSchema, "pwe.version": "v1",
			"pwe.created_at": "2024-01-02T03:04:05Z", "pwe.stats": `{"documents":4}`,
		}, []string{"a", "", "é"}, []uint64{300, 0, 1 << 62}))
	if !bytes.Equal(got, want) {
		t.Errorf("the writer wrote\n%q\nthe layout is\n%q", got, want)
	}
}

// TestTokenStreamOverlongIDs reads ids written with more bytes than they
// need, which encoding/binary's uvarint accepts, in the middle of a chunk
// and at its end, where fewer than four bytes are left.
func TestTokenStreamOverlongIDs(t *testing.T) {
	meta := map[string]string{"pwe.schema": TokenStreamSchema}
	tokens := make([]string, 300)
	counts := make([]uint64, len(tokens))
	for i := range tokens {
		tokens[i] = fmt.Sprint(i)
	}
	ids := [][]byte{{0x80, 0x00}, {0xff, 0x80, 0x00}, {0x85, 0x80, 0x80, 0x00}, {0x81, 0x01}, {0x82, 0x80, 0x00}}
	want := []uint32{0, 127, 5, 129, 2}
	payload := tsUvarints(1, 2*uint64(len(ids)), 2*uint64(len(ids)))
	for range 2 {
		for _, id := range ids {
			payload = append(payload, id...)
		}
	}
	path := filepath.Join(t.TempDir(), "overlong.tokens")
	if err := os.WriteFile(path, tsEncode([][]byte{payload}, tsTrailer(meta, tokens, counts)), 0o644); err != nil {
		t.Fatal(err)
	}
	_, got, stage, err := tsRead(path)
	if err != nil {
		t.Fatalf("%s: %v", stage, err)
	}
	if len(got) != 1 || !slices.Equal(got[0].ids, append(want, want...)) {
		t.Fatalf("decoded %+v, want the ids %v twice", got, want)
	}
}

// TestTokenStreamMalformed reads streams whose checksums are right but
// whose contents are not, so that only the parsing can catch them: each
// must fail at the expected stage with an ErrTokenStream error that names
// the file and a byte offset and says what is wrong.
func TestTokenStreamMalformed(t *testing.T) {
	meta := map[string]string{"pwe.schema": TokenStreamSchema}
	trailer := tsTrailer(meta, []string{"a", "b", "c"}, []uint64{1, 2, 3})
	good := tsUvarints(1, 2, 2, 0, 2)
	// The metadata without the dictionary's length, for hand-made ones.
	head := tsTrailer(meta, nil, nil)
	head = head[:len(head)-1]
	for _, tc := range []struct {
		name, stage, want string
		data              []byte
	}{
		{"stray byte after the ids", "decode", "stray", tsEncode([][]byte{good, append(tsUvarints(1, 1, 1, 0), 0)}, trailer)},
		{"documents without their ids", "decode", "documents hold 1 tokens but the chunk has 2 ids", tsEncode([][]byte{tsUvarints(2, 2, 1, 0, 0, 0)}, trailer)},
		{"a document longer than the chunk", "decode", "bad document length", tsEncode([][]byte{tsUvarints(1, 1, 2, 0)}, trailer)},
		{"an id cut short", "decode", "cut short", tsEncode([][]byte{tsUvarints(1, 1, 1), {0x80}}, trailer)},
		{"more ids than bytes", "decode", "bad id count", tsEncode([][]byte{tsUvarints(1, 100, 100, 0)}, trailer)},
		{"an id outside the dictionary", "decode", "id 3 outside", tsEncode([][]byte{good, tsUvarints(1, 1, 1, 3)}, trailer)},
		{"an empty chunk payload", "next", "bad document count", tsEncode([][]byte{good, {}}, trailer)},
		{"more documents than bytes", "next", "bad document count", tsEncode([][]byte{tsUvarints(200, 0)}, trailer)},
		{"a chunk longer than the chunks", "next", "runs past", func() []byte {
			c := tsChunkRegion(good)
			binary.LittleEndian.PutUint32(c, uint32(len(good)+1))
			return tsFrame(c, trailer)
		}()},
		{"a chunk header cut by the trailer", "next", "runs into the trailer", tsFrame(append(tsChunkRegion(good), 1, 2, 3, 4, 5), trailer)},
		{"stray bytes after the dictionary", "open", "stray", tsEncode(nil, append(bytes.Clone(trailer), 0))},
		{"metadata that is not JSON", "open", "metadata", tsEncode(nil, slices.Concat(tsUvarints(3), []byte("{x}"), tsUvarints(0)))},
		{"metadata longer than the trailer", "open", "bad metadata length", tsEncode(nil, tsUvarints(100, 0))},
		{"another schema", "open", "schema", tsEncode(nil, tsTrailer(map[string]string{"pwe.schema": "pwe.counts/1"}, nil, nil))},
		{"no schema", "open", "schema", tsEncode(nil, tsTrailer(map[string]string{}, nil, nil))},
		{"a count above 2^62", "open", "bad count", tsEncode(nil, tsTrailer(meta, []string{"a"}, []uint64{1<<62 + 1}))},
		{"more tokens than bytes", "open", "bad dictionary length", tsEncode(nil, slices.Concat(head, tsUvarints(5, 1, 'a', 1)))},
		{"a token past the end", "open", "bad length", tsEncode(nil, slices.Concat(head, tsUvarints(1, 9, 'a', 1)))},
		{"the trailer before the magic's end", "open", "outside", func() []byte {
			b := tsEncode(nil, trailer)
			binary.LittleEndian.PutUint64(b[len(b)-16:], 4)
			return b
		}()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "m.tokens")
			if err := os.WriteFile(path, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			_, _, stage, err := tsRead(path)
			if msg := tsStreamErr(err, path); msg != "" {
				t.Fatal(msg)
			}
			if stage != tc.stage || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("at %s: %v; want an error at %s mentioning %q", stage, err, tc.stage, tc.want)
			}
		})
	}
}

// TestTokenStreamWriterChecks shows that the writer rejects inconsistent
// chunks without writing them, and that a stream appears under its name
// only when Close succeeds: a failed Close or an Abort leaves neither the
// file nor its temporary.
func TestTokenStreamWriterChecks(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "w.tokens")
	w, err := CreateTokenStream(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()

	for _, tc := range []struct {
		name    string
		docLens []int32
		ids     []uint32
		want    string
	}{
		{"more ids than tokens", []int32{1, 1}, []uint32{1, 2, 3}, "3 ids"},
		{"fewer ids than tokens", []int32{2, 2}, []uint32{1, 2, 3}, "4 tokens"},
		{"ids without documents", nil, []uint32{1}, "1 ids"},
		{"negative length", []int32{-1, 3}, []uint32{1, 2}, "-1 tokens"},
	} {
		err := w.WriteChunk(tc.docLens, tc.ids)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: WriteChunk error %v, want one mentioning %q", tc.name, err, tc.want)
		}
	}
	if w.Documents() != 0 {
		t.Errorf("Documents() = %d after rejected chunks", w.Documents())
	}
	good := tsChunk{[]int32{2, 0, 1}, []uint32{1, 0, 1}}
	if err := w.WriteChunk(good.docLens, good.ids); err != nil {
		t.Fatal(err)
	}

	// Before Close the stream exists only under a temporary name.
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("before Close, stat %s: %v", path, err)
	}
	if tmp := tsTemps(t, dir, "w.tokens"); len(tmp) != 1 {
		t.Errorf("before Close, temporary files %v, want one", tmp)
	}
	if err := w.Close(Meta{}, DictionaryOf([][]byte{[]byte("x"), []byte("y")}, []int64{3, 4})); err != nil {
		t.Fatal(err)
	}
	w.Abort() // a no-op after Close
	// The rejected chunks left nothing behind: only the good one is there.
	_, got, stage, err := tsRead(path)
	if err != nil {
		t.Fatalf("%s: %v", stage, err)
	}
	if len(got) != 1 || got[0].offset != 8 || !slices.Equal(got[0].docLens, good.docLens) || !slices.Equal(got[0].ids, good.ids) {
		t.Errorf("read %+v, want only the good chunk at byte 8", got)
	}
	if tmp := tsTemps(t, dir, "w.tokens"); len(tmp) != 0 {
		t.Errorf("after Close, temporary files %v", tmp)
	}

	// Failed Closes and an Abort leave no file, and no temporary.
	for _, tc := range []struct {
		name  string
		close func(w *TokenStreamWriter) error
	}{
		{"more tokens than counts", func(w *TokenStreamWriter) error {
			return w.Close(Meta{}, DictionaryOf([][]byte{[]byte("x"), []byte("y")}, []int64{1}))
		}},
		{"more counts than tokens", func(w *TokenStreamWriter) error { return w.Close(Meta{}, DictionaryOf(nil, []int64{1})) }},
		{"unmarshallable config", func(w *TokenStreamWriter) error { return w.Close(Meta{Config: make(chan int)}, DictionaryOf(nil, nil)) }},
		{"Abort", func(w *TokenStreamWriter) error { w.Abort(); return errors.New("aborted") }},
	} {
		dir := t.TempDir()
		path := filepath.Join(dir, "f.tokens")
		w, err := CreateTokenStream(path)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.WriteChunk(good.docLens, good.ids); err != nil {
			t.Fatal(err)
		}
		if err := tc.close(w); err == nil {
			t.Errorf("%s: Close succeeded", tc.name)
		}
		if entries, err := os.ReadDir(dir); err != nil || len(entries) != 0 {
			t.Errorf("%s: the directory holds %v (%v), want nothing", tc.name, entries, err)
		}
	}

	// A failed Close leaves an earlier file at the path as it was.
	if err := os.WriteFile(path, []byte("previous"), 0o644); err != nil {
		t.Fatal(err)
	}
	w, err = CreateTokenStream(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Close(Meta{}, DictionaryOf(nil, []int64{1})); err == nil {
		t.Error("Close with 0 tokens and 1 count succeeded")
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "previous" {
		t.Errorf("after a failed Close, %s holds %q, %v", path, b, err)
	}
}

// tsTemps lists the writer's temporary files for base in dir.
func tsTemps(t *testing.T, dir, base string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var tmp []string
	for _, e := range entries {
		if strings.HasPrefix(e.Name(), "."+base+".tmp-") {
			tmp = append(tmp, e.Name())
		}
	}
	return tmp
}

// TestTokenStreamIDOutsideDictionary shows that the writer does not check
// ids against the dictionary but Decode does: the chunk with the bad id
// fails with an ErrTokenStream error naming the id and the chunk's offset,
// while the chunk before it decodes.
func TestTokenStreamIDOutsideDictionary(t *testing.T) {
	for _, tc := range []struct {
		name string
		dict int
		bad  uint32
	}{
		{"just past the end", 10, 10},
		{"multi-byte", 10, 1<<21 + 3},
		{"largest uint32", 10, math.MaxUint32},
		{"empty dictionary", 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tsStream{tokens: make([][]byte, tc.dict), counts: make([]int64, tc.dict)}
			first := tsChunk{docLens: []int32{0}}
			if tc.dict > 0 {
				first = tsChunk{[]int32{2}, []uint32{0, uint32(tc.dict - 1)}}
			}
			s.chunks = []tsChunk{first, {[]int32{1, 1}, []uint32{tc.bad, 0}}}
			path := filepath.Join(t.TempDir(), "ids.tokens")
			tsWrite(t, path, s)

			r, err := OpenTokenStream(path)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			var c TokenChunk
			if ok, err := r.NextChunk(&c); !ok || err != nil {
				t.Fatalf("first chunk: %v, %v", ok, err)
			}
			if err := c.Decode(); err != nil {
				t.Fatalf("first chunk: %v", err)
			}
			if ok, err := r.NextChunk(&c); !ok || err != nil {
				t.Fatalf("second chunk: %v, %v", ok, err)
			}
			err = c.Decode()
			if msg := tsStreamErr(err, path); msg != "" {
				t.Fatal(msg)
			}
			for _, want := range []string{fmt.Sprintf("id %d ", tc.bad), fmt.Sprintf("byte %d:", c.Offset)} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not mention %q", err, want)
				}
			}
		})
	}
}

// FuzzTokenStream reads arbitrary bytes as a token stream: it must never
// panic, every error must wrap ErrTokenStream and name the file and a byte
// offset, and a stream that reads must be consistent: chunks tile the file
// from byte 8 to the trailer, DocSeq counts documents, every chunk's
// documents hold its ids, and every id is in the dictionary. Each input is
// also tried with its checksums recomputed, so that the fuzzer gets past
// them to the parsing they guard.
func FuzzTokenStream(f *testing.F) {
	// Small seeds, so that the fuzzer's minimization of new inputs is quick.
	dict := func(n int) ([][]byte, []int64) {
		tokens, counts := make([][]byte, n), make([]int64, n)
		for i := range n {
			tokens[i], counts[i] = tsSpecial[i%len(tsSpecial)], int64(i)
		}
		return tokens, counts
	}
	seeds := []tsStream{{}, {chunks: []tsChunk{{[]int32{2, 0, 1}, []uint32{0, 1, 2}}}}, {chunks: []tsChunk{{}, {[]int32{3}, []uint32{199, 128, 5}}}}}
	seeds[1].tokens, seeds[1].counts = dict(3)
	seeds[2].tokens, seeds[2].counts = dict(200)
	for _, s := range seeds {
		s.meta = Meta{Version: "v", CreatedAt: "t"}
		f.Add(tsBytes(f, s))
	}
	// One file, rewritten in place for every input: cheaper than a new one.
	path := filepath.Join(f.TempDir(), "fuzz.tokens")
	file, err := os.Create(path)
	if err != nil {
		f.Fatal(err)
	}
	defer file.Close()
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, b := range [][]byte{data, tsFixChecksums(data)} {
			if err := file.Truncate(int64(len(b))); err != nil {
				t.Fatal(err)
			}
			if _, err := file.WriteAt(b, 0); err != nil {
				t.Fatal(err)
			}
			tsFuzzCheck(t, path, b)
		}
	})
}

// tsFixChecksums returns a copy of data with the checksums of the trailer
// and of every chunk recomputed, as far as the layout can be followed.
func tsFixChecksums(data []byte) []byte {
	b := bytes.Clone(data)
	if len(b) < 8+16 {
		return b
	}
	table := crc32.MakeTable(crc32.Castagnoli)
	foot := b[len(b)-16:]
	end := binary.LittleEndian.Uint64(foot)
	if end < 8 || end > uint64(len(b)-16) {
		return b
	}
	binary.LittleEndian.PutUint32(foot[8:], crc32.Checksum(b[end:len(b)-16], table))
	for off := uint64(8); off+8 <= end; {
		n := uint64(binary.LittleEndian.Uint32(b[off:]))
		if n > end-off-8 {
			break
		}
		binary.LittleEndian.PutUint32(b[off+4:], crc32.Checksum(b[off+8:off+8+n], table))
		off += 8 + n
	}
	return b
}

// tsFuzzCheck reads path, which holds data, as a token stream and checks the
// error or the stream's invariants.
func tsFuzzCheck(t *testing.T, path string, data []byte) {
	s, got, stage, err := tsRead(path)
	if err != nil {
		if msg := tsStreamErr(err, path); msg != "" {
			t.Fatalf("%s: %s", stage, msg)
		}
		return
	}
	if s.Size != int64(len(data)) || s.Meta.Schema != TokenStreamSchema {
		t.Fatalf("Size %d of %d bytes, schema %q", s.Size, len(data), s.Meta.Schema)
	}
	// tsRead closed it.
	s, err = OpenTokenStream(path)
	if err != nil {
		t.Fatalf("reopening: %v", err)
	}
	defer s.Close()
	tokens, counts := tsDictionary(t, s)
	if len(tokens) != s.DictLen {
		t.Fatalf("dictionary of %d tokens, DictLen %d", len(tokens), s.DictLen)
	}
	for i, n := range counts {
		if n < 0 {
			t.Fatalf("count %d of token %d", n, i)
		}
	}
	off, seq := int64(8), int64(0)
	for i, c := range got {
		if c.offset != off || c.docSeq != seq || c.bytes < 9 {
			t.Fatalf("chunk %d: Offset, Bytes, DocSeq = %d, %d, %d; want %d, ≥ 9, %d", i, c.offset, c.bytes, c.docSeq, off, seq)
		}
		sum := int64(0)
		for _, n := range c.docLens {
			if n < 0 {
				t.Fatalf("chunk %d: a document of %d tokens", i, n)
			}
			sum += int64(n)
		}
		if sum != int64(len(c.ids)) {
			t.Fatalf("chunk %d: documents of %d tokens but %d ids", i, sum, len(c.ids))
		}
		for _, id := range c.ids {
			if int64(id) >= int64(s.DictLen) {
				t.Fatalf("chunk %d: id %d outside the dictionary of %d", i, id, s.DictLen)
			}
		}
		off += c.bytes
		seq += int64(len(c.docLens))
	}
	if off-8 != s.ChunkBytes() {
		t.Fatalf("chunks of %d bytes, ChunkBytes() = %d", off-8, s.ChunkBytes())
	}
}

// tsDictionary reads the stream's dictionary, which OpenTokenStream has
// checked, so that reading it must not fail.
func tsDictionary(t testing.TB, s *TokenStream) (tokens []string, counts []int64) {
	t.Helper()
	err := s.Dictionary(func(id int, tok []byte, n int64) error {
		if id != len(tokens) {
			t.Fatalf("Dictionary called with id %d after %d tokens", id, len(tokens))
		}
		tokens, counts = append(tokens, string(tok)), append(counts, n)
		return nil
	})
	if err != nil {
		t.Fatalf("Dictionary of a stream that opened: %v", err)
	}
	return tokens, counts
}

// TestTokenStreamDictionaryNotHeld opens a stream of 300,000 distinct
// tokens: the open stream must not hold its dictionary (about 10 MB as Go
// strings and counts) on the heap, only its length, so that count's memory
// does not grow with the corpus's distinct tokens. Reading the dictionary
// after the file is closed fails with the read error, not as a malformed
// stream.
func TestTokenStreamDictionaryNotHeld(t *testing.T) {
	const distinct = 300_000
	path := filepath.Join(t.TempDir(), "many.tokens")
	w, err := CreateTokenStream(path)
	if err != nil {
		t.Fatal(err)
	}
	tokens, counts := make([][]byte, distinct), make([]int64, distinct)
	ids := make([]uint32, distinct)
	for i := range tokens {
		tokens[i], counts[i], ids[i] = fmt.Appendf(nil, "t%06d", i), 1, uint32(i)
	}
	if err := w.WriteChunk([]int32{distinct}, ids); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(Meta{}, DictionaryOf(tokens, counts)); err != nil {
		t.Fatal(err)
	}
	tokens, counts, ids = nil, nil, nil

	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	s, err := OpenTokenStream(path)
	if err != nil {
		t.Fatal(err)
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 1<<20 {
		t.Errorf("the open stream holds %d bytes of heap; want under 1 MiB for a dictionary of %d tokens", grew, distinct)
	}
	if s.DictLen != distinct {
		t.Errorf("DictLen %d, want %d", s.DictLen, distinct)
	}
	n := 0
	if err := s.Dictionary(func(id int, tok []byte, c int64) error {
		if want := fmt.Sprintf("t%06d", id); string(tok) != want || c != 1 || id != n {
			return fmt.Errorf("entry %d: %q, %d; want %q, 1", id, tok, c, want)
		}
		n++
		return nil
	}); err != nil || n != distinct {
		t.Fatalf("Dictionary: %d entries, %v", n, err)
	}
	s.Close()
	if err := s.Dictionary(func(int, []byte, int64) error { return nil }); err == nil || errors.Is(err, ErrTokenStream) {
		t.Errorf("Dictionary of a closed stream: %v; want the read error", err)
	}
}

// TestUvarintLen compares uvarintLen with encoding/binary around every
// length's limits.
func TestUvarintLen(t *testing.T) {
	for k := range 64 {
		for _, x := range []uint64{1<<k - 1, 1 << k, 1<<k + 1, math.MaxUint64} {
			if got, want := uvarintLen(x), tsUvarintLen(x); got != want {
				t.Fatalf("uvarintLen(%d) = %d, want %d", x, got, want)
			}
		}
	}
}

// TestTokenStreamSpilledDictionary writes a stream whose dictionary was
// spilled in parts, some of them empty, as tokenize spills a table past
// its budget: the file must be the one written with the whole dictionary
// at Close, and the parts' temporary file must be gone after Close, and
// after Abort.
func TestTokenStreamSpilledDictionary(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	s := tsRandomStream(r, 6, 20, 5000)
	s.meta.CreatedAt = "2024-01-02T03:04:05Z"
	want := tsBytes(t, s)
	for _, cuts := range [][]int{{0}, {1700}, {0, 1, 1, 2500, 4999}, {5000}} {
		dir := t.TempDir()
		path := filepath.Join(t.TempDir(), "s.tokens")
		w, err := CreateTokenStream(path)
		if err != nil {
			t.Fatal(err)
		}
		for i, c := range s.chunks {
			if err := w.WriteChunk(c.docLens, c.ids); err != nil {
				t.Fatalf("chunk %d: %v", i, err)
			}
		}
		for _, cut := range cuts {
			from := w.DictionarySpilled()
			if err := w.SpillDictionary(DictionaryOf(s.tokens[from:cut], s.counts[from:cut]), dir); err != nil {
				t.Fatal(err)
			}
			if w.DictionarySpilled() != cut {
				t.Fatalf("cuts %v: %d entries spilled, want %d", cuts, w.DictionarySpilled(), cut)
			}
		}
		from := w.DictionarySpilled()
		if err := w.Close(s.meta, DictionaryOf(s.tokens[from:], s.counts[from:])); err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("cuts %v: the stream differs from the one written with its whole dictionary", cuts)
		}
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Errorf("cuts %v: Close left %d files in the spill directory", cuts, len(left))
		}
	}
	dir := t.TempDir()
	w, err := CreateTokenStream(filepath.Join(t.TempDir(), "aborted.tokens"))
	if err != nil {
		t.Fatal(err)
	}
	if err := w.SpillDictionary(DictionaryOf(s.tokens[:10], s.counts[:10]), dir); err != nil {
		t.Fatal(err)
	}
	w.Abort()
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("Abort left %d files in the spill directory", len(left))
	}
}

// TestTokenStreamSHA256: chunks hashed as they are read, with the trailer
// read once more, give the digest of the whole file; a stream not read
// through, or hashed from after its first chunk, gives none.
func TestTokenStreamSHA256(t *testing.T) {
	r := rand.New(rand.NewPCG(4, 5))
	want := tsRandomStream(r, 9, 40, 5000)
	path := filepath.Join(t.TempDir(), "corpus.tokens")
	w, err := CreateTokenStream(path)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	for _, c := range want.chunks {
		if err := w.WriteChunk(c.docLens, c.ids); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(want.meta, DictionaryOf(want.tokens, want.counts)); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	for _, tc := range []struct {
		name       string
		hashAfter  int // chunks read before HashChunks
		read       int // chunks read in all; -1 all
		wantDigest bool
	}{
		{"read through", 0, -1, true},
		{"stopped early", 0, len(want.chunks) - 1, false},
		{"hashed late", 1, -1, false},
	} {
		s, err := OpenTokenStream(path)
		if err != nil {
			t.Fatal(err)
		}
		var c TokenChunk
		for i := 0; tc.read < 0 || i < tc.read; i++ {
			if i == tc.hashAfter {
				s.HashChunks()
			}
			ok, err := s.NextChunk(&c)
			if err != nil {
				t.Fatal(err)
			}
			if !ok {
				break
			}
		}
		got, ok, err := s.SHA256()
		s.Close()
		if err != nil {
			t.Fatal(err)
		}
		if ok != tc.wantDigest || ok && got != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: SHA256() = %q, %v; want %x, %v", tc.name, got, ok, sum, tc.wantDigest)
		}
	}
}

// TestDecodeIDs checks decodeIDs against binary.Uvarint on random ids of
// every width, some of them written longer than they need, followed by
// random bytes, with a random dictionary size: the ids it decodes, where
// it stops, and the id it reports outside the dictionary.
func TestDecodeIDs(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for trial := range 5000 {
		var b []byte
		n := r.IntN(40)
		for range n {
			b = binary.AppendUvarint(b, uint64(r.Uint32())>>r.IntN(33))
			if r.IntN(20) == 0 {
				// The same id, one byte longer.
				b[len(b)-1] |= 0x80
				b = append(b, 0)
			}
		}
		for range r.IntN(12) {
			b = append(b, byte(r.IntN(256)))
		}
		limit := uint64(1) << r.IntN(33)
		ids := make([]uint32, r.IntN(n+5))
		p := 0
		got, bad := decodeIDs(ids, b, &p, limit)
		q := 0
		for i := range got {
			v, k := binary.Uvarint(b[q:])
			if k <= 0 || v >= limit || uint32(v) != ids[i] || k > 3 {
				t.Fatalf("trial %d: id %d decoded as %d, want %d (%d bytes, limit %d)", trial, i, ids[i], v, k, limit)
			}
			q += k
		}
		if p != q {
			t.Fatalf("trial %d: stopped at byte %d after %d ids, which end at %d", trial, p, got, q)
		}
		if bad {
			if v, k := binary.Uvarint(b[q:]); k <= 0 || v < limit || uint32(v) != ids[got] {
				t.Fatalf("trial %d: id %d reported outside the dictionary of %d as %d, but it is %d", trial, got, limit, ids[got], v)
			}
		} else if got < len(ids) && q+8 <= len(b) {
			// It stops early only before an id of four bytes or more, or
			// eight bytes without an id's end.
			if _, k := binary.Uvarint(b[q:]); k > 0 && k <= 3 {
				t.Fatalf("trial %d: stopped at byte %d before an id of %d bytes", trial, q, k)
			}
		}
	}
}
