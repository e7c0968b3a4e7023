package tokenize

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// readHexTable reads a table of testdata made by Python: lines of
// tab-separated columns, each one or more code points in hexadecimal, and
// comments from '#'. It returns each line's columns as strings.
func readHexTable(t *testing.T, name string) [][]string {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rows [][]string
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		text := sc.Text()
		if strings.HasPrefix(text, "#") {
			continue
		}
		var row []string
		for _, col := range strings.Split(text, "\t") {
			var b strings.Builder
			for _, h := range strings.Fields(col) {
				r, err := strconv.ParseUint(h, 16, 32)
				if err != nil || !utf8.ValidRune(rune(r)) {
					t.Fatalf("%s:%d: %q", name, line, text)
				}
				b.WriteRune(rune(r))
			}
			row = append(row, b.String())
		}
		rows = append(rows, row)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestFoldMatchesPython compares the folding of every code point that
// Python's Unicode assigns (testdata/assigned.tsv) with Python's
// str.casefold, an implementation of Unicode's full case folding
// independent of golang.org/x/text (testdata/casefold.tsv). Code points
// assigned since are left out: x/text folds them with the Unicode tables
// of the Go version (17.0.0 from Go 1.27). Both tables are made by the
// commands in their headers.
func TestFoldMatchesPython(t *testing.T) {
	folds := make(map[string]string)
	for _, row := range readHexTable(t, "casefold.tsv") {
		folds[row[0]] = row[1]
	}
	if len(folds) < 1400 {
		t.Fatalf("casefold.tsv has %d foldings", len(folds))
	}
	assigned := readHexTable(t, "assigned.tsv")
	bad, checked := 0, 0
	for _, rg := range assigned {
		first, _ := utf8.DecodeRuneInString(rg[0])
		last, _ := utf8.DecodeRuneInString(rg[1])
		for r := first; r <= last; r++ {
			if r >= 0xD800 && r < 0xE000 {
				continue
			}
			checked++
			s := string(r)
			want, ok := folds[s]
			if !ok {
				want = s
			}
			if got := foldString(s); got != want {
				if bad++; bad <= 10 {
					t.Errorf("%U %q folds to %q, Python to %q", r, s, got, want)
				}
			}
		}
	}
	if bad > 10 {
		t.Errorf("%d code points fold otherwise than in Python", bad)
	}
	if checked < 140000 {
		t.Errorf("assigned.tsv has %d code points", checked)
	}
}

// TestComposePairs composes every pair that Python's NFC composes
// (testdata/compositions.tsv), and the same pairs with the starter moved to
// every other plane, which keeps its low 16 bits: x/text composed those
// too. Such a pair must stay as it is, or (a pair of a later Unicode
// version than the table's) become one character that decomposes to it.
func TestComposePairs(t *testing.T) {
	rows := readHexTable(t, "compositions.tsv")
	if len(rows) < 900 {
		t.Fatalf("compositions.tsv has %d pairs", len(rows))
	}
	composed := make(map[string]string, len(rows))
	for _, row := range rows {
		composed[row[0]+row[1]] = row[2]
	}
	var scratch normBufs
	bad := 0
	for _, row := range rows {
		if got := string(composeNFC(nil, []byte(row[0]+row[1]), &scratch)); got != row[2] {
			t.Errorf("%+q composed to %+q, Python %+q", row[0]+row[1], got, row[2])
			bad++
		}
		if got := refCompose(row[0] + row[1]); got != row[2] {
			t.Errorf("reference: %+q composed to %+q, Python %+q", row[0]+row[1], got, row[2])
			bad++
		}
		starter, _ := utf8.DecodeRuneInString(row[0])
		for plane := rune(0); plane <= 16 && bad < 10; plane++ {
			alias := starter&0xFFFF | plane<<16
			if alias == starter || (alias >= 0xD800 && alias < 0xE000) {
				continue
			}
			pair := string(alias) + row[1]
			got := string(composeNFC(nil, []byte(pair), &scratch))
			if want, ok := composed[pair]; ok && got != want {
				t.Errorf("%+q composed to %+q, Python %+q", pair, got, want)
				bad++
			} else if !ok && got != pair && (utf8.RuneCountInString(got) != 1 || !scratch.equivalent([]byte(got), []byte(pair))) {
				t.Errorf("%+q composed to %+q", pair, got)
				bad++
			}
			if ref := refCompose(pair); got != ref {
				t.Errorf("%+q composed to %+q, the reference %+q", pair, got, ref)
				bad++
			}
		}
	}
	// composeNFC checks only compositions with a code point beyond the
	// BMP, on the ground that a composite with a component beyond it is
	// beyond it too: in Python's pairs and in x/text's tables.
	for pair, c := range refPairs() {
		if (pair[0] > 0xFFFF || pair[1] > 0xFFFF) && c <= 0xFFFF {
			t.Errorf("%U %U compose to %U, in the BMP", pair[0], pair[1], c)
		}
	}
	for _, row := range rows {
		if beyondBMP([]byte(row[0]+row[1])) && !beyondBMP([]byte(row[2])) {
			t.Errorf("%+q compose to %+q, in the BMP", row[0]+row[1], row[2])
		}
	}
	// A starter with no composition keeps its marks in canonical order,
	// and a segment after it is composed.
	for in, want := range map[string]string{
		"\U00010041\u0301":              "\U00010041\u0301",
		"\u05D2\u0307":                  "\u05D2\u0307",
		"\U00010041\u0301\u0323e\u0301": "\U00010041\u0323\u0301\u00E9",
		"e\u0301\U00010041\u0301":       "\u00E9\U00010041\u0301",
	} {
		if got := string(composeNFC(nil, []byte(in), &scratch)); got != want {
			t.Errorf("%+q composed to %+q, want %+q", in, got, want)
		}
		if got := Normalize(in, Options{KeepCase: true}); got != want {
			t.Errorf("Normalize(%+q) = %+q, want %+q", in, got, want)
		}
		if got := refCompose(in); got != want {
			t.Errorf("reference: %+q composed to %+q, want %+q", in, got, want)
		}
	}
}

// TestNormalizeSettles checks that a token is its own normal form: for
// every code point alone and before a few combining marks, Normalize of
// Normalize gives the same, and the Tokenizer, where the code point is a
// letter or number, gives Normalize's token. Case folding that swapped
// Cherokee capitals and small letters failed this, and so did composition
// that took U+10041 with an acute accent for A with one.
func TestNormalizeSettles(t *testing.T) {
	marks := []string{"", "\u0301", "\u030C", "\u0345", "\u3099"}
	for _, opt := range []Options{{}, {KeepCase: true}} {
		tk := New(opt)
		bad := 0
		for r := rune(0); r <= unicode.MaxRune && bad < 10; r++ {
			if !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S) {
				continue
			}
			for _, m := range marks {
				s := string(r) + m
				once := Normalize(s, opt)
				if twice := Normalize(once, opt); twice != once {
					t.Errorf("KeepCase %v: Normalize(%+q) = %+q, and Normalize of that %+q", opt.KeepCase, s, once, twice)
					bad++
				}
			}
			if unicode.IsLetter(r) || unicode.IsNumber(r) {
				want := Normalize(string(r), opt)
				if got := tokensOf(tk, []byte(string(r))); len(got) != 1 || got[0] != want {
					t.Errorf("KeepCase %v: tokens of %+q are %+q, Normalize gives %+q", opt.KeepCase, string(r), got, want)
					bad++
				}
			}
		}
	}
}

