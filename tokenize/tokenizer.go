package tokenize

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/maphash"
	"math/bits"
	"unicode"
	"unicode/utf8"
	"unsafe"

	"github.com/clipperhouse/uax29/v2/words"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"

	"github.com/pwe-project/pwe/internal/cacheline"
)

// ErrOptions is wrapped by the errors of [Options.Validate].
var ErrOptions = errors.New("tokenize: invalid options")

// Options configure a [Tokenizer]. The zero value folds case and keeps every
// segment that holds a letter or a number.
type Options struct {
	// KeepCase turns Unicode case folding off.
	KeepCase bool
	// MinLength drops tokens shorter than this many runes, counted after
	// folding. Zero means no minimum.
	MinLength int
	// Stopwords are dropped. They are compared with tokens after folding, and
	// are themselves folded unless KeepCase is set, so that a list read with
	// [ReadStopwords] works whatever the case of its entries. With KeepCase the
	// comparison is exact.
	Stopwords map[string]struct{}
}

// Validate reports options that make no sense.
func (o Options) Validate() error {
	if o.MinLength < 0 {
		return fmt.Errorf("%w: MinLength %d is negative", ErrOptions, o.MinLength)
	}
	return nil
}

// Stats count what a [Tokenizer] saw.
type Stats struct {
	Docs   int64 // documents passed to Tokens
	Tokens int64 // tokens returned
	// Dropped counts segments that were neither returned nor white space:
	// punctuation and symbols (no letter or number), stop words, and tokens
	// shorter than MinLength.
	Dropped int64
	// InvalidUTF8 counts bytes of malformed UTF-8, each replaced by U+FFFD.
	InvalidUTF8 int64
}

// Add adds o to s, to merge the statistics of several tokenizers.
func (s *Stats) Add(o Stats) {
	s.Docs += o.Docs
	s.Tokens += o.Tokens
	s.Dropped += o.Dropped
	s.InvalidUTF8 += o.InvalidUTF8
}

// A Tokenizer splits documents into tokens.
//
// A token is a UAX #29 word segment that contains at least one rune that is a
// letter or a number (unicode.IsLetter or unicode.IsNumber: "x2", "2", "½"
// and "日" are kept, "--", "..." and "___" are not), case-folded with
// golang.org/x/text/cases.Fold unless Options.KeepCase is set (so "Straße"
// becomes "strasse"; Fold applies no language-specific rules, so "İ" becomes
// "i" followed by U+0307 and "ı" stays as it is), and composed to Unicode
// normalization form C, so that an accented letter written as a letter and
// a combining accent (as macOS and some web pages write it) gives the same
// token as the precomposed letter. Folding also writes the typographic
// apostrophe (U+2019) as ', so that "don’t" and "don't" are one token.
//
// Malformed UTF-8 is replaced before segmentation: every byte that
// utf8.DecodeRune reports as invalid (width 1) becomes one U+FFFD, as a Go
// range loop over a string would do. The replacement character is a symbol,
// so it splits words and is never part of a token: "ab\xffcd" gives "ab" and
// "cd".
//
// A Tokenizer keeps scratch buffers and is not safe for concurrent use; make
// one per goroutine and merge their [Stats].
type Tokenizer struct {
	_        cacheline.Pad
	foldCase bool
	minLen   int
	stop     map[string]struct{}

	iter *words.Iterator[[]byte]
	memo *memo // what segments met became (memoSegment)
	// ringSize is the size of the memo's ring: memoRing, less in tests.
	ringSize int
	arena    []byte   // folded tokens
	norm     normBufs // composeNFC's buffers
	valid    []byte   // the document with malformed UTF-8 replaced

	stats Stats
	_     cacheline.Pad
}

// New returns a Tokenizer. It panics if opt is invalid: check options that
// come from users with [Options.Validate] first.
func New(opt Options) *Tokenizer {
	if err := opt.Validate(); err != nil {
		panic(err)
	}
	t := &Tokenizer{
		foldCase: !opt.KeepCase,
		minLen:   opt.MinLength,
		ringSize: memoRing,
		iter:     words.FromBytes(nil),
	}
	if len(opt.Stopwords) > 0 {
		t.stop = make(map[string]struct{}, len(opt.Stopwords))
		for w := range opt.Stopwords {
			t.stop[Normalize(w, opt)] = struct{}{}
		}
	}
	return t
}

