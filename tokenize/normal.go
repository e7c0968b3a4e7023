package tokenize

import (
	"bytes"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// fold is stateless and safe for concurrent use. It folds Cherokee capital
// letters to the small ones, which fold to the capitals
// (golang.org/issue/46101); [foldCherokee] mends that.
var fold = cases.Fold()

// Rules is the generation of the rules that make tokens, recorded with
// every vocabulary. TestRulesFingerprint fails when the tokens of any code
// point change, so that Rules is raised with them. Tokens depend too on the
// version of the Unicode tables of golang.org/x/text and unicode, which
// the Go version chooses (15.0.0 with Go 1.26, 17.0.0 with Go 1.27: letters
// of Unicode 16 and 17, which the segmenter knows, are letters and fold
// only with the later one); so count checks every token of a vocabulary
// it reads text with, whatever its rules ([Normalize] keeps a token). The
// generations:
//
//   - 0: before the rules were recorded;
//   - 1: tokens composed to Unicode normalization form C, and where case is
//     folded U+2019 written as an apostrophe and Cherokee letters folded to
//     the capitals, as Unicode's CaseFolding.txt has them.
const Rules = 1

// Unicode is the version of the Unicode tables that fold and compose
// tokens and tell letters and digits (unicode.Version; TestRulesFingerprint
// checks that golang.org/x/text's are the same), recorded with the rules.
const Unicode = unicode.Version

// cherokeeCapital returns the capital Cherokee letter that the small letter
// r folds to, or r. The pairs have runes of the same UTF-8 length.
func cherokeeCapital(r rune) rune {
	switch {
	case r >= 0xAB70 && r <= 0xABBF:
		return r - 0xAB70 + 0x13A0
	case r >= 0x13F8 && r <= 0x13FD:
		return r - 8
	}
	return r
}

// foldCherokee rewrites in place the small Cherokee letters of folded text,
// which fold gave for capitals, as the capitals. Their UTF-8 forms start
// with 0xE1 (U+13F8..U+13FD) or 0xEA (U+AB70..U+ABBF).
func foldCherokee(b []byte) {
	if bytes.IndexByte(b, 0xE1) < 0 && bytes.IndexByte(b, 0xEA) < 0 {
		return
	}
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if c := cherokeeCapital(r); c != r {
			utf8.EncodeRune(b[i:], c)
		}
		i += n
	}
}

// foldString is fold.String with Cherokee mended.
func foldString(s string) string {
	return strings.Map(cherokeeCapital, fold.String(s))
}

// rightQuote is U+2019, the typographic apostrophe (don’t).
const rightQuote = "\u2019"

// normBufs are composeNFC's buffers.
type normBufs struct{ nfc, nfdA, nfdB []byte }

// composeNFC appends src in Unicode normalization form C to dst. It
// normalizes src alone, into b, and copies it: norm's Append would take
// dst's last characters for the start of the text to normalize, and change
// them where src starts with a character that combines with them (U+11A8
// after a Hangul syllable, an accent after a letter).
//
// x/text composes a starter and a mark by looking the pair up by their low
// 16 bits (golang.org/issue/81028), so that U+10041 and an acute accent
// become Á, and Hebrew gimel and a dot above a Todhri letter. A segment (a
// starter and the marks that follow it) whose composition does not
// decompose to the segment's own decomposition is kept decomposed: the
// text is then in one form whichever way it came, though not always the
// composed one. Every composite with a component beyond the BMP is beyond
// it too (Kaithi, Chakma, Grantha, Todhri, ...), so a false composition
// has a code point beyond the BMP in src or in its composition, and
// without one the check is passed over (text from macOS, all decomposed,
// would take half as long again).
func composeNFC(dst, src []byte, b *normBufs) []byte {
	b.nfc = norm.NFC.Append(b.nfc[:0], src...)
	if !beyondBMP(src) && !beyondBMP(b.nfc) || b.equivalent(b.nfc, src) {
		return append(dst, b.nfc...)
	}
	for len(src) > 0 {
		n := norm.NFC.NextBoundary(src, true)
		if n <= 0 {
			n = len(src)
		}
		seg := src[:n]
		src = src[n:]
		b.nfc = norm.NFC.Append(b.nfc[:0], seg...)
		if b.equivalent(b.nfc, seg) {
			dst = append(dst, b.nfc...)
		} else {
			dst = append(dst, b.nfdB...) // seg's decomposition
		}
	}
	return dst
}

// beyondBMP reports whether UTF-8 text has a code point above U+FFFF,
// whose encoding starts with a byte from 0xF0.
func beyondBMP(b []byte) bool {
	for _, c := range b {
		if c >= 0xF0 {
			return true
		}
	}
	return false
}

// equivalent reports whether x and y have the same canonical
// decomposition, which it leaves in b.nfdA and b.nfdB.
func (b *normBufs) equivalent(x, y []byte) bool {
	b.nfdA = norm.NFD.Append(b.nfdA[:0], x...)
	b.nfdB = norm.NFD.Append(b.nfdB[:0], y...)
	return bytes.Equal(b.nfdA, b.nfdB)
}

// Normalize returns word as a Tokenizer with opt would return it as a
// token, folded and composed: for words compared with tokens (stop words,
// or words a user names).
func Normalize(word string, opt Options) string {
	if isASCII(word) {
		if opt.KeepCase {
			return word
		}
		return strings.ToLower(word)
	}
	if !opt.KeepCase {
		word = foldString(word)
	}
	if norm.NFC.QuickSpanString(word) < len(word) {
		word = string(composeNFC(nil, []byte(word), new(normBufs)))
	}
	if !opt.KeepCase {
		word = strings.ReplaceAll(word, rightQuote, "'")
	}
	return word
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}
