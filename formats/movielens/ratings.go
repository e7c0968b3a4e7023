package movielens

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/pwe-project/pwe/formats/input"
	"github.com/pwe-project/pwe/internal/bytesize"
)

// Rating is one line of a ratings file.
type Rating struct {
	User  int32
	Movie int32
	// HalfStars is the rating times two: 1 is half a star, 10 five stars.
	HalfStars uint8
	// Time is the timestamp in seconds since 1970.
	Time int64
}

// Stars returns the rating in stars.
func (r Rating) Stars() float64 { return float64(r.HalfStars) / 2 }

// Options control a Reader.
type Options struct {
	// Format forces the layout; Auto recognises it from the first line.
	Format Format
	// SkipBadLines skips malformed lines, counting them, instead of
	// stopping at the first.
	SkipBadLines bool
	// OnRead, if set, is told the raw bytes read from the file opened by
	// Open (see input.File.OnRead), for progress reports.
	OnRead func(rawBytes int64)
}

var separators = [...][]byte{Format100K: []byte("\t"), FormatDat: []byte("::"), FormatCSV: []byte(",")}

// Limits of a rating's fields that pwe reads: it packs a rating in 8 bytes
// (tokenize/baskets), the movie id in 28 bits and the timestamp in 32. A
// line beyond them is malformed, so that --skip-bad-lines skips it.
const (
	MaxMovieID = 1<<28 - 1
	MaxTime    = math.MaxUint32 // 2106-02-07
)

// maxLine bounds a line; a longer one is malformed (real lines are below
// 50 bytes).
const maxLine = 1 << 16

// Reader reads the ratings of a file one line at a time, in the manner of
// bufio.Scanner: Next advances, Rating returns the current rating, Err
// the error that stopped Next.
type Reader struct {
	path    string
	file    *input.File // nil when reading a plain io.Reader
	br      *bufio.Reader
	format  Format
	sep     []byte
	opt     Options
	pending []byte // the first line, held back while detecting the layout
	line    int64
	cur     Rating
	err     error
	skipped int64
	badLine error // the first skipped line's error
}

// Open opens the ratings file at path, decompressing it if need be, and
// recognises its layout unless opt forces one.
func Open(path string, opt Options) (*Reader, error) {
	f, err := input.Open(path)
	if err != nil {
		return nil, err
	}
	if opt.OnRead != nil {
		f.OnRead(opt.OnRead)
	}
	r, err := newReader(f, path, opt)
	if err != nil {
		f.Close()
		return nil, err
	}
	r.file = f
	return r, nil
}

// NewReader reads ratings from rd; path names it in errors.
func NewReader(rd io.Reader, path string, opt Options) (*Reader, error) {
	return newReader(rd, path, opt)
}

