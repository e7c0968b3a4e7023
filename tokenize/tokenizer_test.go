package tokenize

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

func TestTokens(t *testing.T) {
	stop := map[string]struct{}{"The": {}, "of": {}, "STRASSE": {}}
	cases := []struct {
		name string
		opt  Options
		doc  string
		want []string
	}{
		{"words", Options{}, "It is a truth universally acknowledged,", []string{"it", "is", "a", "truth", "universally", "acknowledged"}},
		{"tricky ASCII", Options{}, "Can't e.g. 3.14 1,000,000 a:b a..b _x_ x_1 U.S.A. 'quoted' -- ... ___ x2 2",
			[]string{"can't", "e.g", "3.14", "1,000,000", "a:b", "a", "b", "_x_", "x_1", "u.s.a", "quoted", "x2", "2"}},
		{"white space", Options{}, "\ta\r\nB\v\fc  d\n", []string{"a", "b", "c", "d"}},
		{"keep case", Options{KeepCase: true}, "Mr. Darcy's UK", []string{"Mr", "Darcy's", "UK"}},
		{"accents", Options{}, "Café au lait, CAFÉ", []string{"café", "au", "lait", "café"}},
		{"sharp s", Options{}, "Straße STRASSE", []string{"strasse", "strasse"}},
		{"greek", Options{}, "ΣΊΣΥΦΟΣ Σίσυφος", []string{"σίσυφοσ", "σίσυφοσ"}},
		// Fold has no Turkish rules: dotted capital I becomes i plus U+0307,
		// and dotless i is left alone.
		{"turkish", Options{}, "İstanbul ISTANBUL ılık", []string{"i\u0307stanbul", "istanbul", "ılık"}},
		{"turkish keep case", Options{KeepCase: true}, "İstanbul", []string{"İstanbul"}},
		// Only decimal digits are Numeric to UAX #29, so "x²" is two segments;
		// both are kept because superscripts and fractions are numbers.
		{"numbers", Options{}, "½ Ⅻ ２ x² ⅓3", []string{"½", "ⅻ", "２", "x", "²", "⅓", "3"}},
		{"symbols dropped", Options{}, "© 👍🏽 — … ¿Qué?", []string{"qué"}},
		{"ideographs", Options{}, "日本語のテキスト", []string{"日", "本", "語", "の", "テキスト"}},
		// Cherokee small letters fold to the capitals (CaseFolding.txt),
		// which stay.
		{"cherokee", Options{}, "ᏣᎳᎩ ꮳꮃꭹ Ᏸ ᏸ Ꮳꮃꭹ", []string{"ᏣᎳᎩ", "ᏣᎳᎩ", "Ᏸ", "Ᏸ", "ᏣᎳᎩ"}},
		{"cherokee keep case", Options{KeepCase: true}, "ꮳꮃꭹ ᏣᎳᎩ", []string{"ꮳꮃꭹ", "ᏣᎳᎩ"}},
		// Tokens are composed (NFC): a letter and its combining accent
		// are one rune.
		{"combining mark", Options{}, "e\u0301te\u0301 \u0301x", []string{"\u00e9t\u00e9", "x"}},
		{"composed", Options{}, "Cafe\u0301 CAFE\u0301 caf\u00e9 A\u030angstro\u0308m", []string{"caf\u00e9", "caf\u00e9", "caf\u00e9", "\u00e5ngstr\u00f6m"}},
		{"composed keep case", Options{KeepCase: true}, "Cafe\u0301 CAFE\u0301", []string{"Caf\u00e9", "CAF\u00c9"}},
		// With case folded, the typographic apostrophe is '.
		{"apostrophe", Options{}, "don\u2019t DON'T Don\u2019t l\u2019\u00e9t\u00e9", []string{"don't", "don't", "don't", "l'\u00e9t\u00e9"}},
		// A token is composed alone: U+11A8 combines with a Hangul
		// syllable before it, and an accent with a letter.
		{"composed alone", Options{}, "A가 ᆨB ᆨAÁ", []string{"a가", "ᆨb", "ᆨaá"}},
		{"apostrophe keep case", Options{KeepCase: true}, "Don\u2019t don't", []string{"Don\u2019t", "don't"}},
		{"apostrophe stop word", Options{Stopwords: map[string]struct{}{"DON\u2019T": {}, "cafe\u0301": {}}}, "don't don\u2019t caf\u00e9 x", []string{"x"}},
		{"ideographic space", Options{}, "a \u3000 b\u3000c", []string{"a", "b", "c"}},
		{"stop words folded", Options{Stopwords: stop}, "The Queen of Sheba, the STRASSE of Straße", []string{"queen", "sheba"}},
		{"stop words exact with KeepCase", Options{KeepCase: true, Stopwords: stop}, "The Queen of Sheba, the STRASSE Straße",
			[]string{"Queen", "Sheba", "the", "Straße"}},
		{"min length", Options{MinLength: 3}, "a an the ox-cart és été", []string{"the", "cart", "été"}},
		// Length counts runes after folding: ß folds to ss.
		{"min length after fold", Options{MinLength: 2}, "ß", []string{"ss"}},
		{"min length keep case", Options{MinLength: 2, KeepCase: true}, "ß", nil},
		{"invalid byte", Options{}, "ab\xffcd", []string{"ab", "cd"}},
		{"truncated rune at end", Options{}, "ab\xe2\x82", []string{"ab"}},
		{"surrogate", Options{}, "\xed\xa0\x80x", []string{"x"}},
		{"empty", Options{}, "", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			tk := New(c.opt)
			if got := tokensOf(tk, []byte(c.doc)); !slices.Equal(got, c.want) {
				t.Errorf("Tokens(%q) = %q, want %q", c.doc, got, c.want)
			}
			want, wantStats := refTokens(c.opt, []byte(c.doc))
			if !slices.Equal(want, c.want) {
				t.Errorf("reference tokens %q, want %q", want, c.want)
			}
			if got := tk.Stats(); got != wantStats {
				t.Errorf("Stats = %+v, reference %+v", got, wantStats)
			}
		})
	}
}

