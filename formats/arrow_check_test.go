package formats

import (
	"encoding/binary"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
)

// TestBatchLayout writes a batch of each type with arrow-go's writer and
// compares the field nodes, buffers and variadic counts of its messages
// with what batchLayout expects for the type.
func TestBatchLayout(t *testing.T) {
	str := arrow.BinaryTypes.String
	i32 := arrow.PrimitiveTypes.Int32
	types := []arrow.DataType{
		arrow.Null,
		i32,
		arrow.FixedWidthTypes.Boolean,
		str,
		arrow.BinaryTypes.LargeBinary,
		arrow.BinaryTypes.StringView,
		&arrow.FixedSizeBinaryType{ByteWidth: 3},
		arrow.ListOf(str),
		arrow.LargeListOf(i32),
		arrow.ListViewOf(str),
		arrow.FixedSizeListOf(2, i32),
		arrow.StructOf(arrow.Field{Name: "a", Type: i32}, arrow.Field{Name: "b", Type: arrow.ListOf(arrow.BinaryTypes.StringView)}),
		arrow.MapOf(str, i32),
		arrow.SparseUnionOf([]arrow.Field{{Name: "a", Type: i32}, {Name: "b", Type: str}}, []arrow.UnionTypeCode{0, 1}),
		arrow.DenseUnionOf([]arrow.Field{{Name: "a", Type: i32}, {Name: "b", Type: str}}, []arrow.UnionTypeCode{0, 1}),
		arrow.RunEndEncodedOf(i32, str),
		&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: str},
		&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.PrimitiveTypes.Float64},
	}
	for _, dt := range types {
		schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: dt, Nullable: true}}, nil)
		b := array.NewBuilder(memory.DefaultAllocator, dt)
		b.AppendEmptyValue()
		b.AppendEmptyValue()
		col := b.NewArray()
		data := recordStream(t, array.NewRecordBatch(schema, []arrow.Array{col}, int64(col.Len())))
		var batch, dicts batchLayout
		batch.add(dt, &dicts)
		for at := 0; at+8 <= len(data); {
			n := int(binary.LittleEndian.Uint32(data[at+4:]))
			if n == 0 {
				break
			}
			b := flatbuf(data[at+8 : at+8+n])
			kind, header, bodyLen, err := b.message()
			if err != nil {
				t.Fatalf("%s: %v", dt, err)
			}
			at += 8 + n + int(bodyLen)
			want := &batch
			switch kind {
			case headerSchema:
				continue
			case headerDictionary:
				want = &dicts
				at, _ := b.field(header, 1)
				header, _ = b.ref(at)
			}
			_, nodes, _ := b.vector(header, 1, 16, 1<<20, "")
			_, buffers, _ := b.vector(header, 2, 16, 1<<20, "")
			vstart, variadic, _ := b.vector(header, 4, 8, 1<<20, "")
			views := 0
			for i := range variadic {
				k, _ := b.i64(vstart + 8*i)
				views += int(k)
			}
			got := batchLayout{nodes: nodes, buffers: buffers - views, variadic: variadic}
			if got != *want {
				t.Errorf("%s, message type %d: arrow-go wrote %+v, batchLayout says %+v", dt, kind, got, *want)
			}
		}
	}
}
