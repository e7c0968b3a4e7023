package formats

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"math/bits"
	"os"
	"slices"

	"github.com/pwe-project/pwe/internal/atomicfile"
	"github.com/pwe-project/pwe/internal/cleanup"
)

// A token stream is a tokenized corpus: every document as the ids of its
// tokens, where an id numbers a distinct token in the order of its first
// appearance in the corpus, followed by the dictionary of those tokens with
// their counts. `pwe tokenize --tokens` writes one beside vocab.parquet and
// `pwe count --tokens` reads it instead of the text, so that a corpus is
// decompressed and segmented once rather than twice. Because the dictionary
// holds every distinct token, not only the vocabulary, one stream serves any
// vocabulary made with the same tokenizer settings.
//
// Layout (fixed-width integers little-endian, uvarint as encoding/binary):
//
//	"PWETOKS1"                          8 bytes
//	chunk*                              documents in corpus order
//	    u32 payload length, u32 CRC-32C of the payload, then the payload:
//	    uvarint documents, uvarint ids,
//	    documents × uvarint(tokens in the document), ids × uvarint(id)
//	trailer
//	    uvarint length, JSON object of the metadata (pwe.schema, ...)
//	    uvarint tokens, tokens × (uvarint length, bytes, uvarint count)
//	footer                              16 bytes
//	    u64 trailer offset, u32 CRC-32C of the trailer, "PWTK"
//
// A writer that fails never renames its file into place, and a reader
// checks the footer first, so a truncated stream is reported as such
// before any of it is counted.
const (
	TokenStreamSchema = "pwe.tokens/1"

	tokensMagic    = "PWETOKS1"
	tokensEndMagic = "PWTK"
	tokensFooter   = 16
	// maxChunk bounds a chunk's payload, so that a corrupt length is caught
	// before it is allocated. Writers make chunks of about a megabyte.
	maxChunk = 1 << 30
)

// ErrTokenStream is wrapped by the errors of a file that is not a valid
// token stream: wrong magic, truncation, a checksum mismatch or an id
// outside the dictionary.
var ErrTokenStream = errors.New("not a valid pwe token stream")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// TokenStreamWriter writes a token stream under a temporary name and
// renames it when Close succeeds.
type TokenStreamWriter struct {
	f    *atomicfile.File
	w    *bufio.Writer
	off  int64
	buf  []byte
	err  error
	docs int64
	// parts holds the entries of the dictionaries moved out of memory
	// (SpillDictionary), nParts of them, encoded as in the trailer.
	parts  *os.File
	nParts int
}

// CreateTokenStream starts writing a token stream to path.
func CreateTokenStream(path string) (*TokenStreamWriter, error) {
	f, err := atomicfile.Create(path)
	if err != nil {
		return nil, err
	}
	// Chunks are larger than the buffer, so most go to the file directly
	// rather than through it.
	w := &TokenStreamWriter{f: f, w: bufio.NewWriterSize(f, 64<<10)}
	if w.write([]byte(tokensMagic)); w.err != nil {
		f.Abort()
		return nil, w.err
	}
	return w, nil
}

func (w *TokenStreamWriter) write(b []byte) {
	if w.err != nil {
		return
	}
	n, err := w.w.Write(b)
	w.off += int64(n)
	if err != nil {
		w.err = fmt.Errorf("writing %s: %w", w.f.Name(), err)
	}
}

