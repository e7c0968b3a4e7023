package input

import (
	"errors"
	"fmt"
)

// Format is the layout of the documents inside an input.
type Format int

const (
	Text    Format = iota // a document per line, or per paragraph (Options.DocSep)
	JSONL                 // a JSON object per line; the document is Options.TextField
	Parquet               // the document is the string column Options.TextColumn
	CSV                   // CSV with a header row; the document is the column Options.TextColumn
	TSV                   // CSV separated by tabs
)

func (f Format) String() string {
	switch f {
	case Text:
		return "text"
	case JSONL:
		return "jsonl"
	case Parquet:
		return "parquet"
	case CSV:
		return "csv"
	case TSV:
		return "tsv"
	}
	return fmt.Sprintf("Format(%d)", int(f))
}

// ParseFormat maps the names printed by Format.String back to formats, for
// command-line flags and configuration files.
func ParseFormat(s string) (Format, error) {
	switch s {
	case "text", "txt":
		return Text, nil
	case "jsonl", "ndjson":
		return JSONL, nil
	case "parquet":
		return Parquet, nil
	case "csv":
		return CSV, nil
	case "tsv":
		return TSV, nil
	}
	return 0, fmt.Errorf("input: unknown format %q (want text, jsonl, parquet, csv or tsv)", s)
}

// Document separators for Text.
const (
	DocSepLine  = "line"
	DocSepBlank = "blank"
	DocSepFile  = "file"
)

// DefaultMaxLineBytes bounds one line (or one paragraph, or with DocSepFile
// one input) so that a file without newlines is reported instead of
// exhausting memory.
const DefaultMaxLineBytes = 64 << 20

// Options say how inputs are split into documents.
type Options struct {
	// Format of every input. The zero value means Text, unless TextField
	// is set (then JSONL) or TextColumn is set (then Parquet, except for
	// files named .csv or .tsv, compressed or not, read as CSV or TSV).
	Format Format
	// DocSep is "line" (the default): every non-blank line is a document;
	// "blank": paragraphs separated by blank lines (lines holding only
	// spaces and tabs count as blank), their lines joined with '\n'; or
	// "file": each input (a file, an archive's member, a WARC record) is
	// one document, its non-blank lines joined with '\n'. Text only.
	DocSep string
	// TextField names the string field of each JSONL object: a top-level
	// key, or a path through nested objects ("meta.body") where no key has
	// the whole name. Lines where it is null or missing are skipped and
	// counted (Reader.Skipped).
	TextField string
	// TextColumn names the Parquet string column, nested columns by their
	// dotted path, or the CSV column by its header. Null values (empty
	// CSV fields) are skipped and counted.
	TextColumn string
	// MaxLineBytes bounds a line (text, JSONL), a paragraph or a CSV
	// record; longer ones are an error. Zero means DefaultMaxLineBytes.
	MaxLineBytes int
	// TempDir is where a zip archive that comes as a stream (standard
	// input, or compressed) is copied to be read; "" is the system's.
	TempDir string

	// columnImplied: Parquet came from TextColumn, not from Format.
	columnImplied bool
}

func (o Options) withDefaults() Options {
	if o.Format == Text {
		switch {
		case o.TextField != "" && o.TextColumn == "":
			o.Format = JSONL
		case o.TextColumn != "" && o.TextField == "":
			o.Format, o.columnImplied = Parquet, true
		}
	}
	if o.DocSep == "" {
		o.DocSep = DocSepLine
	}
	if o.MaxLineBytes == 0 {
		o.MaxLineBytes = DefaultMaxLineBytes
	}
	return o
}

// Validate reports settings that contradict each other.
func (o Options) Validate() error {
	if o.TextField != "" && o.TextColumn != "" {
		return errors.New("input: --text-field (JSON Lines) and --text-column (Parquet) exclude each other")
	}
	if o.MaxLineBytes < 0 {
		return fmt.Errorf("input: MaxLineBytes is %d, want >= 0", o.MaxLineBytes)
	}
	o = o.withDefaults()
	if o.DocSep != DocSepLine && o.DocSep != DocSepBlank && o.DocSep != DocSepFile {
		return fmt.Errorf("input: --doc-sep %q, want %s, %s or %s", o.DocSep, DocSepLine, DocSepBlank, DocSepFile)
	}
	switch o.Format {
	case Text:
		if o.TextField != "" || o.TextColumn != "" {
			return errors.New("input: --text-field and --text-column do not apply to text input")
		}
	case JSONL:
		if o.TextField == "" {
			return errors.New("input: JSON Lines input needs --text-field, the field that holds the text")
		}
		if o.TextColumn != "" {
			return errors.New("input: --text-column does not apply to JSON Lines input")
		}
	case Parquet, CSV, TSV:
		if o.TextColumn == "" {
			return fmt.Errorf("input: %v input needs --text-column, the column that holds the text", o.Format)
		}
		if o.TextField != "" {
			return fmt.Errorf("input: --text-field does not apply to %v input", o.Format)
		}
	default:
		return fmt.Errorf("input: unknown %v", o.Format)
	}
	if o.DocSep != DocSepLine && o.Format != Text {
		return fmt.Errorf("input: --doc-sep %s applies only to text input", o.DocSep)
	}
	return nil
}