func TestStats(t *testing.T) {
	tk := New(Options{MinLength: 2, Stopwords: map[string]struct{}{"the": {}}})
	tk.Tokens(nil, []byte("The cat, a dog -- \xff\xfe!\n"))
	tk.Tokens(nil, []byte("ÉTÉ\r\n"))
	// Kept: cat, dog, été. Dropped: the (stop), a (short), ",", "-", "-",
	// two U+FFFD, "!". Not counted: spaces, newlines.
	want := Stats{Docs: 2, Tokens: 3, Dropped: 8, InvalidUTF8: 2}
	if got := tk.Stats(); got != want {
		t.Errorf("Stats = %+v, want %+v", got, want)
	}
	var sum Stats
	sum.Add(want)
	sum.Add(Stats{Docs: 1, Tokens: 2, Dropped: 3, InvalidUTF8: 4})
	if want := (Stats{Docs: 3, Tokens: 5, Dropped: 11, InvalidUTF8: 6}); sum != want {
		t.Errorf("Add gives %+v, want %+v", sum, want)
	}
}

// TestTokensReuse checks that a Tokenizer leaves documents alone and that
// its scratch space does not leak between calls.
func TestTokensReuse(t *testing.T) {
	tk := New(Options{})
	docs := []string{"HELLO World", "ΣΊΣΥΦΟΣ héllo", "bad \xff UTF-8 Here", "plain text"}
	for round := range 3 {
		for _, d := range docs {
			doc := []byte(d)
			got := tokensOf(tk, doc)
			if string(doc) != d {
				t.Fatalf("Tokens changed the document %q to %q", d, doc)
			}
			want, _ := refTokens(Options{}, doc)
			if !slices.Equal(got, want) {
				t.Fatalf("round %d: Tokens(%q) = %q, want %q", round, d, got, want)
			}
		}
	}
	// Appending to dst keeps what is there.
	dst := [][]byte{[]byte("x")}
	dst = tk.Tokens(dst, []byte("A b"))
	if got := fmt.Sprintf("%s", dst); got != "[x a b]" {
		t.Errorf("appended tokens %s", got)
	}
}

