package tokenize

import (
	"slices"
	"strings"
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
// folded writes the typographic apostrophe as '.
func refNormalize(w string, keepCase bool) string {
	if !keepCase {
		w = cases.Fold().String(w)
	}
	w = norm.NFC.String(w)
	if !keepCase {
		w = strings.ReplaceAll(w, "\u2019", "'")
	}
	return w
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