// Stats returns the counts accumulated since the Tokenizer was made.
func (t *Tokenizer) Stats() Stats { return t.stats }

// Tokens appends the tokens of doc to dst and returns the extended slice.
// The tokens alias doc or the Tokenizer's scratch space, and stay valid until
// the next call of Tokens or Release; copy them to keep them longer.
func (t *Tokenizer) Tokens(dst [][]byte, doc []byte) [][]byte {
	t.Release()
	return t.AppendTokens(dst, doc)
}

// AppendTokens is Tokens, except that the tokens of earlier calls of
// AppendTokens stay valid too, until Tokens or Release is called: the
// tokens of many documents can be gathered and counted together.
func (t *Tokenizer) AppendTokens(dst [][]byte, doc []byte) [][]byte {
	t.stats.Docs++
	return t.appendTokens(dst, doc)
}

// AppendDocs is AppendTokens for the documents that lie back to back in
// text from start, document k ending at ends[k]: it appends their tokens
// to dst and the number of each one's tokens to lens. A run of ASCII
// documents is read as one text, with breaks at their ends that no token
// or join crosses, so that short documents, such as the lines of plain
// text, cost no call and no partial block each.
func (t *Tokenizer) AppendDocs(dst [][]byte, text []byte, start int, ends []int, lens []int32) ([][]byte, []int32) {
	t.stats.Docs += int64(len(ends))
	for len(ends) > 0 {
		end := ends[len(ends)-1]
		p := start + asciiPrefix(text[start:end])
		if p == end {
			return t.asciiDocTokens(dst, text[:end], start, ends, lens)
		}
		// The documents before the one that holds the non-ASCII byte at
		// p, together; then that one alone.
		k := 0
		for ends[k] <= p {
			k++
		}
		if k > 0 {
			dst, lens = t.asciiDocTokens(dst, text[:ends[k-1]], start, ends[:k], lens)
			start = ends[k-1]
		}
		n := len(dst)
		dst = t.appendTokens(dst, text[start:ends[k]:ends[k]])
		lens = append(lens, int32(len(dst)-n))
		start, ends = ends[k], ends[k+1:]
	}
	return dst, lens
}

// PieceBytes is the length past which EachPiece cuts a document into
// pieces.
const PieceBytes = 1 << 20

// EachPiece tokenizes doc as Tokens does, but a long one a piece of about
// PieceBytes at a time: fn gets the tokens of each piece in order, valid
// until it returns, and its error ends the document. A piece ends where a
// segment starts whatever surrounds it (splitsBefore), so the pieces'
// tokens are exactly the document's, which need not all be held at once:
// as a token slice each takes 24 bytes, and a single line may be 64 MiB. dst
// is scratch space for the tokens, returned for reuse. EachPiece counts
// one document.
func (t *Tokenizer) EachPiece(dst [][]byte, doc []byte, fn func(tokens [][]byte) error) ([][]byte, error) {
	return t.eachPiece(dst, doc, PieceBytes, fn)
}

// eachPiece is EachPiece with pieces of at least n bytes.
func (t *Tokenizer) eachPiece(dst [][]byte, doc []byte, n int, fn func(tokens [][]byte) error) ([][]byte, error) {
	t.stats.Docs++
	for i := 0; ; {
		end := nextPiece(doc, i, n)
		t.Release()
		dst = t.appendTokens(dst[:0], doc[i:end])
		if err := fn(dst); err != nil || end == len(doc) {
			return dst, err
		}
		i = end
	}
}

// nextPiece returns the end of the piece of doc that starts at i: the first
// split point (splitsBefore) at least n bytes on, or the end of doc.
func nextPiece(doc []byte, i, n int) int {
	for k := i + n; k < len(doc); k++ {
		if splitsBefore(doc, k) {
			return k
		}
	}
	return len(doc)
}