// WriteChunk appends documents: docLens[d] is the number of tokens of the
// d-th document, and ids holds their ids back to back.
func (w *TokenStreamWriter) WriteChunk(docLens []int32, ids []uint32) error {
	if w.err != nil {
		return w.err
	}
	b := append(w.buf[:0], make([]byte, 8)...)
	b = binary.AppendUvarint(b, uint64(len(docLens)))
	b = binary.AppendUvarint(b, uint64(len(ids)))
	total := 0
	for _, n := range docLens {
		if n < 0 {
			return fmt.Errorf("formats: token stream chunk with a document of %d tokens", n)
		}
		total += int(n)
		b = binary.AppendUvarint(b, uint64(n))
	}
	if total != len(ids) {
		return fmt.Errorf("formats: token stream chunk: documents hold %d tokens but %d ids are given", total, len(ids))
	}
	// The ids are most of the stream: encode them into room made once,
	// with the short varints spelled out.
	p := len(b)
	b = slices.Grow(b, binary.MaxVarintLen32*len(ids))[:p+binary.MaxVarintLen32*len(ids)]
	// With BMI2, putIDsBMI2 spreads an id's 7-bit groups into bytes with
	// one PDEP and looks its marks and length up by its highest bit: on
	// bench-raw, tokenize's samples here fell from 262 to 89 of about
	// 5 300 (perf record, two runs each).
	for hasBMI2 && len(ids) > 0 {
		var n int
		p, n = putIDsBMI2(b, p, ids)
		ids = ids[n:]
		if len(ids) > 0 {
			p += binary.PutUvarint(b[p:], uint64(ids[0]))
			ids = ids[1:]
		}
	}
	for _, id := range ids {
		if id >= 1<<21 {
			p += binary.PutUvarint(b[p:], uint64(id))
			continue
		}
		// One to three bytes without a branch on the length, which is as
		// good as random: four bytes are stored, and p moves past one, two
		// or three of them.
		c0, c1 := b2u32(id >= 1<<7), b2u32(id >= 1<<14)
		x := id&0x7f | id<<1&0x7f00 | id<<2&0x7f0000 | c0<<7 | c1<<15
		binary.LittleEndian.PutUint32(b[p:], x)
		p += 1 + int(c0+c1)
	}
	b = b[:p]
	payload := b[8:]
	if len(payload) > maxChunk {
		return fmt.Errorf("formats: token stream chunk of %d bytes exceeds %d", len(payload), maxChunk)
	}
	binary.LittleEndian.PutUint32(b[0:], uint32(len(payload)))
	binary.LittleEndian.PutUint32(b[4:], crc32.Checksum(payload, castagnoli))
	w.buf = b
	w.write(b)
	w.docs += int64(len(docLens))
	return w.err
}

// Documents returns the documents written so far.
func (w *TokenStreamWriter) Documents() int64 { return w.docs }

// A Dictionary lists a token stream's distinct tokens by id, with their
// counts. A tokenize.Counter is one.
type Dictionary interface {
	// Len returns the number of tokens, whose ids are 0 to Len()-1.
	Len() int
	// Token returns the token with the given id.
	Token(id int) []byte
	// Counts returns the count of each id.
	Counts() []int64
}

// DictionaryOf returns the Dictionary of tokens[i], counted counts[i] times,
// for each id i.
func DictionaryOf(tokens [][]byte, counts []int64) Dictionary { return sliceDict{tokens, counts} }

type sliceDict struct {
	tokens [][]byte
	counts []int64
}

func (d sliceDict) Len() int            { return len(d.tokens) }
func (d sliceDict) Token(id int) []byte { return d.tokens[id] }
func (d sliceDict) Counts() []int64     { return d.counts }

// SpillDictionary moves the entries of dict out of memory, to a temporary
// file in dir, for a caller whose dictionary does not fit: they become the
// next ids of the stream's dictionary. The caller numbers the ids it writes
// after that from DictionarySpilled() on, and gives Close the dictionary of
// those alone. The stream's dictionary then lists a token once for each
// part it was counted in, each time with its count there.
func (w *TokenStreamWriter) SpillDictionary(dict Dictionary, dir string) error {
	if w.err != nil {
		return w.err
	}
	if w.parts == nil {
		f, err := os.CreateTemp(dir, "pwe-dictionary-*")
		if err != nil {
			return fmt.Errorf("formats: spilling the token stream's dictionary: %w", err)
		}
		cleanup.Add(f.Name())
		w.parts = f
	}
	if err := checkDictionary(dict); err != nil {
		return err
	}
	// Through a buffer: the entries of a large table would take megabytes
	// more at once.
	bw := bufio.NewWriterSize(w.parts, 1<<20)
	var b []byte
	for i, n := range dict.Counts() {
		b = appendEntry(b[:0], dict.Token(i), n)
		bw.Write(b)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("formats: spilling the token stream's dictionary to %s: %w", w.parts.Name(), err)
	}
	w.nParts += dict.Len()
	return nil
}

// DictionarySpilled returns the number of dictionary entries spilled: the
// first id of the dictionary that Close is given.
func (w *TokenStreamWriter) DictionarySpilled() int { return w.nParts }

