package tokenize

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"
	"unicode/utf8"
)

func TestSegmentTricky(t *testing.T) {
	// Expected segments worked out by hand from the UAX #29 rules.
	cases := []struct {
		in   string
		want []string
	}{
		{"can't", []string{"can't"}},
		{"e.g.", []string{"e.g", "."}},
		{"3.14", []string{"3.14"}},
		{"1,000,000", []string{"1,000,000"}},
		{"a:b", []string{"a:b"}},
		{"1:2", []string{"1", ":", "2"}},
		{"a,b", []string{"a", ",", "b"}},
		{"a..b", []string{"a", ".", ".", "b"}},
		{"_x_", []string{"_x_"}},
		{"x_1", []string{"x_1"}},
		{"__", []string{"__"}},
		{"U.S.A.", []string{"U.S.A", "."}},
		{"'quoted'", []string{"'", "quoted", "'"}},
		{"--", []string{"-", "-"}},
		{"a\tb", []string{"a", "\t", "b"}},
		{"a\t\tb", []string{"a", "\t", "\t", "b"}},
		{"a  b", []string{"a", "  ", "b"}},
		{"a\r\nb\r\r\n\n", []string{"a", "\r\n", "b", "\r", "\r\n", "\n"}},
		{"a.1", []string{"a", ".", "1"}},
		{"1.a", []string{"1", ".", "a"}},
		{"a1.5", []string{"a1.5"}}, // WB11/WB12 look only at the digits either side
		{"1a,5", []string{"1a", ",", "5"}},
		{"x_.y", []string{"x_", ".", "y"}},
		{"a'b'c", []string{"a'b'c"}},
		{"1;2;3", []string{"1;2;3"}},
		{"a;b", []string{"a", ";", "b"}},
		{"a.", []string{"a", "."}},
		{"a.b.", []string{"a.b", "."}},
		{"\"a\"", []string{"\"", "a", "\""}},
		{"\v\f", []string{"\v", "\f"}},
	}
	for _, c := range cases {
		if got := segments(SegmentASCII, []byte(c.in)); !slices.Equal(got, c.want) {
			t.Errorf("SegmentASCII(%q) = %q, want %q", c.in, got, c.want)
		}
		if got := segments(SegmentUnicode, []byte(c.in)); !slices.Equal(got, c.want) {
			t.Errorf("SegmentUnicode(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestSegmentASCIIExhaustive compares the hand-written ASCII rules with the
// library on every ASCII string of up to three bytes (two in short mode, plus
// three-byte strings over one byte of each kind). Every rule that applies to
// ASCII looks at most one byte to each side of a boundary, so this checks
// every byte's properties in every context the rules distinguish.
func TestSegmentASCIIExhaustive(t *testing.T) {
	all := make([]byte, 128)
	for i := range all {
		all[i] = byte(i)
	}
	check := func(s []byte) {
		got := segments(SegmentASCII, s)
		if want := librarySegments(string(s)); !slices.Equal(got, want) {
			t.Fatalf("SegmentASCII(%q) = %q, library gives %q", s, got, want)
		}
	}
	for _, a := range all {
		check([]byte{a})
		for _, b := range all {
			check([]byte{a, b})
		}
	}
	third := all
	if testing.Short() {
		third = []byte("aZ0_:.',; \t\r\n\v\f\"-#\x00\x7f")
	}
	for _, a := range third {
		for _, b := range third {
			for _, c := range third {
				check([]byte{a, b, c})
			}
		}
	}
}

func TestFoldTableMatchesCases(t *testing.T) {
	for c := range 128 {
		if got, want := string(asciiLower[c]), fold.String(string(rune(c))); got != want {
			t.Errorf("fold %q: table gives %q, cases.Fold %q", rune(c), got, want)
		}
	}
}

func FuzzASCIISegment(f *testing.F) {
	for _, s := range []string{"can't e.g. 3.14 1,000,000", "a:b a..b _x_ x_1 U.S.A.", "'quoted' -- \t\r\n", "a'1 1'a 1.a a.1"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		for i := range data {
			data[i] &= 0x7f
		}
		got := segments(SegmentASCII, data)
		if want := librarySegments(string(data)); !slices.Equal(got, want) {
			t.Fatalf("SegmentASCII(%q) = %q, library gives %q", data, got, want)
		}
	})
}

// TestSegmentASCIILong compares SegmentASCII with the library on random
// strings long enough for words to cross the eight-byte steps of
// asciiWordEnd, drawn mostly from the bytes the rules distinguish, with
// some non-ASCII bytes, which SegmentASCII must treat as punctuation
// without misreading the bytes next to them; and the tokens of their ASCII
// versions with the reference tokenizer's.
func TestSegmentASCIILong(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	alphabet := []byte("aaaazZZ00099__:..'',;  \t\r\n-#@[`{/\x00\x7f")
	for range 20000 {
		s := make([]byte, 1+r.IntN(40))
		for i := range s {
			s[i] = alphabet[r.IntN(len(alphabet))]
			if r.IntN(12) == 0 {
				s[i] = byte(r.IntN(256))
			}
		}
		ascii := bytes.Clone(s)
		for i, c := range ascii {
			if c >= utf8.RuneSelf {
				ascii[i] = '-'
			}
		}
		got := segments(SegmentASCII, s)
		if want := librarySegments(string(ascii)); !segmentsMatch(got, want) {
			t.Fatalf("SegmentASCII(%q) = %q; on the text with punctuation for non-ASCII bytes the library gives %q", s, got, want)
		}
		// The classes asciiWordEnd reports decide which words are kept
		// and which are folded.
		compareWithReference(t, Options{}, ascii)
	}
}

// segmentsMatch reports whether two segmentations have the same lengths.
func segmentsMatch(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if len(a[i]) != len(b[i]) {
			return false
		}
	}
	return true
}