// appendTokens is AppendTokens without counting a document.
func (t *Tokenizer) appendTokens(dst [][]byte, doc []byte) [][]byte {
	p := asciiPrefix(doc)
	if p == len(doc) {
		return t.asciiTokens(dst, doc)
	}
	if !utf8.Valid(doc[p:]) {
		doc = t.replaceInvalid(doc, p)
	}
	// Segment the ASCII stretches by hand and give the library only what lies
	// between the last safe split point before a non-ASCII byte and the first
	// one after it.
	i := 0
	for {
		if p == len(doc) {
			return t.asciiTokens(dst, doc[i:])
		}
		s := p - 1
		for s > i && !splitsBefore(doc, s) {
			s--
		}
		if s > i {
			dst = t.asciiTokens(dst, doc[i:s])
		} else {
			s = i
		}
		e := p + 1
		for e < len(doc) && (doc[e] >= utf8.RuneSelf || !splitsBefore(doc, e)) {
			e++
		}
		dst = t.unicodeTokens(dst, doc[s:e])
		i = e
		p = e + asciiPrefix(doc[e:])
	}
}

// Release lets the Tokenizer reuse the space of the tokens it returned.
func (t *Tokenizer) Release() {
	t.arena, t.valid = t.arena[:0], t.valid[:0]
}

// replaceInvalid appends doc, whose first p bytes are ASCII, to t.valid with
// every invalid byte replaced by U+FFFD, and returns the copy.
func (t *Tokenizer) replaceInvalid(doc []byte, p int) []byte {
	start := len(t.valid)
	out := append(t.valid, doc[:p]...)
	for i := p; i < len(doc); {
		r, n := utf8.DecodeRune(doc[i:])
		if r == utf8.RuneError && n == 1 {
			out = utf8.AppendRune(out, utf8.RuneError)
			t.stats.InvalidUTF8++
		} else {
			out = append(out, doc[i:i+n]...)
		}
		i += n
	}
	t.valid = out
	return out[start:]
}

// asciiTokens appends the tokens of an ASCII text. It reads the text 64
// bytes at a time as bitmasks of the bytes of each class (asciiMasks): the
// bytes that belong to words, word runes and the marks that join two
// letters or two digits (WB6, WB7, WB11, WB12), make runs of set bits, one
// per token, found without a branch per byte.
func (t *Tokenizer) asciiTokens(dst [][]byte, text []byte) [][]byte {
	dst, _ = t.asciiDocTokens(dst, text, 0, nil, nil)
	return dst
}