// TestAppendTokensKeepsEarlier checks that the tokens AppendTokens returns
// stay as they were while later documents are tokenized, until Release:
// folded tokens and documents with invalid UTF-8 are copied into scratch
// space that grows rather than being reused.
func TestAppendTokensKeepsEarlier(t *testing.T) {
	tk := New(Options{})
	docs := []string{"HELLO World", "ΣΊΣΥΦΟΣ héllo", "bad \xff UTF-8 Here", "plain text",
		strings.Repeat("Long Words And \xfe More ", 200), "ÉTÉ \xc3 x", "THE END"}
	var want []string
	for _, d := range docs {
		ref, _ := refTokens(Options{}, []byte(d))
		want = append(want, ref...)
	}
	for round := range 3 {
		var got [][]byte
		for _, d := range docs {
			got = tk.AppendTokens(got, []byte(d))
		}
		if len(got) != len(want) {
			t.Fatalf("round %d: %d tokens, want %d", round, len(got), len(want))
		}
		for i := range want {
			if string(got[i]) != want[i] {
				t.Fatalf("round %d: token %d is %q after the later documents, want %q", round, i, got[i], want[i])
			}
		}
		tk.Release()
	}
}

func TestOptionsValidate(t *testing.T) {
	err := Options{MinLength: -1}.Validate()
	if !errors.Is(err, ErrOptions) {
		t.Errorf("negative MinLength: error %v, want ErrOptions", err)
	}
	defer func() {
		if recover() == nil {
			t.Error("New with invalid options did not panic")
		}
	}()
	New(Options{MinLength: -1})
}

func TestReadStopwords(t *testing.T) {
	want := map[string]struct{}{"the": {}, "A": {}, "of": {}, "Straße": {}}
	for _, in := range []string{
		"# English\nthe\n  A  \n\nof # preposition\nStraße\r\n",
		"\uFEFFthe\r\nA\r\nof\r\nStraße\r\n", // from a Windows editor
	} {
		got, err := ReadStopwords(strings.NewReader(in))
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("ReadStopwords(%q) = %q, want %q", in, got, want)
		}
	}
	for _, c := range []struct {
		in   string
		line int
	}{
		{"the\n\nNew York\n", 3},
		{"a\n\xff\n", 2},
		// Words the tokenizer never gives as one token.
		{"the\ne-mail\n", 2},
		{"C++\n", 1},
		{"of\nin\n日本\n", 3},
		{"the\n...\n", 2},
	} {
		_, err := ReadStopwords(strings.NewReader(c.in))
		var se *StopwordError
		if !errors.As(err, &se) || se.Line != c.line || !errors.Is(err, ErrStopword) {
			t.Errorf("ReadStopwords(%q): error %v, want a StopwordError on line %d", c.in, err, c.line)
		}
	}
	_, err := ReadStopwords(strings.NewReader("a\n" + strings.Repeat("x", 1<<17)))
	var se *StopwordError
	if !errors.As(err, &se) || se.Line != 2 {
		t.Errorf("over-long line: error %v, want a StopwordError on line 2", err)
	}
}

// mixedDocs are documents that send the tokenizer through both paths, with
// the characters that matter where the paths meet.
var mixedDocs = []string{
	"café au lait", "naïve ASCII then ümlaut, then ASCII again.",
	"a \u3000 b", "x \u0301y", "x\u200d y", "\u00a0 a", "a \u00a0 b",
	"e.g.\u00e9 1.\u0661", "don’t can't", "a:é é:a", "\r\né\r\n", "é\r\n\r\na",
	"\t\u0301\t", "\n\u0301\n", "日本 語 text", "👍🏽 x 🇫🇷🇩🇪 y", "א״ב ש'", "१२३ 1.2",
	"ab\xffcd", "ab\xe2\x82", "\xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80 x",
	"ᏣᎳᎩ ꮳꮃꭹ Ᏸᏸ", "Việt ᏣᎳᎩ",
}

