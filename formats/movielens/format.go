package movielens

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Format is the layout of a MovieLens ratings file and its movies file.
type Format int

const (
	// Auto recognises the layout from the first line of the ratings file.
	Auto Format = iota
	// Format100K is ml-100k: u.data (tab-separated) and u.item.
	Format100K
	// FormatDat is ml-1m and ml-10m: ratings.dat and movies.dat ("::").
	FormatDat
	// FormatCSV is ml-20m and later: ratings.csv and movies.csv.
	FormatCSV
)

var formatNames = [...]string{Auto: "auto", Format100K: "100k", FormatDat: "dat", FormatCSV: "csv"}

func (f Format) String() string {
	if f >= 0 && int(f) < len(formatNames) {
		return formatNames[f]
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// MarshalText records the format by name in configurations.
func (f Format) MarshalText() ([]byte, error) { return []byte(f.String()), nil }

// ParseFormat reads "100k", "dat", "csv", or "auto" (also "").
func ParseFormat(s string) (Format, error) {
	if s == "" {
		return Auto, nil
	}
	for f, name := range formatNames {
		if strings.EqualFold(s, name) {
			return Format(f), nil
		}
	}
	return Auto, fmt.Errorf("movielens: format %q, want 100k, dat or csv", s)
}

// Errors; test for them with errors.Is.
var (
	// ErrMalformed is wrapped by the *input.ParseError of a line that does
	// not hold what its format says.
	ErrMalformed = errors.New("movielens: malformed line")
	// ErrUnknownFormat is returned when the first line of a ratings file
	// matches none of the layouts.
	ErrUnknownFormat = errors.New("movielens: not a MovieLens ratings file")
	// ErrEmpty is returned for a ratings file without a rating.
	ErrEmpty = errors.New("movielens: no ratings")
)

// csvHeader is the first line of every ratings.csv.
var csvHeader = []string{"userId", "movieId", "rating", "timestamp"}

// Detect recognises the layout from the first line of a ratings file (a
// byte-order mark and a trailing CR or LF are ignored). header reports that
// the line is the csv header rather than a rating.
func Detect(line []byte) (f Format, header bool, err error) {
	line = trimLine(bytes.TrimPrefix(line, utf8BOM))
	switch {
	case isCSVHeader(line):
		return FormatCSV, true, nil
	case bytes.Contains(line, []byte("::")):
		return FormatDat, false, nil
	case bytes.IndexByte(line, '\t') >= 0:
		return Format100K, false, nil
	case bytes.IndexByte(line, ',') >= 0:
		return FormatCSV, false, nil
	}
	return Auto, false, fmt.Errorf("%w: first line %q is neither tab-separated (u.data), ::-separated (ratings.dat) nor comma-separated (ratings.csv)",
		ErrUnknownFormat, truncate(line))
}

var utf8BOM = []byte{0xef, 0xbb, 0xbf}

func isCSVHeader(line []byte) bool {
	fields := strings.Split(string(line), ",")
	if len(fields) != len(csvHeader) {
		return false
	}
	for i, f := range fields {
		if !strings.EqualFold(strings.TrimSpace(f), csvHeader[i]) {
			return false
		}
	}
	return true
}

// trimLine drops the line ending (LF or CRLF).
func trimLine(line []byte) []byte {
	if n := len(line); n > 0 && line[n-1] == '\n' {
		line = line[:n-1]
	}
	if n := len(line); n > 0 && line[n-1] == '\r' {
		line = line[:n-1]
	}
	return line
}

func truncate(b []byte) string {
	const max = 80
	if len(b) > max {
		return string(b[:max]) + "..."
	}
	return string(b)
}

// titlesName is the conventional name of each layout's movies file.
var titlesName = [...]string{Format100K: "u.item", FormatDat: "movies.dat", FormatCSV: "movies.csv"}

// TitlesPath returns the movies file that conventionally accompanies the
// ratings file at ratingsPath (u.item, movies.dat or movies.csv in the same
// directory, possibly compressed with .gz, .zst or .bz2), or "" when there
// is none.
func TitlesPath(ratingsPath string, f Format) string {
	if f <= Auto || int(f) >= len(titlesName) || ratingsPath == "-" {
		return ""
	}
	base := filepath.Join(filepath.Dir(ratingsPath), titlesName[f])
	for _, ext := range []string{"", ".gz", ".zst", ".bz2"} {
		if st, err := os.Stat(base + ext); err == nil && st.Mode().IsRegular() {
			return base + ext
		}
	}
	return ""
}
