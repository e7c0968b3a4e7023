package input

import (
	"bytes"
	"encoding/csv"
	"errors"
	"io"
	"math/rand/v2"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// csvContent has a byte-order mark, CRLF line ends, quoted separators,
// quotes and newlines, an empty field and no final line end.
const csvContent = "\ufeffid,text,label\r\n" +
	"1,plain words,a\r\n" +
	"2,\"quoted, with comma\",b\r\n" +
	"3,\"multi\r\nline \"\"quoted\"\"\",c\r\n" +
	"4,,d\r\n" +
	"\r\n" +
	"5,last,e"

func TestCSV(t *testing.T) {
	dir := t.TempDir()
	want := func(path string) []doc {
		return []doc{{"plain words", path, 2}, {"quoted, with comma", path, 3}, {"multi\nline \"quoted\"", path, 4}, {"last", path, 8}}
	}
	// The same with tabs between the fields (the quoted comma stays), a
	// record a line: a field quoted whole is unquoted, other quotes are
	// text.
	tsv := "\ufeffid\ttext\tlabel\r\n" +
		"1\tplain words\ta\r\n" +
		"2\t\"quoted, with comma\"\tb\r\n" +
		"3\t\"multi\tline \"\"quoted\"\"\"\tc\r\n" +
		"4\t\td\r\n" +
		"\r\n" +
		"5\t\"bare\" quotes \"\tz\n" +
		"6\tlast\te"
	wantTSV := func(path string) []doc {
		return []doc{{"plain words", path, 2}, {"quoted, with comma", path, 3}, {"multi\tline \"quoted\"", path, 4}, {"\"bare\" quotes \"", path, 7}, {"last", path, 8}}
	}
	cases := []struct {
		name string
		data []byte
		opt  Options
		want func(string) []doc
	}{
		// --text-column alone: named .csv or .tsv, compressed or not.
		{"a.csv", []byte(csvContent), Options{TextColumn: "text"}, want},
		{"a.CSV.gz", gzipBytes(t, []byte(csvContent)), Options{TextColumn: "text"}, want},
		{"a.tsv.zst", zstdBytes(t, []byte(tsv)), Options{TextColumn: "text"}, wantTSV},
		// --format, whatever the name.
		{"a.txt", []byte(csvContent), Options{Format: CSV, TextColumn: "text"}, want},
		{"b.txt", []byte(tsv), Options{Format: TSV, TextColumn: "text"}, wantTSV},
	}
	for _, c := range cases {
		path := writeFile(t, dir, c.name, c.data)
		docs, r := readAll([]string{path}, c.opt)
		if err := r.Err(); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		equalDocs(t, docs, c.want(path))
		if n := r.Skipped(); n != 1 {
			t.Errorf("%s: skipped %d records, want 1 (the empty field)", c.name, n)
		}
	}
	withStdin(t, []byte(csvContent))
	equalDocs(t, mustReadAll(t, []string{"-"}, Options{Format: CSV, TextColumn: "text"}), want("-"))

	// In an archive, members named .csv are CSV.
	tree := filepath.Join(dir, "tree")
	writeFile(t, tree, "x/a.csv", []byte(csvContent))
	writeFile(t, tree, "y.tsv", []byte(tsv))
	path := writeFile(t, dir, "t.tar", tarDir(t, tree))
	equalDocs(t, mustReadAll(t, []string{path}, Options{TextColumn: "text"}), append(want(path+"/x/a.csv"), wantTSV(path+"/y.tsv")...))
}

// TestCSVRandom reads random records written by encoding/csv's writer, and
// finds each non-empty field of the column at the line a count of the
// newlines before it gives. A TSV record is a line, so its fields have
// none.
func TestCSVRandom(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 9))
	alphabet := []string{"a", "b", " ", ",", "\"", "\n", "\r\n", "é", "\t", ";"}
	comma := ','
	field := func() string {
		var b strings.Builder
		for range rng.IntN(6) {
			if c := alphabet[rng.IntN(len(alphabet))]; comma == ',' || !strings.Contains(c, "\n") {
				b.WriteString(c)
			}
		}
		// encoding/csv reads a quoted \r\n as \n, and drops a \r before
		// the end of a line.
		return strings.ReplaceAll(b.String(), "\r\n", "\n")
	}
	for _, comma = range []rune{',', '\t'} {
		var buf bytes.Buffer
		w := csv.NewWriter(&buf)
		w.Comma = comma
		if err := w.Write([]string{"a", "text", "c"}); err != nil {
			t.Fatal(err)
		}
		var want []doc
		var skipped int64
		line := int64(2)
		path := filepath.Join(t.TempDir(), "r.csv")
		for range 2000 {
			rec := []string{field(), field(), field()}
			if rec[0] == "" && rec[1] == "" && rec[2] == "" {
				rec[0] = "x" // a blank line is no record
			}
			if err := w.Write(rec); err != nil {
				t.Fatal(err)
			}
			if strings.Trim(rec[1], " \t\r\n\f\v") == "" {
				skipped++ // blank
			} else {
				want = append(want, doc{rec[1], path, line + int64(strings.Count(rec[0], "\n"))})
			}
			line += int64(strings.Count(strings.Join(rec, ""), "\n")) + 1
		}
		w.Flush()
		writeFile(t, filepath.Dir(path), "r.csv", buf.Bytes())
		format := CSV
		if comma == '\t' {
			format = TSV
		}
		docs, r := readAll([]string{path}, Options{Format: format, TextColumn: "text"})
		if err := r.Err(); err != nil {
			t.Fatal(err)
		}
		equalDocs(t, docs, want)
		if r.Skipped() != skipped {
			t.Errorf("skipped %d, want %d", r.Skipped(), skipped)
		}
	}
}

