package formats

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/ipc"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// arrow-go trusts the counts and sizes in a stream's messages: it
// allocates as many fields, children, metadata pairs and union type ids
// as a schema's flatbuffer says there are, as many bytes as a compressed
// buffer says it takes decompressed, and reads a batch's buffers by index
// past the end of their vector. On a damaged stream a count can be
// billions, and the allocation kills the process: recover cannot catch
// it. So each message is checked here before arrow-go sees it; pwe's
// streams have a handful of columns and metadata keys.
const (
	// maxStreamFields bounds the fields of a stream's schema, children
	// included.
	maxStreamFields = 1024
	// maxStreamPairs bounds a schema's or a field's metadata pairs.
	maxStreamPairs = 1024
	// maxMessageMeta bounds a message's flatbuffer (arrow-go's default
	// limit).
	maxMessageMeta = 64 << 20
	// maxStreamBody bounds a record batch's body: 1 GiB, 44 M rows of
	// counts, where pwe writes batches of StreamBatchRows (1.5 MB) and
	// DuckDB of a million rows. arrow-go's default, 256 MiB, would refuse
	// a table of 11 M rows sent as one batch.
	maxStreamBody = 1 << 30
)

var (
	errDamagedMessage = errors.New("damaged message")
	errOutside        = fmt.Errorf("%w: a position outside its flatbuffer", errDamagedMessage)
)

// messages reads a stream's messages for arrow-go's reader, in place of
// ipc.NewMessageReader, so as to check each one before arrow-go decodes
// it: the counts of a schema (checkSchema), and the vectors and buffers of
// a batch (checkBatch).
type messages struct {
	r    io.Reader
	refs atomic.Int64
	msg  *ipc.Message
	head [4]byte
	// batch and dicts say what a record batch and a dictionary batch of
	// the stream's schema take (setSchema); nil until then.
	batch, dicts *batchLayout
}

// setSchema tells the reader the schema that arrow-go read from the
// first message, which says how many field nodes, buffers and variadic
// counts each batch must hold.
func (m *messages) setSchema(schema *arrow.Schema) {
	m.batch, m.dicts = &batchLayout{}, &batchLayout{}
	for _, f := range schema.Fields() {
		m.batch.add(f.Type, m.dicts)
	}
}

func newMessages(r io.Reader) *messages {
	m := &messages{r: r}
	m.refs.Add(1)
	return m
}

func (m *messages) Retain() { m.refs.Add(1) }

func (m *messages) Release() {
	if m.refs.Add(-1) == 0 && m.msg != nil {
		m.msg.Release()
		m.msg = nil
	}
}

// Message returns the next message, valid until the next call; io.EOF at
// the end-of-stream marker.
func (m *messages) Message() (*ipc.Message, error) {
	if m.msg != nil {
		m.msg.Release()
		m.msg = nil
	}
	if _, err := io.ReadFull(m.r, m.head[:]); err != nil {
		return nil, fmt.Errorf("reading a message's length: %w", err)
	}
	n := binary.LittleEndian.Uint32(m.head[:])
	if n == 0xffffffff { // the continuation marker, then the length
		if _, err := io.ReadFull(m.r, m.head[:]); err != nil {
			return nil, fmt.Errorf("reading a message's length: %w", err)
		}
		n = binary.LittleEndian.Uint32(m.head[:])
	} // else the length alone, as before Arrow 0.15
	if n == 0 {
		return nil, io.EOF
	}
	if n < 4 || n > maxMessageMeta {
		return nil, fmt.Errorf("damaged message: its metadata takes %d bytes", n)
	}
	meta := make([]byte, n)
	if _, err := io.ReadFull(m.r, meta); err != nil {
		return nil, fmt.Errorf("reading a message's metadata: %w", err)
	}
	b := flatbuf(meta)
	kind, header, bodyLen, err := b.message()
	if err != nil {
		return nil, err
	}
	if bodyLen > maxStreamBody {
		return nil, fmt.Errorf("a message's body length %d exceeds the limit of %d", bodyLen, int64(maxStreamBody))
	}
	var layout *batchLayout
	switch kind {
	case headerSchema:
		if header != 0 {
			err = b.checkSchema(header)
		}
	case headerBatch:
		layout = m.batch
	case headerDictionary:
		layout = m.dicts
		if header, err = b.field(header, 1); header != 0 && err == nil { // data
			header, err = b.ref(header)
		}
	}
	if err == nil && layout == nil && (kind == headerBatch || kind == headerDictionary) {
		err = errors.New("damaged stream: a batch before the schema")
	}
	if err != nil {
		return nil, err
	}
	body := memory.NewResizableBuffer(memory.DefaultAllocator)
	defer body.Release()
	body.Resize(int(bodyLen))
	if _, err := io.ReadFull(m.r, body.Bytes()); err != nil {
		return nil, fmt.Errorf("reading a message's body: %w", err)
	}
	if layout != nil && header != 0 {
		if err := b.checkBatch(header, body.Bytes(), layout); err != nil {
			return nil, err
		}
	}
	mb := memory.NewBufferBytes(meta)
	m.msg = ipc.NewMessage(mb, body)
	mb.Release()
	return m.msg, nil
}