// checkDictionary reports a dictionary whose counts do not match its
// tokens or lie outside what the format holds.
func checkDictionary(dict Dictionary) error {
	n, counts := dict.Len(), dict.Counts()
	if n != len(counts) {
		return fmt.Errorf("formats: token stream dictionary of %d tokens with %d counts", n, len(counts))
	}
	for i, c := range counts {
		if c < 0 || c > 1<<62 {
			return fmt.Errorf("formats: token stream dictionary: token %d has count %d", i, c)
		}
	}
	return nil
}

// appendEntry appends a dictionary entry as the trailer holds it.
func appendEntry(b, tok []byte, n int64) []byte {
	b = binary.AppendUvarint(b, uint64(len(tok)))
	b = append(b, tok...)
	return binary.AppendUvarint(b, uint64(n))
}

// dictionaryEntries encodes the entries of dict as the trailer holds them.
func dictionaryEntries(dict Dictionary) ([]byte, error) {
	if err := checkDictionary(dict); err != nil {
		return nil, err
	}
	// The entries are sized first: grown by appending, they would copy and
	// fault in about twice their size (megabytes for a large corpus).
	size := 0
	for i, c := range dict.Counts() {
		tok := dict.Token(i)
		size += uvarintLen(uint64(len(tok))) + len(tok) + uvarintLen(uint64(c))
	}
	t := make([]byte, 0, size)
	for i, c := range dict.Counts() {
		t = appendEntry(t, dict.Token(i), c)
	}
	return t, nil
}

// Close writes the trailer, with the metadata and the dictionary (after the
// entries spilled, if any), and renames the file into place. The schema is
// always TokenStreamSchema. A failed Close discards the file.
//
// The chunks are synced to stable storage while the trailer is encoded, so
// that the sync of the whole file has little left to wait for. On
// bench-raw the chunks' sync took 16 ms, and the trailer's 322 718 entries
// about as long.
func (w *TokenStreamWriter) Close(meta Meta, dict Dictionary) (err error) {
	defer func() {
		if err != nil {
			w.f.Abort()
		}
	}()
	defer w.removeParts()
	if w.err != nil {
		return w.err
	}
	synced := make(chan error, 1)
	go func() {
		err := w.w.Flush()
		if err == nil {
			err = w.f.Sync()
		}
		synced <- err
	}()
	entries, err := dictionaryEntries(dict)
	if serr := <-synced; serr != nil {
		w.err = fmt.Errorf("writing %s: %w", w.f.Name(), serr)
		return w.err
	}
	if err != nil {
		return err
	}
	meta.Schema = TokenStreamSchema
	kv, err := meta.pairs()
	if err != nil {
		return err
	}
	obj := make(map[string]string, len(kv))
	for _, p := range kv {
		obj[p[0]] = p[1]
	}
	js, err := json.Marshal(obj)
	if err != nil {
		return err
	}
	head := binary.AppendUvarint(nil, uint64(len(js)))
	head = append(head, js...)
	head = binary.AppendUvarint(head, uint64(w.nParts+dict.Len()))
	start := w.off
	w.write(head)
	crc := crc32.Checksum(head, castagnoli)
	if w.parts != nil {
		crc, err = w.copyParts(crc)
		if err != nil {
			return err
		}
	}
	w.write(entries)
	crc = crc32.Update(crc, castagnoli, entries)
	var foot [tokensFooter]byte
	binary.LittleEndian.PutUint64(foot[0:], uint64(start))
	binary.LittleEndian.PutUint32(foot[8:], crc)
	copy(foot[12:], tokensEndMagic)
	w.write(foot[:])
	if w.err == nil {
		if err := w.w.Flush(); err != nil {
			w.err = fmt.Errorf("writing %s: %w", w.f.Name(), err)
		}
	}
	if w.err != nil {
		return w.err
	}
	return w.f.Commit()
}

// copyParts appends the spilled dictionary entries to the stream, and
// returns crc updated with them.
func (w *TokenStreamWriter) copyParts(crc uint32) (uint32, error) {
	if _, err := w.parts.Seek(0, io.SeekStart); err != nil {
		return crc, fmt.Errorf("formats: reading %s: %w", w.parts.Name(), err)
	}
	buf := make([]byte, 1<<20)
	for {
		n, err := w.parts.Read(buf)
		w.write(buf[:n])
		crc = crc32.Update(crc, castagnoli, buf[:n])
		if err == io.EOF {
			return crc, w.err
		}
		if err != nil {
			return crc, fmt.Errorf("formats: reading %s: %w", w.parts.Name(), err)
		}
	}
}