// TestTokensMatchReference compares Tokenizer with the slow reference on
// documents that mix ASCII and other text, with every option.
func TestTokensMatchReference(t *testing.T) {
	opts := []Options{{}, {KeepCase: true}, {MinLength: 2}, {Stopwords: map[string]struct{}{"A": {}, "Ü": {}}}}
	for _, opt := range opts {
		for _, d := range mixedDocs {
			compareWithReference(t, opt, []byte(d))
		}
	}
}

// TestASCIIBlocks compares Tokenizer with the slow reference on random
// ASCII documents up to several of asciiTokens's 64-byte blocks long, made
// of the bytes the rules tell apart, so that words and the marks that join
// them fall across the blocks' edges. Each document is read once from a
// slice whose capacity ends with it and once from a buffer that goes on
// with letters, which asciiMasks must not count.
func TestASCIIBlocks(t *testing.T) {
	const alphabet = "aZ9_:.',; \t\r\n-\x00\x7f"
	r := rand.New(rand.NewPCG(3, 4))
	opts := []Options{{}, {KeepCase: true}, {MinLength: 3}}
	for i := range 4000 {
		doc := make([]byte, r.IntN(260))
		// Mostly letters and digits, so that words run long.
		for k := range doc {
			switch r.IntN(4) {
			case 0:
				doc[k] = alphabet[r.IntN(len(alphabet))]
			case 1:
				doc[k] = '0' + byte(r.IntN(10))
			default:
				doc[k] = 'a' + byte(r.IntN(26)) - byte(r.IntN(2))*('a'-'A')
			}
		}
		padded := append(slices.Clone(doc), "Wordswordswords"...)[:len(doc)]
		for _, d := range [][]byte{slices.Clip(doc), padded} {
			compareWithReference(t, opts[i%len(opts)], d)
		}
	}
}

// TestBlockClasses compares the masks of blockClasses, where there is one,
// with asciiMasksGo's on random ASCII text of every length up to 64 bytes,
// read from a buffer that goes on with bytes of every value and copied
// from one that ends with the text.
func TestBlockClasses(t *testing.T) {
	if !haveBlockClasses {
		t.Skip("no blockClasses on this platform")
	}
	r := rand.New(rand.NewPCG(5, 6))
	buf := make([]byte, 128)
	for i := range 20000 {
		for k := range buf {
			buf[k] = byte(r.IntN(256))
		}
		n := i % 65
		for k := range n {
			buf[k] &= 0x7f
		}
		want := asciiMasksGo(slices.Clip(buf[:n]))
		// Read in place, and copied from a document that ends its memory.
		for _, doc := range [][]byte{buf[:n], slices.Clip(buf[:n])} {
			if got := asciiMasks(doc); got != want {
				t.Fatalf("%q (capacity %d): masks %+v, want %+v", doc, cap(doc), got, want)
			}
		}
	}
}

// TestCorporaMatchReference runs the comparison on the real texts, which
// are nearly all ASCII.
func TestCorporaMatchReference(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	for _, name := range []string{"austen.txt.zst", "kjv.txt.zst"} {
		text := corpus(t, name, 1<<20)
		tk := New(Options{})
		for _, doc := range lines(text) {
			got := tokensOf(tk, doc)
			want, _ := refTokens(Options{}, doc)
			if !slices.Equal(got, want) {
				t.Fatalf("%s: Tokens(%q) = %q, want %q", name, doc, got, want)
			}
		}
	}
}