// asciiDocTokens is asciiTokens for the documents that lie back to back in
// text from start: document k ends at docEnds[k], the last one at
// len(text) (all of text from start is one document where docEnds is
// empty). A
// document's end is a break that no token or join crosses (docBits); it
// appends the number of each document's tokens to lens. A document of a
// line of plain text is about 45 bytes on bench-raw, 1.6 M of them: read
// together, they take a third of the blocks and none of the calls.
func (t *Tokenizer) asciiDocTokens(dst [][]byte, text []byte, start int, docEnds []int, lens []int32) ([][]byte, []int32) {
	var kept, dropped int64
	foldCase, minLen, stop := t.foldCase, t.minLen, t.stop
	cur := asciiMasks(text[start:])
	// The documents' starts after the first, as bits of the blocks (the
	// text from start is read in blocks of 64 bytes from there).
	var bounds docBits
	if len(docEnds) > 1 {
		bounds = docBits{ends: docEnds[:len(docEnds)-1], at: start}
	}
	curB := bounds.next()
	// Where the current document's tokens start in dst, and where it ends.
	first, docEnd := len(dst), len(text)
	if len(docEnds) > 0 {
		docEnd = docEnds[0]
	}
	doc := 0
	textData := unsafe.Pointer(unsafe.SliceData(text))
	var prevWord uint64       // the bytes of words in the block before
	open, inToken := 0, false // where the current token starts, if any
	for base := start; base < len(text); base += 64 {
		var next blockMasks
		if base+64 < len(text) {
			next = asciiMasks(text[base+64:])
		}
		nextB := bounds.next()
		// A byte between two word runes, itself neither a word rune nor
		// white space, may join them, if both are in its document.
		word := cur.word
		if cand := (word<<1 | prevWord>>63) & (word>>1 | next.word<<63) &^ (word | cur.white) & cur.valid &^ (curB | curB>>1 | nextB<<63); cand != 0 {
			word |= joins(text, base, cand)
		}
		// Whether the next block starts inside a word: with a word rune, or
		// with a mark that joins the word rune before it to the one after,
		// and not with a document.
		nextWord := next.word & 1
		if next.valid&^(next.word|next.white)&1 != 0 && cur.word>>63 != 0 && next.word&2 != 0 && nextB&3 == 0 {
			nextWord = joins(text, base+64, 1)
		}
		nextWord &^= nextB
		dropped += int64(bits.OnesCount64(cur.valid &^ (word | cur.white)))
		starts := word&^(word<<1|prevWord>>63) | word&curB
		ends := word&^(word>>1|nextWord<<63) | word&(curB>>1)
		for {
			if !inToken {
				if starts == 0 {
					break
				}
				open = base + bits.TrailingZeros64(starts)
				starts &= starts - 1
				inToken = true
			}
			if ends == 0 {
				break // the token runs into the next block
			}
			end := base + bits.TrailingZeros64(ends) + 1
			ends &= ends - 1
			inToken = false
			// Within text: its bounds checks and capacity cost 22
			// instructions a token, most of them spills of registers.
			tok := unsafe.Slice((*byte)(unsafe.Add(textData, open)), end-open)
			// A token's first byte is a word rune; only underscores can
			// make one without a letter or digit.
			if tok[0] == '_' && !hasLetterOrDigit(tok) || len(tok) < minLen {
				dropped++
				continue
			}
			if foldCase && anyUpper(tok, cur.upper, base, open) {
				tok = t.lowerASCII(tok)
			}
			if stop != nil {
				if _, ok := stop[string(tok)]; ok {
					dropped++
					continue
				}
			}
			for open >= docEnd {
				lens = append(lens, int32(len(dst)-first))
				first = len(dst)
				doc++
				docEnd = docEnds[doc]
			}
			kept++
			dst = append(dst, tok)
		}
		prevWord = word
		cur, curB = next, nextB
	}
	// The documents from the last token's on.
	for ; doc < len(docEnds); doc++ {
		lens = append(lens, int32(len(dst)-first))
		first = len(dst)
	}
	t.stats.Tokens += kept
	t.stats.Dropped += dropped
	return dst, lens
}

// docBits gives, block after block of 64 bytes from at, the bits of the
// positions where a document starts: its ends, those of all documents but
// the last, in increasing order.
type docBits struct {
	ends []int
	at   int
}

func (d *docBits) next() uint64 {
	var b uint64
	for len(d.ends) > 0 && d.ends[0] < d.at+64 {
		b |= 1 << uint(d.ends[0]-d.at)
		d.ends = d.ends[1:]
	}
	d.at += 64
	return b
}

// blockMasks marks the bytes of up to 64 bytes of ASCII text by class, the
// first byte at bit 0.
type blockMasks struct {
	word  uint64 // letters, digits and underscores (clWordRune)
	upper uint64
	white uint64 // space and clWhite: neither words nor punctuation
	valid uint64 // the bytes there are
}

// asciiMasks returns the masks of the first 64 bytes of text, or all of it
// if shorter. Where there is a blockClasses, it reads 64 bytes: those of
// text where its capacity holds them, the bits past the end dropped, or
// else a copy, whose zero bytes past the end are in no class.
func asciiMasks(text []byte) blockMasks {
	if !haveBlockClasses {
		return asciiMasksGo(text)
	}
	n := min(len(text), 64)
	valid := uint64(1)<<n - 1 // all ones for n = 64
	if cap(text) >= 64 {
		word, upper, white := blockClasses(&text[:64][0])
		return blockMasks{word: word & valid, upper: upper & valid, white: white & valid, valid: valid}
	}
	var block [64]byte
	copy(block[:], text[:n])
	word, upper, white := blockClasses(&block[0])
	return blockMasks{word: word, upper: upper, white: white, valid: valid}
}