func TestCSVErrors(t *testing.T) {
	dir := t.TempDir()
	good := "text,n\nfirst,1\nsecond,2\n"
	long := "third,\"" + strings.Repeat(strings.Repeat("x", 50)+"\n", 400)
	cases := []struct {
		name   string
		data   []byte
		opt    Options
		line   int64
		docs   int
		target error
		detail string
	}{
		{"nocol.csv", []byte(good), Options{TextColumn: "body"}, 1, 0, ErrNoColumn, "columns: text, n"},
		{"twice.csv", []byte("text,n,text\nfirst,1,other\n"), Options{TextColumn: "text"}, 1, 0, ErrInvalidCSV, `column "text" twice (fields 1 and 3)`},
		{"fields.csv", []byte(good + "third,3,extra\n"), Options{TextColumn: "text"}, 4, 2, ErrInvalidCSV, "wrong number of fields"},
		{"quote.csv", []byte(good + "a \"bare\" quote,4\n"), Options{TextColumn: "text"}, 4, 2, ErrInvalidCSV, "bare"},
		{"empty.csv", nil, Options{TextColumn: "text"}, 1, 0, ErrInvalidCSV, "without a header row"},
		{"unclosed.csv", []byte(good + long), Options{TextColumn: "text", MaxLineBytes: 1000}, 4, 2, ErrLineTooLong, "unclosed quote"},
		// A field quoted over two lines, as CSV would have it: the TSV
		// record's second line has too few fields.
		{"multiline.tsv", []byte("text\tn\nfirst\t1\n\"two\nlines\"\t2\n"), Options{TextColumn: "text"}, 3, 1, ErrInvalidCSV, "a TSV record is one line"},
		{"parquet.csv", []byte("PAR1\x15\x00"), Options{TextColumn: "text"}, 0, 0, ErrNotText, "Parquet"},
		{"truncated.csv.gz", storedGzip(t, []byte(good+strings.Repeat("more words,5\n", 3000)))[:600], Options{TextColumn: "text"}, -1, -1, ErrCorrupt, "gzip"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := writeFile(t, dir, c.name, c.data)
			docs, r := readAll([]string{path}, c.opt)
			if c.docs >= 0 && len(docs) != c.docs {
				t.Errorf("%d documents before the error, want %d", len(docs), c.docs)
			}
			line := c.line
			if line < 0 {
				// The truncation's line: the one after the last
				// document read.
				line = docs[len(docs)-1].Line + 1
			}
			wantParseError(t, r.Err(), path, line, c.target)
			if !strings.Contains(r.Err().Error(), c.detail) {
				t.Errorf("message %q does not say %q", r.Err(), c.detail)
			}
		})
	}
}