func compareWithReference(t *testing.T, opt Options, doc []byte) {
	t.Helper()
	tk := New(opt)
	toks := tk.Tokens(nil, doc)
	var got []string
	for _, tok := range toks {
		if !utf8.Valid(tok) {
			t.Fatalf("token %q of %q is not valid UTF-8", tok, doc)
		}
		if !bytes.ContainsFunc(tok, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }) {
			t.Fatalf("token %q of %q has no letter or number", tok, doc)
		}
		got = append(got, string(tok))
	}
	want, wantStats := refTokens(opt, doc)
	if !slices.Equal(got, want) {
		t.Fatalf("options %+v: Tokens(%q) = %q, want %q", opt, doc, got, want)
	}
	if st := tk.Stats(); st != wantStats {
		t.Fatalf("options %+v: Tokens(%q) stats %+v, want %+v", opt, doc, st, wantStats)
	}
}

// piecesMatch checks that tokenizing doc in pieces of at least n bytes
// gives the tokens and statistics of the whole document, and that an error
// of fn ends it.
func piecesMatch(t *testing.T, opt Options, doc []byte, n int) {
	t.Helper()
	whole := New(opt)
	want := tokensOf(whole, doc)
	tk := New(opt)
	var got []string
	pieces := 0
	_, err := tk.eachPiece(nil, doc, n, func(toks [][]byte) error {
		pieces++
		for _, tok := range toks {
			got = append(got, string(tok))
		}
		return nil
	})
	if err != nil || !slices.Equal(got, want) {
		t.Fatalf("options %+v, pieces of %d bytes: %q (%v), want %q", opt, n, got, err, want)
	}
	if tk.Stats() != whole.Stats() {
		t.Fatalf("options %+v, pieces of %d bytes: stats %+v, want %+v", opt, n, tk.Stats(), whole.Stats())
	}
	if pieces > 1 {
		stop := errors.New("stop")
		calls := 0
		if _, err := New(opt).eachPiece(nil, doc, n, func([][]byte) error { calls++; return stop }); err != stop || calls != 1 {
			t.Fatalf("fn's error: %v after %d calls, want it after 1", err, calls)
		}
	}
}

// TestEachPiece cuts documents into pieces down to a byte long, where every
// split point is one, and a real text taken as one document.
func TestEachPiece(t *testing.T) {
	for _, d := range mixedDocs {
		for _, n := range []int{1, 2, 3, 5, 16} {
			piecesMatch(t, Options{}, []byte(d), n)
		}
	}
	piecesMatch(t, Options{}, []byte("a\tb \u00a0 c\r\nd  e\xff f"), 1)
	piecesMatch(t, Options{}, nil, 1)
	if !testing.Short() {
		piecesMatch(t, Options{MinLength: 2}, corpus(t, "austen.txt.zst", 1<<20), 4096)
	}
}

func FuzzTokens(f *testing.F) {
	for _, d := range mixedDocs {
		f.Add([]byte(d), false, uint8(0))
	}
	f.Add([]byte("Can't e.g. 3.14 1,000,000 a:b a..b _x_ x_1 U.S.A. 'quoted' --\t\r\n"), true, uint8(2))
	f.Add([]byte("Cafe\u0301 DON\u2019T \u01f0 A\u030a \u1100\u1161\u11a8 e\u0301\u0301"), false, uint8(130))
	f.Fuzz(func(t *testing.T, doc []byte, keepCase bool, minLength uint8) {
		opt := Options{KeepCase: keepCase, MinLength: int(minLength % 4)}
		if minLength >= 128 {
			opt.Stopwords = map[string]struct{}{"the": {}, "STRASSE": {}, "é": {}, "don\u2019t": {}}
		}
		compareWithReference(t, opt, doc)
		piecesMatch(t, opt, doc, 1+int(minLength%8))
	})
}

func ExampleTokenizer() {
	tk := New(Options{Stopwords: map[string]struct{}{"the": {}}})
	for _, tok := range tk.Tokens(nil, []byte("The Straße's 2 cafés—e.g. U.S.A.!")) {
		fmt.Printf("%s|", tok)
	}
	fmt.Printf("\n%+v\n", tk.Stats())
	// Output:
	// strasse's|2|cafés|e.g|u.s.a|
	// {Docs:1 Tokens:5 Dropped:5 InvalidUTF8:0}
}

