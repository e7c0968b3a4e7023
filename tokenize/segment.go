package tokenize

import (
	"encoding/binary"
	"math/bits"
	"unicode"
	"unicode/utf8"

	"github.com/clipperhouse/uax29/v2/words"
)

// A SegmentFunc returns the length in bytes of the first UAX #29 word segment
// of data, which must be non-empty. The end of data is treated as the end of
// the text. Segments include white space and punctuation; concatenated, the
// segments of a text are the text itself.
type SegmentFunc func(data []byte) int

// SegmentUnicode segments any text with the uax29 library. Invalid UTF-8 is
// passed to the library as is; a Tokenizer replaces it before segmenting.
func SegmentUnicode(data []byte) int {
	n, _, err := words.SplitFunc(data, true)
	if err != nil || n <= 0 {
		// The library's split function never fails and always advances on
		// non-empty data at the end of text.
		panic("tokenize: uax29 split function did not advance")
	}
	return n
}

// SegmentASCII segments text made only of ASCII bytes. It gives the same
// segments as [SegmentUnicode] on such text; on text with non-ASCII bytes it
// treats every such byte as punctuation, which is wrong there.
func SegmentASCII(data []byte) int {
	switch c := data[0]; {
	case asciiClass[c]&clWordRune != 0:
		n, _ := asciiWordEnd(data, 0)
		return n
	case c == ' ':
		n := 1
		for n < len(data) && data[n] == ' ' {
			n++
		}
		return n
	case c == '\r' && len(data) > 1 && data[1] == '\n':
		return 2
	}
	return 1
}

// Word-boundary properties of ASCII bytes (UAX #29 table 3, as found in the
// Unicode data and checked against the library byte by byte in the tests).
// Only the distinctions the rules make between ASCII bytes are kept: the
// Newline property of VT and FF and the Double_Quote property of '"' only
// matter next to non-ASCII characters, so those bytes count as other.
const (
	clLower    = 1 << iota // a-z: ALetter
	clUpper                // A-Z: ALetter
	clDigit                // 0-9: Numeric
	clExtend               // _: ExtendNumLet
	clMidLet               // : . ': may join two letters (MidLetter, MidNumLet, Single_Quote)
	clMidNum               // , ; . ': may join two digits (MidNum, MidNumLet, Single_Quote)
	clSpace                // ' ': WSegSpace
	clWhite                // \t \n \v \f \r: not a word, and not punctuation either
	clLetter   = clLower | clUpper
	clWordRune = clLetter | clDigit | clExtend
)

var asciiClass = func() (t [256]uint8) {
	for c := 'a'; c <= 'z'; c++ {
		t[c] = clLower
		t[c-'a'+'A'] = clUpper
	}
	for c := '0'; c <= '9'; c++ {
		t[c] = clDigit
	}
	t['_'] = clExtend
	t[':'] = clMidLet
	t['.'] = clMidLet | clMidNum
	t['\''] = clMidLet | clMidNum
	t[','] = clMidNum
	t[';'] = clMidNum
	t[' '] = clSpace
	for _, c := range "\t\n\v\f\r" {
		t[c] = clWhite
	}
	return t
}()

var asciiLower = func() (t [256]byte) {
	for i := range t {
		t[i] = byte(i)
	}
	for c := 'A'; c <= 'Z'; c++ {
		t[c] = byte(c - 'A' + 'a')
	}
	return t
}()