func (w *TokenStreamWriter) removeParts() {
	if w.parts != nil {
		w.parts.Close()
		os.Remove(w.parts.Name())
		cleanup.Forget(w.parts.Name())
		w.parts = nil
	}
}

// Abort discards the file. It does nothing after Close.
func (w *TokenStreamWriter) Abort() {
	w.f.Abort()
	w.removeParts()
}

// TokenStream reads a token stream. Its metadata is read and its trailer
// checked when it is opened; chunks are then read in order with NextChunk
// and decoded, possibly on other goroutines, with TokenChunk.Decode. The
// dictionary stays in the file: Dictionary reads it through, so that
// memory does not grow with the number of distinct tokens.
type TokenStream struct {
	Path string
	// Meta holds the metadata; Config, Inputs and Stats as json.RawMessage.
	Meta Meta
	// DictLen is the number of distinct tokens, the ids being 0 to
	// DictLen-1.
	DictLen int
	// Size is the file's size in bytes.
	Size int64

	f        *os.File
	off, end int64 // next chunk, and where the chunks end
	trailer  int64 // where the trailer starts
	dict     int64 // where the dictionary's first entry starts
	docSeq   int64
	kv       map[string]string
	// hash, if not nil, has taken the file's bytes up to hashed.
	hash   hash.Hash
	hashed int64
}

// HashChunks has NextChunk hash the chunks as it reads them, so that
// SHA256 then gives the file's digest with one more read of the trailer
// alone, rather than of the whole file. It must come before the first
// NextChunk.
func (s *TokenStream) HashChunks() {
	if s.off != int64(len(tokensMagic)) {
		return
	}
	s.hash = sha256.New()
	s.hash.Write([]byte(tokensMagic)) // the file starts with it: open checked
	s.hashed = s.off
}

// SHA256 returns the hexadecimal SHA-256 of the whole file, with true, if
// HashChunks was called and NextChunk has read every chunk since; false
// otherwise. It may be called once.
func (s *TokenStream) SHA256() (string, bool, error) {
	if s.hash == nil || s.hashed != s.end {
		return "", false, nil
	}
	s.hashed = -1
	if _, err := io.Copy(s.hash, io.NewSectionReader(s.f, s.end, s.Size-s.end)); err != nil {
		return "", false, fmt.Errorf("%s: %w", s.Path, err)
	}
	return hex.EncodeToString(s.hash.Sum(nil)), true, nil
}

func (s *TokenStream) errorf(off int64, format string, args ...any) error {
	return fmt.Errorf("%s: byte %d: %w: %s", s.Path, off, ErrTokenStream, fmt.Sprintf(format, args...))
}

// OpenTokenStream opens the token stream at path and reads its dictionary.
func OpenTokenStream(path string) (*TokenStream, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	s, err := openTokenStream(f, path)
	if err != nil {
		f.Close()
		return nil, err
	}
	return s, nil
}

func openTokenStream(f *os.File, path string) (*TokenStream, error) {
	s := &TokenStream{Path: path, f: f}
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	s.Size = info.Size()
	var head [len(tokensMagic)]byte
	if _, err := f.ReadAt(head[:], 0); err != nil || string(head[:]) != tokensMagic {
		return nil, s.errorf(0, "the file does not start with %q", tokensMagic)
	}
	if s.Size < int64(len(tokensMagic))+tokensFooter {
		return nil, s.errorf(s.Size, "truncated: no footer")
	}
	var foot [tokensFooter]byte
	if _, err := f.ReadAt(foot[:], s.Size-tokensFooter); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if string(foot[12:]) != tokensEndMagic {
		return nil, s.errorf(s.Size-tokensFooter, "truncated: the footer is missing (was the writer interrupted?)")
	}
	start := int64(binary.LittleEndian.Uint64(foot[0:]))
	if start < int64(len(tokensMagic)) || start > s.Size-tokensFooter {
		return nil, s.errorf(s.Size-tokensFooter, "trailer offset %d outside the file", start)
	}
	s.trailer = start
	// The trailer is read through twice, and not kept: first for its
	// checksum, then to parse the metadata and check the dictionary.
	h := crc32.New(castagnoli)
	if _, err := io.Copy(h, s.trailerReader(start)); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if h.Sum32() != binary.LittleEndian.Uint32(foot[8:]) {
		return nil, s.errorf(start, "the trailer's checksum does not match")
	}
	if err := s.parseTrailer(); err != nil {
		return nil, err
	}
	s.off, s.end = int64(len(tokensMagic)), start
	return s, nil
}