// batchLayout counts what arrow-go's reader (ipc/file_reader.go,
// loadArray) takes from a batch for columns of given types: one field
// node per array, its buffers (a validity bitmap, then offsets and data
// as the type has them), and a variadic count per view array.
type batchLayout struct {
	nodes, buffers, variadic int
	// unchecked is set, for dictionary batches, when the dictionaries'
	// types take different numbers of nodes, buffers or variadic counts,
	// so that a batch cannot be checked without knowing which dictionary
	// it is for; the counts are then the least of them.
	unchecked bool
}

// add counts an array of type dt, and the dictionaries it holds into
// dicts.
func (l *batchLayout) add(dt arrow.DataType, dicts *batchLayout) {
	l.nodes++
	switch dt := dt.(type) {
	case *arrow.NullType:
	case *arrow.DictionaryType:
		l.buffers += 2 // of the indices
		var d batchLayout
		d.add(dt.ValueType, dicts)
		dicts.merge(d)
	case *arrow.BinaryType, *arrow.StringType, *arrow.LargeStringType, *arrow.LargeBinaryType:
		l.buffers += 3
	case arrow.BinaryViewDataType:
		l.buffers += 2
		l.variadic++
	case arrow.ExtensionType:
		l.nodes--
		l.add(dt.StorageType(), dicts)
	case arrow.NestedType:
		// A validity bitmap (none for unions and run-end encoded arrays
		// in batches of version 5, one in older batches: requiring the
		// fewer is enough against reading past the end), the type's own
		// buffers, then the children.
		switch dt := dt.(type) {
		case *arrow.ListType, *arrow.LargeListType, *arrow.MapType:
			l.buffers += 2
		case *arrow.ListViewType, *arrow.LargeListViewType:
			l.buffers += 3
		case *arrow.FixedSizeListType, *arrow.StructType:
			l.buffers++
		case arrow.UnionType:
			l.buffers++
			if dt.Mode() == arrow.DenseMode {
				l.buffers++
			}
		}
		for _, f := range dt.Fields() {
			l.add(f.Type, dicts)
		}
	default: // fixed-width types: a validity bitmap and the values
		l.buffers += 2
	}
}

// merge makes l the layout of a dictionary batch for any of the
// dictionaries merged into it.
func (l *batchLayout) merge(d batchLayout) {
	if l.nodes == 0 && !l.unchecked {
		*l = d
		return
	}
	if d != *l {
		l.unchecked = true
		l.nodes = min(l.nodes, d.nodes)
		l.buffers = min(l.buffers, d.buffers)
		l.variadic = min(l.variadic, d.variadic)
	}
}

