package formats

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"strings"

	"github.com/parquet-go/parquet-go"
)

// DumpOptions control Dump.
type DumpOptions struct {
	// Rows is how many rows to print (negative: all).
	Rows int
	// Stable leaves out the metadata that changes from run to run
	// (pwe.version, pwe.created_at) and the input paths' directories, so
	// that dumps can be compared with golden files.
	Stable bool
}

// Dump writes a readable account of any Parquet file: its schema, its
// key-value metadata (JSON values pretty-printed) and its first rows, one
// line per row with lists in brackets. It serves `pwe inspect` and golden
// tests.
func Dump(w io.Writer, path string, opt DumpOptions) (err error) {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	defer recoverDamaged(&err, path, -1)
	st, err := f.Stat()
	if err != nil {
		return err
	}
	var magic [len(tokensMagic)]byte
	if n, _ := f.ReadAt(magic[:], 0); n == len(magic) && string(magic[:]) == tokensMagic {
		return dumpTokenStream(w, path, opt)
	}
	pf, err := openParquetFile(f, path, st.Size())
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "rows: %d\n%s\n", pf.NumRows(), pf.Schema())
	meta := map[string]string{}
	for _, p := range pf.Metadata().KeyValueMetadata {
		meta[p.Key] = p.Value
	}
	writeMeta(w, meta, opt)
	if opt.Rows == 0 {
		return nil
	}
	columns := pf.Schema().Columns()
	names := make([]string, len(columns))
	for i, c := range columns {
		names[i] = strings.Join(c, ".")
	}
	fmt.Fprintf(w, "rows (%s):\n", strings.Join(names, ", "))
	r := parquet.NewReader(pf)
	defer r.Close()
	buf := make([]parquet.Row, 64)
	printed := 0
	for opt.Rows < 0 || printed < opt.Rows {
		n, err := r.ReadRows(buf)
		for _, row := range buf[:n] {
			if opt.Rows >= 0 && printed == opt.Rows {
				break
			}
			fmt.Fprintf(w, "  %s\n", formatRow(row, len(columns)))
			printed++
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return fmt.Errorf("%s: row %d: %w", path, printed, err)
		}
	}
	return nil
}

// formatRow prints a row's leaf values column by column; a column with more
// than one value, or a repeated one, prints as a list.
func formatRow(row parquet.Row, ncol int) string {
	cols := make([][]string, ncol)
	repeated := make([]bool, ncol)
	for _, v := range row {
		c := v.Column()
		if v.RepetitionLevel() > 0 || v.DefinitionLevel() > 1 {
			repeated[c] = true
		}
		cols[c] = append(cols[c], formatValue(v))
	}
	parts := make([]string, ncol)
	for c, vals := range cols {
		if repeated[c] || len(vals) != 1 {
			parts[c] = "[" + strings.Join(vals, " ") + "]"
		} else {
			parts[c] = vals[0]
		}
	}
	return strings.Join(parts, " | ")
}

func formatValue(v parquet.Value) string {
	if v.IsNull() {
		return "null"
	}
	switch v.Kind() {
	case parquet.Boolean:
		return strconv.FormatBool(v.Boolean())
	case parquet.Int32:
		return strconv.FormatInt(int64(v.Int32()), 10)
	case parquet.Int64:
		return strconv.FormatInt(v.Int64(), 10)
	case parquet.Float:
		return strconv.FormatFloat(float64(v.Float()), 'g', -1, 32)
	case parquet.Double:
		return strconv.FormatFloat(v.Double(), 'g', -1, 64)
	case parquet.ByteArray, parquet.FixedLenByteArray:
		return strconv.Quote(string(v.ByteArray()))
	}
	return v.String()
}

func indentJSON(s string) string {
	var v any
	if json.Unmarshal([]byte(s), &v) != nil {
		return s
	}
	b, err := json.MarshalIndent(v, "  ", "  ")
	if err != nil {
		return s
	}
	return string(b)
}

// stableInputs keeps only the base name of each input path.
func stableInputs(s string) string {
	var inputs []map[string]any
	if json.Unmarshal([]byte(s), &inputs) != nil {
		return s
	}
	for _, in := range inputs {
		if p, ok := in["path"].(string); ok {
			if i := strings.LastIndexByte(p, '/'); i >= 0 {
				in["path"] = p[i+1:]
			}
		}
	}
	b, _ := json.Marshal(inputs)
	return string(b)
}

// dumpTokenStream prints a token stream's size, metadata and first
// documents, as tokens.
func dumpTokenStream(w io.Writer, path string, opt DumpOptions) error {
	s, err := OpenTokenStream(path)
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Fprintf(w, "token stream (%s): %d distinct tokens, %d bytes of documents\n", TokenStreamSchema, s.DictLen, s.ChunkBytes())
	writeMeta(w, s.kv, opt)
	if opt.Rows == 0 {
		return nil
	}
	tokens := make([]string, 0, s.DictLen)
	if err := s.Dictionary(func(_ int, tok []byte, _ int64) error {
		tokens = append(tokens, string(tok))
		return nil
	}); err != nil {
		return err
	}
	fmt.Fprintln(w, "documents (ordinal: tokens):")
	var c TokenChunk
	for printed := 0; opt.Rows < 0 || printed < opt.Rows; {
		ok, err := s.NextChunk(&c)
		if err != nil || !ok {
			return err
		}
		if err := c.Decode(); err != nil {
			return err
		}
		ids := c.IDs
		for d, n := range c.DocLens {
			if opt.Rows >= 0 && printed == opt.Rows {
				break
			}
			toks := make([]string, n)
			for i, id := range ids[:n] {
				toks[i] = tokens[id]
			}
			ids = ids[n:]
			fmt.Fprintf(w, "  %d: %s\n", c.DocSeq+int64(d), strings.Join(toks, " "))
			printed++
		}
	}
	return nil
}

// writeMeta prints key-value metadata sorted by key; Stable leaves out
// the version and creation time and keeps only the inputs' names.
func writeMeta(w io.Writer, meta map[string]string, opt DumpOptions) {
	keys := make([]string, 0, len(meta))
	for k := range meta {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	fmt.Fprintln(w, "metadata:")
	for _, k := range keys {
		v := meta[k]
		if opt.Stable && (k == KeyVersion || k == KeyCreatedAt) {
			continue
		}
		if opt.Stable && k == KeyInputs {
			v = stableInputs(v)
		}
		fmt.Fprintf(w, "  %s: %s\n", k, indentJSON(v))
	}
}
