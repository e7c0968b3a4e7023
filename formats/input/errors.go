package input

import (
	"errors"
	"fmt"
)

// Sentinel errors; test for them with errors.Is.
var (
	ErrNoMatch       = errors.New("input: pattern matches no files")
	ErrNoFiles       = errors.New("input: directory contains no files")
	ErrStdinTwice    = errors.New(`input: "-" (stdin) given more than once`)
	ErrNamedTwice    = errors.New("input: the file is named more than once, and would be counted as often")
	ErrSkippedDir    = errors.New("input: the directory holds the run's outputs, so it is not read as input")
	ErrWrongMagic    = errors.New("input: data does not match the file extension")
	ErrCorrupt       = errors.New("input: corrupt or truncated compressed data")
	ErrLineTooLong   = errors.New("input: line too long")
	ErrInvalidJSON   = errors.New("input: invalid JSON")
	ErrNotObject     = errors.New("input: JSON line is not an object")
	ErrNotString     = errors.New("input: JSON field is not a string")
	ErrNotParquet    = errors.New("input: not a Parquet file")
	ErrNoColumn      = errors.New("input: no such column")
	ErrColumnType    = errors.New("input: column does not hold strings")
	ErrParquetStream = errors.New("input: Parquet input must be a file on disk, not stdin")
	ErrNotText       = errors.New("input: a binary file where text was expected")
	ErrInvalidCSV    = errors.New("input: invalid CSV")
	ErrEmptyArchive  = errors.New("input: archive contains no files")
	ErrBadArchive    = errors.New("input: truncated or damaged archive")
	ErrBadWARC       = errors.New("input: malformed WARC file")
	ErrWARCNotText   = errors.New("input: WARC records of web pages as fetched (HTTP and HTML), not text: read the crawl's WET files (.warc.wet.gz), which hold each page's text")
)

// ParseError reports a problem with one input, with the position where it
// was found, in the manner of encoding/csv's ParseError.
type ParseError struct {
	Path string // the input as given ("-" for stdin)
	Line int64  // 1-based line (text, JSONL) or row (Parquet); 0 when the problem concerns the whole file
	Err  error  // the underlying error
}

func (e *ParseError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.Path, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.Path, e.Err)
}

func (e *ParseError) Unwrap() error { return e.Err }
