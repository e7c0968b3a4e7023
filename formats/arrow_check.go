package formats

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// arrow-go reads a stream's schema by allocating, before it reads them, as
// many fields, children, metadata pairs and union type ids as the schema
// message's flatbuffer says there are. On a damaged stream a count can be
// billions, and the allocation kills the process: recover cannot catch
// it. So the first message is checked here before arrow-go sees it; pwe's
// streams have a handful of columns and metadata keys.
const (
	// maxStreamFields bounds the fields of a stream's schema, children
	// included.
	maxStreamFields = 1024
	// maxStreamPairs bounds a schema's or a field's metadata pairs.
	maxStreamPairs = 1024
	// maxSchemaMessage bounds a message's flatbuffer (arrow-go's default
	// limit).
	maxSchemaMessage = 64 << 20
	// maxStreamBody bounds a record batch's body: 1 GiB, 44 M rows of
	// counts, where pwe writes batches of StreamBatchRows (1.5 MB) and
	// DuckDB of a million rows. arrow-go's default, 256 MiB, would refuse
	// a table of 11 M rows sent as one batch.
	maxStreamBody = 1 << 30
)

var errSchemaMessage = errors.New("damaged schema message")

// readSchemaMessage reads the stream's first message from r and checks the
// counts in it; it returns the bytes read, which the caller gives arrow-go
// to read again. A message it cannot make sense of is left for arrow-go to
// report, as is a short read.
func readSchemaMessage(r io.Reader) ([]byte, error) {
	head := make([]byte, 8)
	if _, err := io.ReadFull(r, head[:4]); err != nil {
		return head[:0], nil
	}
	n := binary.LittleEndian.Uint32(head)
	if n == 0xffffffff { // the continuation marker, then the length
		if _, err := io.ReadFull(r, head[4:]); err != nil {
			return head[:4], nil
		}
		n = binary.LittleEndian.Uint32(head[4:])
	} else {
		head = head[:4] // the length alone, as before Arrow 0.15
	}
	if n < 4 || n > maxSchemaMessage {
		return head, nil
	}
	msg := make([]byte, len(head)+int(n))
	copy(msg, head)
	k, err := io.ReadFull(r, msg[len(head):])
	if err != nil {
		return msg[:len(head)+k], nil
	}
	return msg, checkSchemaMessage(flatbuf(msg[len(head):]))
}

// flatbuf reads a flatbuffer, every position checked against its length.
type flatbuf []byte

func (b flatbuf) u32(at int) (int, error) {
	if at < 0 || at > len(b)-4 {
		return 0, errSchemaMessage
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
		return 0, errSchemaMessage
	}
	vtLen := int(binary.LittleEndian.Uint16(b[vt:]))
	at := 4 + 2*slot
	if at+2 > vtLen || vt+at+2 > len(b) {
		return 0, nil
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
		return 0, 0, fmt.Errorf("%w: %d %s, more than the %d a pwe stream may have", errSchemaMessage, n, what, limit)
	}
	if n*size > len(b)-at-4 {
		return 0, 0, errSchemaMessage
	}
	return at + 4, n, nil
}

// checkSchemaMessage checks a message, if it holds a schema (as the first
// must), against the limits above.
func checkSchemaMessage(b flatbuf) error {
	const headerSchema = 1 // Message.header_type for a Schema
	root, err := b.ref(0)
	if err != nil {
		return err
	}
	at, err := b.field(root, 1) // header_type
	if err != nil || at == 0 || at >= len(b) || b[at] != headerSchema {
		return err
	}
	if at, err = b.field(root, 2); at == 0 || err != nil { // header
		return err
	}
	schema, err := b.ref(at)
	if err != nil {
		return err
	}
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
		return fmt.Errorf("%w: fields nested more than 64 deep", errSchemaMessage)
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