// naiveCSV is the reference for the CSV reader, built on encoding/csv: the
// column's non-blank fields with the lines they start on, the blank ones
// counted, and the line of the first error with the error it wraps. A
// byte-order mark is dropped first.
func naiveCSV(data []byte, comma rune, column string) (docs []doc, skipped, errLine int64, target error) {
	cr := csv.NewReader(bytes.NewReader(bytes.TrimPrefix(data, []byte("\ufeff"))))
	cr.Comma = comma
	header, err := cr.Read()
	var pe *csv.ParseError
	switch {
	case errors.As(err, &pe):
		return nil, 0, int64(pe.StartLine), ErrInvalidCSV
	case err != nil:
		return nil, 0, 1, ErrInvalidCSV // empty
	}
	col := slices.Index(header, column)
	if col < 0 {
		return nil, 0, 1, ErrNoColumn
	}
	if slices.Contains(header[col+1:], column) {
		return nil, 0, 1, ErrInvalidCSV
	}
	for {
		rec, err := cr.Read()
		switch {
		case err == io.EOF:
			return docs, skipped, 0, nil
		case errors.As(err, &pe):
			return docs, skipped, int64(pe.StartLine), ErrInvalidCSV
		case err != nil:
			panic(err)
		}
		if strings.Trim(rec[col], " \t\r\n\f\v") == "" {
			skipped++
			continue
		}
		line, _ := cr.FieldPos(col)
		docs = append(docs, doc{rec[col], "-", int64(line)})
	}
}

// naiveTSV reads data as TSV the reader's way, a record a line, with a
// regular expression for the fields.
func naiveTSV(data []byte, column string) (docs []doc, skipped, errLine int64, target error) {
	field := regexp.MustCompile(`^(?:"((?:[^"]|"")*)"(?:\t|$)|([^\t]*)(?:\t|$))`)
	var header []string
	col := -1
	for i, line := range strings.Split(strings.TrimPrefix(string(data), "\ufeff"), "\n") {
		line = strings.TrimSuffix(line, "\r")
		if line == "" {
			continue
		}
		var rec []string
		for rest, end := line, false; !end; {
			m := field.FindStringSubmatchIndex(rest)
			if m[2] >= 0 {
				rec = append(rec, strings.ReplaceAll(rest[m[2]:m[3]], `""`, `"`))
			} else {
				rec = append(rec, rest[m[4]:m[5]])
			}
			// The match ends with the separator, if there is one.
			end = m[1] == 0 || rest[m[1]-1] != '\t'
			rest = rest[m[1]:]
		}
		switch {
		case header == nil:
			header = rec
			if col = slices.Index(header, column); col < 0 {
				return nil, 0, 1, ErrNoColumn
			}
			if slices.Contains(header[col+1:], column) {
				return nil, 0, 1, ErrInvalidCSV
			}
			continue
		case len(rec) != len(header):
			return docs, skipped, int64(i + 1), ErrInvalidCSV
		case strings.Trim(rec[col], " \t\r\n\f\v") == "":
			skipped++
		default:
			docs = append(docs, doc{rec[col], "-", int64(i + 1)})
		}
	}
	if header == nil {
		return nil, 0, 1, ErrInvalidCSV // empty
	}
	return docs, skipped, 0, nil
}

// FuzzCSVReader checks the CSV reader against encoding/csv (naiveCSV) and
// the TSV reader against naiveTSV on arbitrary bytes.
func FuzzCSVReader(f *testing.F) {
	f.Add([]byte(csvContent))
	f.Add([]byte("text\n\"open"))
	f.Add([]byte("a,text\n1,\"x\"\"y\"\n2,z\n"))
	f.Add([]byte("text\r\n\r\n\"\r\n\"\r\n"))
	f.Add([]byte("\ufeff\"text\",b\n\"a\nb\",\"\"\n\n x,\"y\"z\n"))
	f.Add([]byte("text\tb\n\"a\tb\"\tc\r\r\n\"\"\"\"\t\"\r"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if notReadAsText(data) {
			return
		}
		for _, format := range []Format{CSV, TSV} {
			comma := ','
			if format == TSV {
				comma = '\t'
			}
			withStdin(t, data)
			got, r := readAll([]string{"-"}, Options{Format: format, TextColumn: "text"})
			want, skipped, errLine, target := naiveCSV(data, comma, "text")
			if format == TSV {
				want, skipped, errLine, target = naiveTSV(data, "text")
			}
			if errLine > 0 {
				var pe *ParseError
				if !errors.As(r.Err(), &pe) || pe.Line != errLine || !errors.Is(r.Err(), target) {
					t.Fatalf("%v: error %v, want %v at line %d", format, r.Err(), target, errLine)
				}
			} else if r.Err() != nil {
				t.Fatalf("%v: %v", format, r.Err())
			}
			equalDocs(t, got, want)
			if r.Skipped() != skipped {
				t.Fatalf("%v: skipped %d, want %d", format, r.Skipped(), skipped)
			}
		}
	})
}
