package tokenize

import (
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/clipperhouse/uax29/v2/words"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// This file holds slow, obviously correct implementations that the tests
// compare the fast ones with.

// segments splits data with f.
func segments(f SegmentFunc, data []byte) []string {
	var out []string
	for len(data) > 0 {
		n := f(data)
		out = append(out, string(data[:n]))
		data = data[n:]
	}
	return out
}

// librarySegments splits data with the library's own iterator, independently
// of SegmentUnicode.
func librarySegments(data string) []string {
	var out []string
	for it := words.FromString(data); it.Next(); {
		out = append(out, it.Value())
	}
	return out
}

// refTokens tokenizes doc the slow way: replace malformed UTF-8 as a range
// loop does, segment the whole document with the library, and filter.
func refTokens(opt Options, doc []byte) (toks []string, st Stats) {
	st.Docs = 1
	var valid []rune
	for i, r := range string(doc) {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRune(doc[i:]); n == 1 {
				st.InvalidUTF8++
			}
		}
		valid = append(valid, r)
	}
	stop := map[string]bool{}
	for w := range opt.Stopwords {
		stop[refNormalize(w, opt.KeepCase)] = true
	}
	for _, seg := range librarySegments(string(valid)) {
		rs := []rune(seg)
		if !slices.ContainsFunc(rs, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }) {
			if !allSpace(rs) {
				st.Dropped++
			}
			continue
		}
		seg = refNormalize(seg, opt.KeepCase)
		if utf8.RuneCountInString(seg) < opt.MinLength || stop[seg] {
			st.Dropped++
			continue
		}
		st.Tokens++
		toks = append(toks, seg)
	}
	return toks, st
}

// refNormalize folds case unless keepCase, composes (NFC), and with case
// folded writes the typographic apostrophe as '. It folds a rune at a time,
// Cherokee letters to their capitals (CaseFolding.txt) and the rest with
// cases.Fold.
func refNormalize(w string, keepCase bool) string {
	if !keepCase {
		var b strings.Builder
		for _, r := range w {
			if unicode.Is(unicode.Cherokee, r) {
				b.WriteRune(unicode.ToUpper(r))
			} else {
				b.WriteString(cases.Fold().String(string(r)))
			}
		}
		w = b.String()
	}
	w = refCompose(w)
	if !keepCase {
		w = strings.ReplaceAll(w, "\u2019", "'")
	}
	return w
}

// refCompose is normalization form C as UAX #15 defines it: the canonical
// decomposition (x/text's NFD), then each character that is not blocked
// from the last starter and makes a primary composite with it replaces the
// starter with the composite. It looks pairs up whole, unlike x/text's
// composition (golang.org/issue/81028).
func refCompose(s string) string {
	pairs := refPairs()
	ccc := func(r rune) uint8 { return norm.NFD.PropertiesString(string(r)).CCC() }
	var out []rune
	starter := -1
	for _, c := range norm.NFD.String(s) {
		if starter >= 0 {
			prev := len(out) - 1
			if cc := ccc(out[prev]); prev == starter || (cc != 0 && cc < ccc(c)) {
				if p, ok := refHangul(out[starter], c); ok {
					out[starter] = p
					continue
				}
				if p, ok := pairs[[2]rune{out[starter], c}]; ok {
					out[starter] = p
					continue
				}
			}
		}
		if ccc(c) == 0 {
			starter = len(out)
		}
		out = append(out, c)
	}
	return string(out)
}

// refPairs maps each pair of characters that composes to its primary
// composite: a character that NFC keeps (not a composition exclusion or a
// singleton) whose canonical decomposition is the pair's second character
// after the first's. x/text gives only the full decomposition (ệ: e, dot
// below, circumflex), so the first character is the composition of all but
// the last (ẹ). Hangul syllables are composed by refHangul.
var refPairs = sync.OnceValue(func() map[[2]rune]rune {
	pairs := make(map[[2]rune]rune)
	for c := rune(0); c <= unicode.MaxRune; c++ {
		if (c >= 0xD800 && c < 0xE000) || (c >= 0xAC00 && c <= 0xD7A3) {
			continue
		}
		s := string(c)
		d := []rune(string(norm.NFD.PropertiesString(s).Decomposition()))
		if len(d) < 2 || norm.NFC.String(s) != s {
			continue
		}
		if first := []rune(norm.NFC.String(string(d[:len(d)-1]))); len(first) == 1 {
			pairs[[2]rune{first[0], d[len(d)-1]}] = c
		}
	}
	return pairs
})

// refHangul composes a leading and a vowel jamo, or an LV syllable and a
// trailing jamo, by the arithmetic of the Unicode standard (section 3.12).
func refHangul(a, b rune) (rune, bool) {
	const sBase, lBase, vBase, tBase, vCount, tCount = 0xAC00, 0x1100, 0x1161, 0x11A7, 21, 28
	switch {
	case a >= lBase && a < lBase+19 && b >= vBase && b < vBase+vCount:
		return sBase + ((a-lBase)*vCount+b-vBase)*tCount, true
	case a >= sBase && a <= 0xD7A3 && (a-sBase)%tCount == 0 && b > tBase && b < tBase+tCount:
		return a + b - tBase, true
	}
	return 0, false
}

func allSpace(rs []rune) bool {
	for _, r := range rs {
		if !unicode.IsSpace(r) {
			return false
		}
	}
	return true
}

func tokensOf(t *Tokenizer, doc []byte) []string {
	var out []string
	for _, tok := range t.Tokens(nil, doc) {
		out = append(out, string(tok))
	}
	return out
}
