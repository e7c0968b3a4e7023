package movielens

import (
	"bytes"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strings"
	"unicode/utf8"

	"github.com/pwe-project/pwe/formats/input"
)

// Titles holds the titles of a movies file.
type Titles struct {
	// ByID maps movie ids to titles; movies with an empty title are left
	// out.
	ByID map[int32]string
	// Latin1 reports that the file was decoded as Latin-1: always for u.item,
	// and for movies.dat or movies.csv when they are not valid UTF-8.
	Latin1 bool
	// Skipped counts malformed lines skipped (Options.SkipBadLines), and
	// FirstSkipped is the first one's error.
	Skipped      int64
	FirstSkipped error
	// Fingerprint describes the file's raw bytes.
	Fingerprint input.Fingerprint
}

// ReadTitles reads the movies file at path (u.item, movies.dat or
// movies.csv, possibly compressed). opt.Format gives its layout; Auto
// recognises it from the first line.
func ReadTitles(path string, opt Options) (*Titles, error) {
	f, err := input.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(f)
	if err != nil {
		return nil, err
	}
	t := &Titles{ByID: make(map[int32]string), Fingerprint: f.Fingerprint()}
	data = bytes.TrimPrefix(data, utf8BOM)
	format := opt.Format
	if format == Auto {
		if format, err = detectTitles(data); err != nil {
			return nil, &input.ParseError{Path: path, Line: 1, Err: err}
		}
	}
	var text string
	if t.Latin1 = format == Format100K || !utf8.Valid(data); t.Latin1 {
		text = decodeLatin1(data)
	} else {
		text = string(data)
	}
	p := titleParser{t: t, path: path, skip: opt.SkipBadLines, lines: make(map[int32]int64)}
	if format == FormatCSV {
		err = p.readCSV(text)
	} else {
		err = p.readLines(text, format)
	}
	if err != nil {
		return nil, err
	}
	return t, nil
}

func detectTitles(data []byte) (Format, error) {
	first, _, _ := bytes.Cut(data, []byte("\n"))
	first = trimLine(first)
	switch {
	case bytes.HasPrefix(bytes.ToLower(first), []byte("movieid,")):
		return FormatCSV, nil
	case bytes.Contains(first, []byte("::")):
		return FormatDat, nil
	case bytes.IndexByte(first, '|') >= 0:
		return Format100K, nil
	}
	return Auto, fmt.Errorf("%w: first line %q is not that of u.item, movies.dat or movies.csv", ErrUnknownFormat, truncate(first))
}

// decodeLatin1 maps every byte to the code point of the same value.
func decodeLatin1(b []byte) string {
	var sb strings.Builder
	sb.Grow(len(b) + len(b)/8)
	for _, c := range b {
		if c < utf8.RuneSelf {
			sb.WriteByte(c)
		} else {
			sb.WriteRune(rune(c))
		}
	}
	return sb.String()
}

type titleParser struct {
	t     *Titles
	path  string
	skip  bool
	lines map[int32]int64 // line of each id, to report repeats
}

// bad records a malformed line: an error, or a skipped line.
func (p *titleParser) bad(line int64, format string, args ...any) error {
	pe := &input.ParseError{Path: p.path, Line: line, Err: fmt.Errorf("%w: "+format, append([]any{ErrMalformed}, args...)...)}
	if !p.skip {
		return pe
	}
	if p.t.Skipped == 0 {
		p.t.FirstSkipped = pe
	}
	p.t.Skipped++
	return nil
}

func (p *titleParser) add(line int64, idField, title string) error {
	id, ok := parseUint([]byte(idField), math.MaxInt32)
	if !ok {
		return p.bad(line, "movie id %q: want an integer from 0 to 2147483647", truncate([]byte(idField)))
	}
	if prev, dup := p.lines[int32(id)]; dup {
		return p.bad(line, "movie id %d already given on line %d", id, prev)
	}
	p.lines[int32(id)] = line
	if title = strings.TrimSpace(title); title != "" {
		p.t.ByID[int32(id)] = title
	}
	return nil
}

// readLines reads u.item ("id|title|date|...") or movies.dat
// ("id::title::genres").
func (p *titleParser) readLines(text string, format Format) error {
	sep, want := "|", "id|title|release date|..."
	if format == FormatDat {
		sep, want = "::", "id::title::genres"
	}
	var line int64
	for len(text) > 0 {
		var l string
		l, text, _ = strings.Cut(text, "\n")
		line++
		l = strings.TrimSuffix(l, "\r")
		if strings.TrimSpace(l) == "" {
			continue
		}
		id, rest, ok := strings.Cut(l, sep)
		if !ok {
			if err := p.bad(line, "want %s: %q", want, truncate([]byte(l))); err != nil {
				return err
			}
			continue
		}
		title := rest
		if format == FormatDat {
			// Genres follow the last separator; a title never holds "::".
			if i := strings.LastIndex(rest, sep); i >= 0 {
				title = rest[:i]
			}
		} else {
			title, _, _ = strings.Cut(rest, sep)
		}
		if err := p.add(line, id, title); err != nil {
			return err
		}
	}
	return nil
}

// readCSV reads movies.csv: the header movieId,title,genres, then quoted
// fields where they hold commas or quotes (RFC 4180).
func (p *titleParser) readCSV(text string) error {
	r := csv.NewReader(strings.NewReader(text))
	r.FieldsPerRecord = -1
	r.ReuseRecord = true
	first := true
	for {
		rec, err := r.Read()
		if err == io.EOF {
			return nil
		}
		line, _ := r.FieldPos(0)
		if err != nil {
			var ce *csv.ParseError
			if errors.As(err, &ce) {
				if err := p.bad(int64(ce.StartLine), "%v", ce.Err); err != nil {
					return err
				}
				continue
			}
			return &input.ParseError{Path: p.path, Err: err}
		}
		if first {
			first = false
			if strings.EqualFold(strings.TrimSpace(rec[0]), "movieId") {
				continue
			}
		}
		if len(rec) < 2 {
			if err := p.bad(int64(line), "want movieId,title,genres, found %d field", len(rec)); err != nil {
				return err
			}
			continue
		}
		if err := p.add(int64(line), rec[0], rec[1]); err != nil {
			return err
		}
	}
}
