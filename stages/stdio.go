package stages

import (
	"fmt"
	"io"
	"os"

	"github.com/pwe-project/pwe/formats"
	"github.com/pwe-project/pwe/formats/input"
)

// StdioPath, as an input or output path, means standard input or output:
// vocabularies and counts then travel as Arrow IPC streams.
const StdioPath = "-"

// stdinName names standard input in messages; fingerprints record its path
// as "-".
const stdinName = "stdin"

// oneStdin reports more than one input read from standard input; named
// maps each flag or setting to its path.
func oneStdin(named ...[2]string) error {
	var first string
	for _, n := range named {
		if n[1] != StdioPath {
			continue
		}
		if first != "" {
			return fmt.Errorf("%s and %s both read standard input (-); at most one input can", first, n[0])
		}
		first = n[0]
	}
	return nil
}

func stdinOr(r io.Reader) io.Reader {
	if r == nil {
		return os.Stdin
	}
	return r
}

func stdoutOr(w io.Writer) io.Writer {
	if w == nil {
		return os.Stdout
	}
	return w
}

// readVocab reads vocab.parquet, or an Arrow stream from stdin for "-", and
// fingerprints what it read. Where indexed is true, the caller indexes the
// tokens, which finds a repeated one, and a file's are not checked for
// repeats (formats.ReadVocabRows).
func readVocab(path string, stdin io.Reader, indexed bool) ([]formats.VocabRow, formats.Meta, input.Fingerprint, error) {
	if path == StdioPath {
		rows, meta, sum, err := formats.ReadVocabStream(stdinOr(stdin), stdinName)
		return rows, meta, input.Fingerprint{Path: StdioPath, Size: sum.Size, SHA256: sum.SHA256}, err
	}
	read := formats.ReadVocab
	if indexed {
		read = formats.ReadVocabRows
	}
	rows, meta, err := read(path)
	if err != nil {
		return nil, meta, input.Fingerprint{}, err
	}
	fp, err := input.FingerprintFile(path)
	return rows, meta, fp, err
}

// countsSource is what counts.parquet and a counts stream both offer.
type countsSource interface {
	Read(buf []formats.CountRow) (int, error)
	Meta() formats.Meta
	Path() string
	Close() error
	// fingerprint identifies the input; for a stream it is complete only
	// after Read has returned io.EOF.
	fingerprint() (input.Fingerprint, error)
}

type parquetCounts struct {
	*formats.Reader[formats.CountRow]
}

func (p parquetCounts) fingerprint() (input.Fingerprint, error) {
	return input.FingerprintFile(p.Path())
}

type streamCounts struct {
	*formats.StreamReader[formats.CountRow]
}

func (s streamCounts) fingerprint() (input.Fingerprint, error) {
	return input.Fingerprint{Path: StdioPath, Size: s.Size(), SHA256: s.SHA256()}, nil
}

// openCounts opens counts.parquet, or an Arrow stream on stdin for "-".
func openCounts(path string, stdin io.Reader) (countsSource, error) {
	if path == StdioPath {
		r, err := formats.OpenCountsStream(stdinOr(stdin), stdinName)
		if err != nil {
			return nil, err
		}
		return streamCounts{r}, nil
	}
	r, err := formats.Open[formats.CountRow](path, formats.SchemaCounts)
	if err != nil {
		return nil, err
	}
	return parquetCounts{r}, nil
}

// countsSink is what counts.parquet and a counts stream both take.
type countsSink interface {
	Write(rows []formats.CountRow) error
	TakeColumns(cols *formats.CountColumns) error
	SetStats(stats any) error
	Close() error
	Abort()
}

// createCounts starts counts.parquet, or an Arrow stream on stdout for "-".
func createCounts(path string, stdout io.Writer, meta formats.Meta, manyValues bool) (countsSink, error) {
	if path == StdioPath {
		meta.Schema = formats.SchemaCounts
		return formats.CreateCountsStream(stdoutOr(stdout), meta)
	}
	return formats.CreateCounts(path, meta, manyValues)
}

// writeVocab writes vocab.parquet, or an Arrow stream on stdout for "-".
func writeVocab(path string, stdout io.Writer, rows []formats.VocabRow, meta formats.Meta) error {
	if path != StdioPath {
		return formats.WriteVocab(path, rows, meta)
	}
	w, err := formats.CreateVocabStream(stdoutOr(stdout), meta)
	if err != nil {
		return err
	}
	defer w.Abort()
	if err := w.Write(rows); err != nil {
		return fmt.Errorf("standard output: %w", err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("standard output: %w", err)
	}
	return nil
}