func newReader(rd io.Reader, path string, opt Options) (*Reader, error) {
	if opt.Format < Auto || opt.Format > FormatCSV {
		return nil, fmt.Errorf("movielens: unknown format %d", int(opt.Format))
	}
	r := &Reader{path: path, br: bufio.NewReaderSize(rd, 1<<20), opt: opt}
	// The layout comes from the first non-blank line.
	for {
		line, err := r.readLine()
		if err == io.EOF {
			return nil, &input.ParseError{Path: path, Err: ErrEmpty}
		}
		if errors.Is(err, ErrMalformed) {
			return nil, &input.ParseError{Path: path, Line: r.line, Err: err}
		}
		if err != nil {
			return nil, err
		}
		if r.line == 1 {
			line = bytes.TrimPrefix(line, utf8BOM)
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		f, header, derr := Detect(line)
		if opt.Format != Auto {
			f = opt.Format
			header = f == FormatCSV && isCSVHeader(trimLine(line))
		} else if derr != nil {
			return nil, &input.ParseError{Path: path, Line: r.line, Err: derr}
		}
		r.format = f
		r.sep = separators[f]
		if !header {
			r.pending = append([]byte(nil), line...)
		}
		return r, nil
	}
}

// readLine returns the next line without its ending; the slice is valid
// until the next call. A line longer than maxLine is consumed and reported
// as malformed.
func (r *Reader) readLine() ([]byte, error) {
	line, err := r.br.ReadSlice('\n')
	if err == bufio.ErrBufferFull || len(line) > maxLine {
		for err == bufio.ErrBufferFull {
			_, err = r.br.ReadSlice('\n')
		}
		r.line++
		if err != nil && err != io.EOF {
			return nil, err
		}
		return nil, fmt.Errorf("%w: line longer than %s", ErrMalformed, bytesize.Format(maxLine))
	}
	if err == io.EOF && len(line) == 0 {
		return nil, io.EOF
	}
	if err != nil && err != io.EOF {
		return nil, err
	}
	r.line++
	return trimLine(line), nil
}

// Format returns the layout being read.
func (r *Reader) Format() Format { return r.format }

// Path returns the path given to Open or NewReader.
func (r *Reader) Path() string { return r.path }

// Line returns the 1-based line of the current rating.
func (r *Reader) Line() int64 { return r.line }

// Rating returns the rating read by the last successful Next.
func (r *Reader) Rating() Rating { return r.cur }

// Skipped returns how many malformed lines were skipped (SkipBadLines).
func (r *Reader) Skipped() int64 { return r.skipped }

// FirstSkipped returns the error of the first skipped line, or nil.
func (r *Reader) FirstSkipped() error { return r.badLine }

// Err returns the error that ended Next, or nil at the end of the file.
func (r *Reader) Err() error { return r.err }

// Fingerprint describes the raw bytes of a file opened with Open, complete
// once Next has returned false without error.
func (r *Reader) Fingerprint() input.Fingerprint {
	if r.file == nil {
		return input.Fingerprint{Path: r.path}
	}
	return r.file.Fingerprint()
}

// Close releases the file.
func (r *Reader) Close() error {
	if r.file == nil {
		return nil
	}
	return r.file.Close()
}

// Next reads the next rating, skipping blank lines; it returns false at the
// end of the file or on an error (see Err).
func (r *Reader) Next() bool {
	if r.err != nil {
		return false
	}
	for {
		var line []byte
		var err error
		if r.pending != nil {
			line, r.pending = r.pending, nil
		} else {
			line, err = r.readLine()
		}
		if err == nil {
			if isBlank(line) {
				continue
			}
			err = r.parse(line)
		}
		switch {
		case err == nil:
			return true
		case err == io.EOF:
			return false
		case errors.Is(err, ErrMalformed):
			pe := &input.ParseError{Path: r.path, Line: r.line, Err: err}
			if !r.opt.SkipBadLines {
				r.err = pe
				return false
			}
			if r.skipped == 0 {
				r.badLine = pe
			}
			r.skipped++
		default:
			var pe *input.ParseError
			if !errors.As(err, &pe) {
				err = &input.ParseError{Path: r.path, Line: r.line, Err: err}
			}
			r.err = err
			return false
		}
	}
}

func isBlank(line []byte) bool {
	for _, c := range line {
		if c != ' ' && c != '\t' {
			return false
		}
	}
	return true
}

// fieldNames name the four fields in messages.
var fieldNames = [...]string{"user id", "movie id", "rating", "timestamp"}

// parse reads the four fields of a line into r.cur without allocating.
func (r *Reader) parse(line []byte) error {
	rest := line
	var fields [4][]byte
	for i := range fields {
		if i == len(fields)-1 {
			fields[i] = rest
			break
		}
		var j int
		if len(r.sep) == 1 {
			j = bytes.IndexByte(rest, r.sep[0])
		} else {
			j = bytes.Index(rest, r.sep)
		}
		if j < 0 {
			return r.malformed(line, fmt.Sprintf("want 4 fields separated by %q, found %d", r.sep, i+1))
		}
		fields[i], rest = rest[:j], rest[j+len(r.sep):]
	}
	if bytes.Contains(fields[3], r.sep) {
		return r.malformed(line, fmt.Sprintf("want 4 fields separated by %q, found more", r.sep))
	}
	user, ok := parseUint(fields[0], math.MaxInt32)
	if !ok {
		return r.badField(line, 0, fields[0], "an integer from 0 to 2147483647")
	}
	movie, ok := parseUint(fields[1], MaxMovieID)
	if !ok {
		return r.badField(line, 1, fields[1], "an integer from 0 to 268435455")
	}
	half, ok := parseHalfStars(fields[2])
	if !ok {
		return r.badField(line, 2, fields[2], "a number from 0 to 5 in steps of 0.5")
	}
	ts, ok := parseUint(fields[3], MaxTime)
	if !ok {
		return r.badField(line, 3, fields[3], "seconds since 1970, from 0 to 4294967295 (the year 2106)")
	}
	r.cur = Rating{User: int32(user), Movie: int32(movie), HalfStars: half, Time: int64(ts)}
	return nil
}

func (r *Reader) malformed(line []byte, what string) error {
	return fmt.Errorf("%w (%s layout): %s: %q", ErrMalformed, r.format, what, truncate(line))
}

func (r *Reader) badField(line []byte, i int, field []byte, want string) error {
	return fmt.Errorf("%w (%s layout): %s %q: want %s: %q", ErrMalformed, r.format, fieldNames[i], truncate(field), want, truncate(line))
}

// parseUint reads a decimal integer no larger than max, allowing spaces
// around it.
func parseUint(b []byte, max uint64) (uint64, bool) {
	b = trimSpaces(b)
	if len(b) == 0 || len(b) > 19 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + uint64(c-'0')
	}
	return v, v <= max
}

// parseHalfStars reads a rating from 0 to 5 in steps of 0.5 ("4", "4.0",
// "3.5", "3.50") as twice its value.
func parseHalfStars(b []byte) (uint8, bool) {
	b = trimSpaces(b)
	if len(b) == 0 || b[0] < '0' || b[0] > '5' {
		return 0, false
	}
	half := 2 * (b[0] - '0')
	b = b[1:]
	if len(b) == 0 {
		return half, true
	}
	if b[0] != '.' || len(b) == 1 {
		return 0, false
	}
	for i, c := range b[1:] {
		switch {
		case i == 0 && c == '5':
			half++
		case c != '0':
			return 0, false
		}
	}
	return half, half <= 10
}

func trimSpaces(b []byte) []byte {
	for len(b) > 0 && b[0] == ' ' {
		b = b[1:]
	}
	for len(b) > 0 && b[len(b)-1] == ' ' {
		b = b[:len(b)-1]
	}
	return b
}