// asciiMasksGo is asciiMasks in Go, eight bytes at a time.
func asciiMasksGo(text []byte) blockMasks {
	n := min(len(text), 64)
	var word, upper, white uint64
	for i := 0; i < n; i += 8 {
		var x uint64
		if rest := text[i:cap(text)]; len(rest) >= 8 {
			// Past n, the bytes up to the capacity are read and dropped.
			x = binary.LittleEndian.Uint64(rest)
			if n-i < 8 {
				x &= 1<<(8*(n-i)) - 1
			}
		} else {
			for k := n - 1; k >= i; k-- {
				x = x<<8 | uint64(text[k])
			}
		}
		// Zero bytes, past the end, belong to no class.
		letter := byteRange(x|0x2020202020202020, 'a', 'z')
		up := byteRange(x, 'A', 'Z')
		w := letter | byteRange(x, '0', '9') | byteRange(x, '_', '_')
		wh := byteRange(x, ' ', ' ') | byteRange(x, '\t', '\r')
		word |= highBitMask(w) << i
		upper |= highBitMask(up) << i
		white |= highBitMask(wh) << i
	}
	return blockMasks{word: word, upper: upper, white: white, valid: 1<<n - 1} // all ones for n = 64
}

// highBitMask gathers the high bits of the eight bytes of x, and nothing
// else, into the low eight bits, the first byte's lowest. The multiplier
// moves byte i's bit to bit 56+i; no two of the products' terms meet, so
// nothing carries.
func highBitMask(x uint64) uint64 {
	return (x >> 7) * 0x0102040810204080 >> 56
}

// joins returns those of the candidate bytes of text, by their bits from
// base, that join the word runes on either side (joinsASCII).
func joins(text []byte, base int, cand uint64) uint64 {
	var j uint64
	for cand != 0 {
		k := base + bits.TrailingZeros64(cand)
		bit := cand & -cand
		cand &= cand - 1
		if joinsASCII(asciiClass[text[k-1]], asciiClass[text[k]], asciiClass[text[k+1]]) {
			j |= bit
		}
	}
	return j
}

// hasLetterOrDigit reports whether an ASCII token has a letter or digit.
func hasLetterOrDigit(tok []byte) bool {
	for _, c := range tok {
		if asciiClass[c]&(clLetter|clDigit) != 0 {
			return true
		}
	}
	return false
}

// anyUpper reports whether tok, which starts at open and ends in the block
// at base whose upper-case letters are upper, has an upper-case letter.
func anyUpper(tok []byte, upper uint64, base, open int) bool {
	if open < base {
		for _, c := range tok {
			if asciiClass[c]&clUpper != 0 {
				return true
			}
		}
		return false
	}
	return upper>>(open-base)&(1<<len(tok)-1) != 0
}

// lowerASCII returns a lower-case copy of tok in the arena.
func (t *Tokenizer) lowerASCII(tok []byte) []byte {
	start := len(t.arena)
	t.arena = append(t.arena, tok...)
	out := t.arena[start:]
	for k, c := range out {
		out[k] = asciiLower[c]
	}
	return out[:len(out):len(out)]
}

// unicodeTokens appends the tokens of a valid UTF-8 text.
func (t *Tokenizer) unicodeTokens(dst [][]byte, text []byte) [][]byte {
	t.iter.SetText(text)
	for t.iter.Next() {
		seg := t.iter.Value()
		var tok []byte
		var o outcome
		if len(seg) <= memoMaxLen && asciiPrefix(seg) < len(seg) {
			tok, o = t.memoSegment(seg)
		} else {
			tok, o = t.segment(seg)
		}
		switch o {
		case dropCounted:
			t.stats.Dropped++
			continue
		case dropSpace:
			continue
		}
		t.stats.Tokens++
		dst = append(dst, tok)
	}
	return dst
}