// trailerReader reads the file from off to the trailer's end.
func (s *TokenStream) trailerReader(off int64) *bufio.Reader {
	return bufio.NewReaderSize(io.NewSectionReader(s.f, off, s.Size-tokensFooter-off), 64<<10)
}

// trailerCursor reads uvarints and byte strings from the trailer, keeping
// the offset of the next byte for error messages. It parses them in place in
// the reader's buffer: it peeks at all the buffer holds and discards what
// it has parsed only when it needs more.
type trailerCursor struct {
	r   *bufio.Reader
	win []byte // the peeked bytes; win[pos:] come next
	pos int
	all bool  // win holds the rest of the trailer
	off int64 // file offset of the next byte
	end int64 // the trailer's end
	buf []byte
	err error // a read error other than the trailer's end
}

// next returns the next bytes, at least n of them unless the trailer ends
// first or n exceeds the reader's buffer, keeping a read error other than
// the end's. The bytes it returned before stay valid unless it returns
// more than the window held.
func (c *trailerCursor) next(n int) []byte {
	if len(c.win)-c.pos < n && !c.all {
		c.r.Discard(c.pos)
		var err error
		c.win, err = c.r.Peek(c.r.Size())
		c.pos = 0
		if err != nil {
			c.all = true
			if err != io.EOF {
				c.err = err
			}
		}
	}
	return c.win[c.pos:]
}

// skip moves the cursor past n bytes that next returned.
func (c *trailerCursor) skip(n int) {
	c.pos += n
	c.off += int64(n)
}

// uvarint returns the next uvarint, or false when the trailer holds none
// at the cursor, which it then leaves where it was, for the message, or
// when reading failed (c.err).
func (c *trailerCursor) uvarint() (uint64, bool) {
	x, k := binary.Uvarint(c.next(binary.MaxVarintLen64))
	if k <= 0 {
		return 0, false
	}
	c.skip(k)
	return x, true
}

// bytes returns the next n bytes, valid until the call after next; n must
// not exceed what is left. (The window it takes them from also holds a
// uvarint after them, so reading one does not move them.)
func (c *trailerCursor) bytes(n int) ([]byte, error) {
	if b := c.next(n + binary.MaxVarintLen64); len(b) >= n+binary.MaxVarintLen64 || c.all && len(b) >= n {
		c.skip(n)
		return b[:n], nil
	}
	c.r.Discard(c.pos)
	c.win, c.pos, c.all = nil, 0, false
	c.buf = slices.Grow(c.buf[:0], n)[:n]
	if _, err := io.ReadFull(c.r, c.buf); err != nil {
		return nil, err
	}
	c.off += int64(n)
	return c.buf, nil
}

func (c *trailerCursor) left() uint64 { return uint64(c.end - c.off) }

// malformed returns the error of a trailer that does not parse at off, or
// the read error that stopped the cursor.
func (s *TokenStream) malformed(c *trailerCursor, off int64, format string, args ...any) error {
	if c.err != nil {
		return fmt.Errorf("%s: %w", s.Path, c.err)
	}
	return s.errorf(off, format, args...)
}

// Dictionary calls fn with every distinct token's id, bytes (valid during
// the call only) and corpus count, in the order of the ids, reading them
// from the file; it stops at fn's first error and returns it.
func (s *TokenStream) Dictionary(fn func(id int, token []byte, count int64) error) error {
	c := &trailerCursor{r: s.trailerReader(s.dict), off: s.dict, end: s.Size - tokensFooter}
	return s.readDictionary(c, s.DictLen, fn)
}

// readDictionary reads n entries at c, checking each.
func (s *TokenStream) readDictionary(c *trailerCursor, n int, fn func(id int, token []byte, count int64) error) error {
	for i := range n {
		l, ok := c.uvarint()
		if !ok || l > c.left() {
			return s.malformed(c, c.off, "dictionary entry %d: bad length", i)
		}
		tok, err := c.bytes(int(l))
		if err != nil {
			return fmt.Errorf("%s: %w", s.Path, err)
		}
		n, ok := c.uvarint()
		if !ok || n > 1<<62 {
			return s.malformed(c, c.off, "dictionary entry %d: bad count", i)
		}
		if fn != nil {
			if err := fn(i, tok, int64(n)); err != nil {
				return err
			}
		}
	}
	return nil
}