// Message.header_type values.
const (
	headerSchema     = 1
	headerDictionary = 2
	headerBatch      = 3
)

// message returns a message's header type, the position of its header
// table (0 if absent) and its body's length.
func (b flatbuf) message() (kind byte, header int, bodyLen int64, err error) {
	root, err := b.ref(0)
	if err != nil {
		return 0, 0, 0, err
	}
	at, err := b.field(root, 1) // header_type
	if err != nil {
		return 0, 0, 0, err
	}
	if at != 0 {
		if at >= len(b) {
			return 0, 0, 0, errOutside
		}
		kind = b[at]
	}
	if at, err = b.field(root, 3); at != 0 && err == nil { // bodyLength
		bodyLen, err = b.i64(at)
		if err == nil && bodyLen < 0 {
			err = fmt.Errorf("damaged message: its body takes %d bytes", bodyLen)
		}
	}
	if err != nil {
		return 0, 0, 0, err
	}
	if at, err = b.field(root, 2); at != 0 && err == nil { // header
		header, err = b.ref(at)
	}
	if err == nil {
		_, _, err = b.vector(root, 4, 4, maxStreamPairs, "metadata pairs") // custom_metadata
	}
	return kind, header, bodyLen, err
}

func (b flatbuf) i64(at int) (int64, error) {
	if at < 0 || at > len(b)-8 {
		return 0, errOutside
	}
	return int64(binary.LittleEndian.Uint64(b[at:])), nil
}

// checkBatch checks a record batch, at position batch, against its body
// and the schema's layout: as many field nodes, buffers and variadic
// counts as the columns take (arrow-go reads them by index without
// looking at the vectors' lengths), each buffer inside the body and, when
// the body is compressed, the sizes they take once decompressed at most
// maxStreamBody together.
func (b flatbuf) checkBatch(batch int, body []byte, layout *batchLayout) error {
	_, nodes, err := b.vector(batch, 1, 16, 1<<20, "field nodes")
	if err != nil {
		return err
	}
	start, n, err := b.vector(batch, 2, 16, 1<<20, "buffers")
	if err != nil {
		return err
	}
	compressed, err := b.field(batch, 3)
	if err != nil {
		return err
	}
	vstart, vn, err := b.vector(batch, 4, 8, 1<<20, "variadic buffer counts")
	if err != nil {
		return err
	}
	if layout.unchecked && (compressed != 0 || layout.variadic > 0) {
		return errors.New("a compressed dictionary batch, or one of a view type, in a stream of dictionaries of several layouts, which pwe does not read")
	}
	if nodes < layout.nodes || vn < layout.variadic {
		return fmt.Errorf("damaged record batch: %d field nodes and %d variadic counts for columns that take %d and %d",
			nodes, vn, layout.nodes, layout.variadic)
	}
	// A view column takes as many buffers as its variadic count says.
	want := int64(layout.buffers)
	for i := range layout.variadic {
		k, _ := b.i64(vstart + 8*i)
		if k < 0 || k > int64(n) {
			return fmt.Errorf("damaged record batch: a column takes %d of its %d buffers", k, n)
		}
		want += k
	}
	if int64(n) < want {
		return fmt.Errorf("damaged record batch: %d buffers for columns that take %d", n, want)
	}
	var total int64
	for i := range n {
		off, _ := b.i64(start + 16*i)
		size, _ := b.i64(start + 16*i + 8)
		if off < 0 || size < 0 || off > int64(len(body)) || size > int64(len(body))-off {
			return fmt.Errorf("damaged record batch: buffer %d takes bytes %d to %d of a body of %d", i, off, off+size, len(body))
		}
		if compressed == 0 || size == 0 {
			continue
		}
		if size < 8 {
			return fmt.Errorf("damaged record batch: compressed buffer %d takes %d bytes, too few for its length", i, size)
		}
		if raw := int64(binary.LittleEndian.Uint64(body[off:])); raw != -1 {
			if raw < 0 || raw > maxStreamBody-total {
				return fmt.Errorf("damaged record batch: its buffers would take more than %d bytes decompressed", int64(maxStreamBody))
			}
			total += raw
		}
	}
	return nil
}