// An outcome is what becomes of a segment: a token, or dropped, counted
// among the dropped segments unless it is only white space.
type outcome uint8

const (
	keep outcome = iota
	dropCounted
	dropSpace
)

// segment returns the token that seg, a segment of the library's, makes,
// in seg or the arena, or why it makes none.
func (t *Tokenizer) segment(seg []byte) ([]byte, outcome) {
	tok := seg
	word, space, ascii, upper := false, true, true, false
	var maxRune rune
	for k := 0; k < len(tok); {
		c := tok[k]
		if c < utf8.RuneSelf {
			cl := asciiClass[c]
			word = word || cl&(clLetter|clDigit) != 0
			space = space && cl&(clSpace|clWhite) != 0
			upper = upper || cl&clUpper != 0
			k++
			continue
		}
		r, n := utf8.DecodeRune(tok[k:])
		word = word || unicode.IsLetter(r) || unicode.IsNumber(r)
		space = space && unicode.IsSpace(r)
		ascii = false
		maxRune = max(maxRune, r)
		k += n
	}
	if !word {
		if !space {
			return nil, dropCounted
		}
		return nil, dropSpace
	}
	switch {
	case ascii && upper && t.foldCase:
		tok = t.lowerASCII(tok)
	case !ascii:
		folded := tok
		if t.foldCase {
			folded = t.foldUnicode(tok)
		}
		// Text below U+0300 (Latin, accented letters included) is
		// composed already, unless folding decomposed it (ǰ folds
		// to j and a combining caron); the apostrophe, U+2019, is
		// above.
		if maxRune >= 0x300 || len(folded) != len(tok) || &folded[0] != &tok[0] {
			folded = t.compose(folded)
		}
		tok = folded
	}
	if t.minLen > 0 && utf8.RuneCount(tok) < t.minLen {
		return nil, dropCounted
	}
	if t.stop != nil {
		if _, ok := t.stop[string(tok)]; ok {
			return nil, dropCounted
		}
	}
	return tok, keep
}

// The memo of segments: folding, composing and classifying a segment with
// non-ASCII letters took 450-500 ns of the 680 a token cost on Cyrillic
// text, and most segments are ones met before, so a Tokenizer remembers
// what the last segments it met became, in a direct-mapped table indexed
// by a hash of their bytes, whose bytes are kept in a ring. It is made when
// a Tokenizer first meets non-ASCII text, holds no pointers and makes no
// garbage (strings made for each entry had raised tokenize's peak memory
// by 8 MB, the collector's room for them), and takes 896 KiB. BENCHMARKS.md,
// session 43, has the sizes tried.
const (
	memoBits = 14
	memoRing = 1 << 19
	// memoMaxLen is the length of the longest segment memoized: longer
	// ones are rare and seldom repeat.
	memoMaxLen = 64
)

type memo struct {
	entries [1 << memoBits]memoEntry
	ring    []byte // memoRing bytes, fewer in tests
	// written is the number of bytes written to the ring, or passed over
	// at its end, since it was made.
	written uint64
}

// A memoEntry is a segment and what it became: the segment's bytes, then
// its token's unless the token is the segment itself (tokLen 0: a token is
// never empty), are in the ring at pos (counted as written is), unless the
// ring has since come round again.
type memoEntry struct {
	hash    uint64
	pos     uint64
	segLen  uint8
	outcome outcome
	tokLen  uint16
}

// put writes a and then b to the ring, in one piece, and returns their
// position.
func (m *memo) put(a, b []byte) uint64 {
	n, size := uint64(len(a)+len(b)), uint64(len(m.ring))
	if off := m.written % size; off+n > size {
		m.written += size - off
	}
	pos := m.written
	off := pos % size
	copy(m.ring[off:], a)
	copy(m.ring[off+uint64(len(a)):], b)
	m.written += n
	return pos
}

// bytes returns the n bytes of the ring at pos, if they are still there.
func (m *memo) bytes(pos uint64, n int) ([]byte, bool) {
	size := uint64(len(m.ring))
	if m.written-pos > size {
		return nil, false
	}
	off := pos % size
	return m.ring[off : off+uint64(n)], true
}