// rulesFingerprints are the SHA-256 of the tokens of rulesSample under
// Rules, by the version of the Unicode tables that the Go version gives
// unicode and golang.org/x/text. TestRulesFingerprint fails when the
// tokens change, as when a new version of the segmenter changes its
// tables. Where the change is meant, raise Rules (and say what changed in
// its comment) and set the fingerprints the test reports (GOTOOLCHAIN
// chooses the Go version).
var rulesFingerprints = map[string]string{
	"15.0.0": "ca1b18e77356f126298f829043fd83aea7eef37c28a754862ec0103376a0e308", // Go 1.26
	"17.0.0": "ad3265e8e305ee568fd0f1adf24b4026f1d1d1a42ce93ebfe84c780d00c4ab19", // Go 1.27
}

// rulesSample writes every code point that is a letter, mark, number,
// punctuation or symbol, alone, after a capital A, and before an acute
// accent, in documents of a hundred.
func rulesSample() [][]byte {
	var docs [][]byte
	var doc []byte
	n := 0
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !unicode.In(r, unicode.L, unicode.M, unicode.N, unicode.P, unicode.S) {
			continue
		}
		doc = fmt.Appendf(doc, "%c A%c %c\u0301 ", r, r, r)
		if n++; n%100 == 0 {
			docs = append(docs, doc)
			doc = nil
		}
	}
	return append(docs, doc)
}

// TestRulesFingerprint guards Rules: see rulesFingerprint.
func TestRulesFingerprint(t *testing.T) {
	h := sha256.New()
	for _, opt := range []Options{{}, {KeepCase: true}} {
		tk := New(opt)
		for _, doc := range rulesSample() {
			for _, tok := range tk.Tokens(nil, doc) {
				h.Write(tok)
				h.Write([]byte{0})
			}
			h.Write([]byte{1})
		}
	}
	for _, v := range []string{norm.Version, cases.UnicodeVersion} {
		if v != unicode.Version {
			t.Fatalf("Unicode tables of versions %s (unicode), %s (norm) and %s (cases)", unicode.Version, norm.Version, cases.UnicodeVersion)
		}
	}
	if got, want := hex.EncodeToString(h.Sum(nil)), rulesFingerprints[unicode.Version]; got != want {
		t.Errorf("the tokens of every code point under Rules %d and Unicode %s have fingerprint %s, not %q; if the change is meant, raise Rules (see rulesFingerprints)", Rules, unicode.Version, got, want)
	}
}