// flatbuf reads a flatbuffer, every position checked against its length.
type flatbuf []byte

func (b flatbuf) u32(at int) (int, error) {
	if at < 0 || at > len(b)-4 {
		return 0, errOutside
	}
	return int(binary.LittleEndian.Uint32(b[at:])), nil
}

// ref follows the offset stored at position at.
func (b flatbuf) ref(at int) (int, error) {
	off, err := b.u32(at)
	return at + off, err
}

// field returns the position of the table's field in slot, or 0 when the
// field is absent.
func (b flatbuf) field(table, slot int) (int, error) {
	soff, err := b.u32(table)
	if err != nil {
		return 0, err
	}
	vt := table - int(int32(soff))
	if vt < 0 || vt > len(b)-4 {
		return 0, errOutside
	}
	// Absent exactly where the flatbuffers library finds it absent, so
	// that arrow-go reads nothing this check has not seen.
	vtLen := int(binary.LittleEndian.Uint16(b[vt:]))
	at := 4 + 2*slot
	if at >= vtLen {
		return 0, nil
	}
	if vt+at+2 > len(b) {
		return 0, errOutside
	}
	if off := int(binary.LittleEndian.Uint16(b[vt+at:])); off != 0 {
		return table + off, nil
	}
	return 0, nil
}

// vector returns the start and length of the table's vector in slot, of
// elements of size bytes, checking that it fits in the buffer and holds at
// most limit elements.
func (b flatbuf) vector(table, slot, size, limit int, what string) (start, n int, err error) {
	at, err := b.field(table, slot)
	if at == 0 || err != nil {
		return 0, 0, err
	}
	if at, err = b.ref(at); err != nil {
		return 0, 0, err
	}
	if n, err = b.u32(at); err != nil {
		return 0, 0, err
	}
	if n > limit {
		return 0, 0, fmt.Errorf("%w: %d %s, more than the %d a pwe stream may have", errDamagedMessage, n, what, limit)
	}
	if n*size > len(b)-at-4 {
		return 0, 0, errOutside
	}
	return at + 4, n, nil
}

// checkSchema checks the schema table at position schema against the
// limits above.
func (b flatbuf) checkSchema(schema int) error {
	if _, _, err := b.vector(schema, 2, 4, maxStreamPairs, "metadata pairs"); err != nil {
		return err
	}
	budget := maxStreamFields
	return b.checkFields(schema, 1, &budget, 0)
}

// checkFields checks the fields of the vector in the table's slot (a
// schema's fields or a field's children), each counted against budget.
func (b flatbuf) checkFields(table, slot int, budget *int, depth int) error {
	const typeUnion = 14 // Field.type_type of a union
	if depth > 64 {
		return fmt.Errorf("%w: fields nested more than 64 deep", errDamagedMessage)
	}
	start, n, err := b.vector(table, slot, 4, *budget, "fields")
	if err != nil {
		return err
	}
	*budget -= n
	for i := range n {
		f, err := b.ref(start + 4*i)
		if err != nil {
			return err
		}
		if _, _, err := b.vector(f, 6, 4, maxStreamPairs, "metadata pairs"); err != nil {
			return err
		}
		at, err := b.field(f, 2) // type_type
		if err != nil {
			return err
		}
		if at != 0 && at < len(b) && b[at] == typeUnion {
			if at, err = b.field(f, 3); at != 0 && err == nil { // type
				var union int
				if union, err = b.ref(at); err == nil {
					_, _, err = b.vector(union, 1, 4, maxStreamFields, "union type ids")
				}
			}
			if err != nil {
				return err
			}
		}
		if err := b.checkFields(f, 5, budget, depth+1); err != nil {
			return err
		}
	}
	return nil
}