// memoSegment is segment for a segment of at most memoMaxLen bytes.
func (t *Tokenizer) memoSegment(seg []byte) ([]byte, outcome) {
	h := maphash.Bytes(memoSeed, seg)
	if t.memo == nil {
		t.memo = &memo{ring: make([]byte, t.ringSize)}
	}
	m := t.memo
	e := &m.entries[h>>(64-memoBits)]
	if e.hash == h && int(e.segLen) == len(seg) {
		if data, ok := m.bytes(e.pos, len(seg)+int(e.tokLen)); ok && string(data[:len(seg)]) == string(seg) {
			switch {
			case e.outcome != keep:
				return nil, e.outcome
			case e.tokLen == 0:
				return seg, keep
			}
			start := len(t.arena)
			t.arena = append(t.arena, data[len(seg):]...)
			return t.arena[start:len(t.arena):len(t.arena)], keep
		}
	}
	tok, o := t.segment(seg)
	var stored []byte // the token, unless it is seg itself
	if o == keep && (len(tok) != len(seg) || &tok[0] != &seg[0]) {
		stored = tok
	}
	*e = memoEntry{hash: h, pos: m.put(seg, stored), segLen: uint8(len(seg)), outcome: o, tokLen: uint16(len(stored))}
	return tok, o
}

// memoSeed seeds the memo's hash; what a segment becomes does not depend
// on it.
var memoSeed = maphash.MakeSeed()

// foldUnicode returns tok case-folded, in the arena unless it was already
// folded.
func (t *Tokenizer) foldUnicode(tok []byte) []byte {
	n, err := fold.Span(tok, true)
	if n == len(tok) && err == nil {
		return tok
	}
	start := len(t.arena)
	t.arena = append(t.arena, tok[:n]...)
	// Full case folding turns one rune into at most three, and at most
	// triples the number of bytes (U+0390 becomes three two-byte runes), so
	// one call normally does; the loop only guards against the transformer
	// asking for more room than that.
	for src := tok[n:]; len(src) > 0; {
		w := len(t.arena)
		t.arena = growLen(t.arena, 3*len(src)+utf8.UTFMax)
		nDst, nSrc, err := fold.Transform(t.arena[w:], src, true)
		t.arena = t.arena[:w+nDst]
		src = src[nSrc:]
		if err != nil && err != transform.ErrShortDst {
			panic(fmt.Sprintf("tokenize: case folding valid UTF-8: %v", err))
		}
	}
	out := t.arena[start:]
	foldCherokee(out)
	return out[:len(out):len(out)]
}

// compose returns tok in Unicode normalization form C, and where case is
// folded with its typographic apostrophes as ', in the arena unless it is
// so already: "cafe\u0301" (e and a combining acute accent, as macOS and
// some web pages write it) and "café" are one token, and so are "don’t"
// and "don't".
func (t *Tokenizer) compose(tok []byte) []byte {
	apostrophe := t.foldCase && bytes.Contains(tok, []byte(rightQuote))
	if !apostrophe && norm.NFC.QuickSpan(tok) == len(tok) {
		return tok
	}
	start := len(t.arena)
	t.arena = composeNFC(t.arena, tok, &t.norm)
	if apostrophe {
		out := t.arena[start:]
		w := 0
		for i := 0; i < len(out); w++ {
			if bytes.HasPrefix(out[i:], []byte(rightQuote)) {
				out[w] = '\''
				i += len(rightQuote)
				continue
			}
			out[w] = out[i]
			i++
		}
		t.arena = t.arena[:start+w]
	}
	out := t.arena[start:]
	return out[:len(out):len(out)]
}

// growLen extends b by n bytes of unspecified content.
func growLen(b []byte, n int) []byte {
	if cap(b)-len(b) < n {
		nb := make([]byte, len(b), 2*cap(b)+n)
		copy(nb, b)
		b = nb
	}
	return b[:len(b)+n]
}