// varints reads uvarints from b, starting at p.
type varints struct {
	b []byte
	p int
}

// next returns the next uvarint, or false when b holds none at p.
func (v *varints) next() (uint64, bool) {
	if v.p < len(v.b) && v.b[v.p] < 0x80 {
		v.p++
		return uint64(v.b[v.p-1]), true
	}
	x, k := binary.Uvarint(v.b[v.p:])
	if k <= 0 {
		return 0, false
	}
	v.p += k
	return x, true
}

// parseTrailer reads the metadata and checks the dictionary, keeping only
// its length and where it starts.
func (s *TokenStream) parseTrailer() error {
	start := s.trailer
	c := &trailerCursor{r: s.trailerReader(start), off: start, end: s.Size - tokensFooter}
	n, ok := c.uvarint()
	if !ok || n > c.left() {
		return s.malformed(c, start, "bad metadata length")
	}
	js, err := c.bytes(int(n))
	if err != nil {
		return fmt.Errorf("%s: %w", s.Path, err)
	}
	var kv map[string]string
	if err := json.Unmarshal(js, &kv); err != nil {
		return s.errorf(start, "metadata: %v", err)
	}
	s.kv = kv
	s.Meta = metaFromLookup(func(k string) (string, bool) { v, ok := kv[k]; return v, ok })
	if s.Meta.Schema != TokenStreamSchema {
		return s.errorf(start, "schema %q, want %q", s.Meta.Schema, TokenStreamSchema)
	}
	nt, ok := c.uvarint()
	if !ok || nt > c.left()/2 {
		return s.malformed(c, start, "bad dictionary length")
	}
	s.DictLen, s.dict = int(nt), c.off
	if err := s.readDictionary(c, s.DictLen, nil); err != nil {
		return err
	}
	if c.off != c.end {
		return s.errorf(c.off, "%d stray bytes after the dictionary", c.end-c.off)
	}
	return nil
}

// Close closes the file.
func (s *TokenStream) Close() error { return s.f.Close() }

// ChunkBytes returns the bytes the chunks occupy, for progress reports.
func (s *TokenStream) ChunkBytes() int64 { return s.end - int64(len(tokensMagic)) }

// A TokenChunk is one chunk of a token stream: after Decode, DocLens and
// IDs hold its documents.
type TokenChunk struct {
	// Offset is the chunk's byte offset in the file, Bytes its size.
	Offset, Bytes int64
	// DocSeq is the 0-based ordinal of the chunk's first document in the
	// corpus.
	DocSeq  int64
	DocLens []int32
	IDs     []uint32

	s   *TokenStream
	raw []byte
	crc uint32
}

// NextChunk reads the next chunk into c, which it reuses, and returns false
// after the last one.
func (s *TokenStream) NextChunk(c *TokenChunk) (bool, error) {
	if s.off >= s.end {
		return false, nil
	}
	var head [8]byte
	if s.end-s.off < int64(len(head)) {
		return false, s.errorf(s.off, "chunk header runs into the trailer")
	}
	if _, err := s.f.ReadAt(head[:], s.off); err != nil {
		return false, fmt.Errorf("%s: %w", s.Path, err)
	}
	n := int64(binary.LittleEndian.Uint32(head[0:]))
	if n > maxChunk || n > s.end-s.off-8 {
		return false, s.errorf(s.off, "chunk of %d bytes runs past the chunks' end", n)
	}
	if int64(cap(c.raw)) < n {
		c.raw = make([]byte, n)
	}
	c.raw = c.raw[:n]
	if _, err := s.f.ReadAt(c.raw, s.off+8); err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		return false, fmt.Errorf("%s: %w", s.Path, err)
	}
	if s.hash != nil && s.hashed == s.off {
		s.hash.Write(head[:])
		s.hash.Write(c.raw)
		s.hashed += n + 8
	}
	c.s, c.crc = s, binary.LittleEndian.Uint32(head[4:])
	c.Offset, c.Bytes, c.DocSeq = s.off, n+8, s.docSeq
	docs, k := binary.Uvarint(c.raw)
	if k <= 0 || docs > uint64(n) {
		return false, s.errorf(s.off, "bad document count")
	}
	s.docSeq += int64(docs)
	s.off += n + 8
	return true, nil
}