// asciiWordEnd returns the end of the word segment of data that starts at
// i with a letter, digit or underscore, and the classes of its letters and
// digits or-ed together.
//
// Restricted to ASCII, the rules say: a word is a maximal run of letters,
// digits and underscores (WB5, WB8-WB10, WB13a, WB13b), in which one MidLetter
// or MidNumLet or single quote may sit between two letters (WB6, WB7) and one
// MidNum or MidNumLet or single quote between two digits (WB11, WB12). ASCII
// has no Extend, Format or ZWJ characters, so WB4 never applies and "the
// previous character ignoring those" is simply the previous byte. Outside
// words, spaces run together (WB3d), CR LF is one segment (WB3) and every
// other byte stands alone (WB3a, WB3b, WB999).
func asciiWordEnd(data []byte, i int) (end int, classes uint8) {
	j := i + 1
	classes = asciiClass[data[i]]
	for {
		// Eight bytes at a time while eight remain: a word's end is then
		// found without a branch per byte.
		for j+8 <= len(data) {
			// The bytes that are lower-case letters, upper-case letters,
			// digits and underscores: asciiClass's clLower, clUpper,
			// clDigit and clExtend. A non-ASCII byte is none of them, but
			// may make byteRange misread the bytes after it; they lie
			// after the word's end, which is all that is read.
			x := binary.LittleEndian.Uint64(data[j:])
			lower, upper := byteRange(x, 'a', 'z'), byteRange(x, 'A', 'Z')
			digit, under := byteRange(x, '0', '9'), byteRange(x, '_', '_')
			// Each byte's class bits, at the bottom of the byte, as in
			// asciiClass; then those of the word's bytes, or-ed together.
			cl := (lower>>7)*clLower | (upper>>7)*clUpper | (digit>>7)*clDigit | (under>>7)*clExtend
			n := 8
			if other := ^(lower | upper | digit | under) & highBits; other != 0 {
				n = bits.TrailingZeros64(other) >> 3
				cl &= (other&-other - 1) >> 7 // the bytes before the first other
			}
			cl |= cl >> 32
			cl |= cl >> 16
			cl |= cl >> 8
			classes |= uint8(cl)
			j += n
			if n < 8 {
				break
			}
		}
		for j < len(data) {
			cl := asciiClass[data[j]]
			if cl&clWordRune == 0 {
				break
			}
			classes |= cl
			j++
		}
		if j+1 >= len(data) {
			return j, classes
		}
		if next := asciiClass[data[j+1]]; joinsASCII(asciiClass[data[j-1]], asciiClass[data[j]], next) {
			classes |= next
			j += 2
			continue
		}
		return j, classes
	}
}

// joinsASCII reports whether a byte of class mid joins the bytes of
// classes prev and next on either side into one word: a MidLetter,
// MidNumLet or single quote between two letters (WB6, WB7), or a MidNum,
// MidNumLet or single quote between two digits (WB11, WB12).
func joinsASCII(prev, mid, next uint8) bool {
	return prev&clLetter != 0 && mid&clMidLet != 0 && next&clLetter != 0 ||
		prev == clDigit && mid&clMidNum != 0 && next == clDigit
}

// highBits has the high bit of every byte of a word.
const highBits = 0x8080808080808080

// byteRange marks the bytes of w that lie in [lo, hi], lo > 0 and
// hi < 0x80, by their high bits. For an ASCII byte, adding 0x80-lo sets
// the high bit when it is at least lo, and adding 0x7f-hi when it is
// above hi, and neither sum carries into the next byte. A byte from 0x80 up
// has the second sum's high bit set unless it carries, and then the
// first's is clear: it is never marked, but its carry can change the byte
// above it.
func byteRange(w uint64, lo, hi byte) uint64 {
	const ones = 0x0101010101010101
	return (w + ones*uint64(0x80-lo)) &^ (w + ones*uint64(0x7f-hi)) & highBits
}

// asciiPrefix returns the length of the longest ASCII prefix of data.
func asciiPrefix(data []byte) int {
	i := 0
	for ; i+8 <= len(data); i += 8 {
		if binary.LittleEndian.Uint64(data[i:])&highBits != 0 {
			break
		}
	}
	for ; i < len(data); i++ {
		if data[i] >= utf8.RuneSelf {
			break
		}
	}
	return i
}

// splitsBefore reports whether data[k] (ASCII) starts a segment whatever
// surrounds it, so that the text on either side can be segmented on its
// own; k > 0 and data must be valid UTF-8. Nothing joins to the right of a
// tab (WB3a, WB999), nor of an LF not preceded by CR (WB3, WB3b), nor of a space
// unless the character before is also a WSegSpace (WB3d); every WSegSpace
// character is in general category Zs. The word rules that look ahead (WB6,
// WB7b, WB12) stop at these three bytes, which are neither ignorable nor
// letters nor digits.
func splitsBefore(data []byte, k int) bool {
	switch data[k] {
	case '\t':
		return true
	case '\n':
		return data[k-1] != '\r'
	case ' ':
		prev := data[k-1]
		if prev < utf8.RuneSelf {
			return prev != ' '
		}
		r, _ := utf8.DecodeLastRune(data[:k])
		return !unicode.Is(unicode.Zs, r)
	}
	return false
}