// TestMemoMatchesReference tokenizes, with one Tokenizer, documents drawn
// from segments that repeat, so that most of them are found in the memo of
// segments (memoSegment), and compares the tokens and statistics with the
// reference. The segments become every outcome: tokens that are the
// segment and tokens that are not (folded, composed, apostrophes), stop
// words, short tokens, segments of symbols (counted) and of non-ASCII
// space (not counted), and segments too long to memoize. Thousands of
// random Cyrillic words replace each other in the memo's entries, and the
// tokens of a whole batch of documents are compared after it, so that
// those copied from the memo must stay as they were.
func TestMemoMatchesReference(t *testing.T) {
	fixed := []string{"Straße", "ǰ", "Cafe\u0301", "café", "DON’T", "don’t", "\u00a0", "\u3000", "—", "½", "日本",
		"ΣΊΣΥΦΟΣ", "\u1100\u1161\u11a8", "ᏣᎳᎩ", "ꮳꮃꭹ", "И", "и", "Ü", "ü", "x\u0301", "plain", "ASCII",
		strings.Repeat("Долгий", 8), strings.Repeat("ä", 40)}
	rng := rand.New(rand.NewPCG(3, 4))
	alphabet := []rune("абвгдеёжзийклмнопрстуфхцчшщъыьэюяАБВГДЕЁЖЗ")
	var words []string
	for range 6000 {
		w := make([]rune, 1+rng.IntN(9))
		for i := range w {
			w[i] = alphabet[rng.IntN(len(alphabet))]
		}
		words = append(words, string(w))
	}
	segment := func() string {
		if rng.IntN(3) == 0 {
			return fixed[rng.IntN(len(fixed))]
		}
		// Zipf-like: low indices often, so that words repeat.
		return words[int(float64(len(words))*rng.Float64()*rng.Float64()*rng.Float64())]
	}
	opts := []Options{{}, {KeepCase: true}, {MinLength: 3}, {Stopwords: map[string]struct{}{"и": {}, "кот": {}, "ü": {}, "don't": {}}}}
	filled := 0
	for _, opt := range opts {
		tk := New(opt)
		// A ring of 4 KiB comes round every hundred or so new segments.
		tk.ringSize = 4 << 10
		var want Stats
		for batch := range 40 {
			var got [][]byte
			var wantToks []string
			for range 50 {
				var doc strings.Builder
				for k := range 20 {
					if k > 0 {
						doc.WriteString(" ")
					}
					doc.WriteString(segment())
				}
				got = tk.AppendTokens(got, []byte(doc.String()))
				toks, st := refTokens(opt, []byte(doc.String()))
				wantToks = append(wantToks, toks...)
				want.Add(st)
			}
			if len(got) != len(wantToks) {
				t.Fatalf("options %+v, batch %d: %d tokens, want %d", opt, batch, len(got), len(wantToks))
			}
			for i := range got {
				if string(got[i]) != wantToks[i] {
					t.Fatalf("options %+v, batch %d: token %d is %q, want %q", opt, batch, i, got[i], wantToks[i])
				}
			}
			tk.Release()
		}
		if tk.Stats() != want {
			t.Errorf("options %+v: stats %+v, want %+v", opt, tk.Stats(), want)
		}
		for _, e := range tk.memo.entries {
			if e.segLen != 0 {
				filled++
			}
		}
		// The ring came round more than once, so that entries whose bytes
		// it wrote over were met.
		if tk.memo.written < 8*uint64(tk.ringSize) {
			t.Errorf("options %+v: %d bytes written to the memo's ring, want at least %d: the test does not test its wrapping round", opt, tk.memo.written, 8*tk.ringSize)
		}
	}
	if filled == 0 {
		t.Fatal("the memo was never filled: the test does not test it")
	}
}