// Decode checks the chunk's checksum and decodes its documents into
// DocLens and IDs, checking every id against the dictionary.
func (c *TokenChunk) Decode() error {
	s, b := c.s, c.raw
	if s == nil {
		return errors.New("formats: TokenChunk.Decode before NextChunk")
	}
	if crc32.Checksum(b, castagnoli) != c.crc {
		return s.errorf(c.Offset, "the chunk's checksum does not match")
	}
	r := varints{b: b}
	docs, _ := r.next()
	nids, ok := r.next()
	if !ok || nids > uint64(len(b)) || docs > uint64(len(b)) {
		return s.errorf(c.Offset, "bad id count")
	}
	c.DocLens, c.IDs = c.DocLens[:0], c.IDs[:0]
	total := uint64(0)
	for range docs {
		n, ok := r.next()
		if !ok || n > nids {
			return s.errorf(c.Offset, "bad document length")
		}
		total += n
		c.DocLens = append(c.DocLens, int32(n))
	}
	if total != nids {
		return s.errorf(c.Offset, "documents hold %d tokens but the chunk has %d ids", total, nids)
	}
	if uint64(cap(c.IDs)) < nids {
		c.IDs = make([]uint32, 0, nids)
	}
	ids := c.IDs[:nids]
	limit := uint64(s.DictLen)
	for i := 0; i < len(ids); i++ {
		// decodeIDs takes the ids of one to three bytes while eight bytes
		// remain, nearly all of them; next takes any other, one at a time.
		n, bad := decodeIDs(ids[i:], b, &r.p, limit)
		if i += n; bad {
			return s.errorf(c.Offset, "id %d outside the dictionary of %d tokens", ids[i], limit)
		}
		if i == len(ids) {
			break
		}
		v, ok := r.next()
		if !ok {
			return s.errorf(c.Offset, "id %d of the chunk is cut short", i)
		}
		if v >= limit {
			return s.errorf(c.Offset, "id %d outside the dictionary of %d tokens", v, limit)
		}
		ids[i] = uint32(v)
	}
	if r.p != len(b) {
		return s.errorf(c.Offset, "%d stray bytes after the ids", len(b)-r.p)
	}
	c.IDs = ids
	return nil
}

// decodeIDs decodes ids from b at *p eight bytes at a time, while eight
// remain and each id takes one to three of them, and returns how many it
// decoded, or the index of an id not below limit and true. The ends of the
// ids among eight bytes are the bytes whose high bit is clear, all found at
// once: the ids of a word are decoded side by side, where decoding them one
// at a time made each wait for the length of the one before.
func decodeIDs(ids []uint32, b []byte, p *int, limit uint64) (int, bool) {
	// With BMI2, decodeIDsBMI2 keeps the loop's state in registers, which
	// the compiler spilled, and gathers an id's 7-bit groups with one PEXT:
	// count on bench-raw, one thread, 210-212 samples here against 365-389
	// of about 12 500 (perf record, two runs each).
	if hasBMI2 {
		n, q, bad := decodeIDsBMI2(ids, b, *p, limit)
		*p = q
		return n, bad
	}
	i, q := 0, *p
	for i < len(ids) && q+8 <= len(b) {
		x := binary.LittleEndian.Uint64(b[q:])
		ends := ^x & 0x8080808080808080 // the bytes with the high bit clear
		start := uint(0)                // the bit where the next id starts
		for ends != 0 && i < len(ids) {
			end := uint(bits.TrailingZeros64(ends)) + 1
			if end-start > 24 {
				// An id of four or five bytes: left to the caller.
				*p = q + int(start/8)
				return i, false
			}
			ends &= ends - 1
			w := x >> start
			v := w&0x7f | w>>1&(0x7f<<7) | w>>2&(0x7f<<14)
			v &= 1<<((end-start)/8*7) - 1
			if v >= limit {
				*p = q + int(start/8)
				ids[i] = uint32(v)
				return i, true
			}
			ids[i] = uint32(v)
			i++
			start = end
		}
		if start == 0 {
			// Eight bytes without an id's end: left to the caller.
			break
		}
		q += int(start / 8)
	}
	*p = q
	return i, false
}

// b2u32 is 1 for true and 0 for false, without a branch.
func b2u32(b bool) uint32 {
	var x uint32
	if b {
		x = 1
	}
	return x
}

// uvarintLen is the length of x as a uvarint.
func uvarintLen(x uint64) int {
	return 1 + (bits.Len64(x|1)-1)/7
}
