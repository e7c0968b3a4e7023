package formats

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/zstd"
)

// literalBlocks walks a frame written by literalFrames with a parser
// written from RFC 8878 for this test, independently of the writer: it
// checks the frame header and returns the type and content size of every
// block and the regenerated size of the literals of compressed blocks.
func literalBlocks(t *testing.T, frame []byte) (types []int, regen int) {
	t.Helper()
	if len(frame) < 6 || binary.LittleEndian.Uint32(frame) != 0xFD2FB528 {
		t.Fatalf("frame does not start with the zstd magic: % x", frame[:min(len(frame), 8)])
	}
	fhd := frame[4]
	if fhd&(1<<5) == 0 || fhd&0x1f != 0 {
		t.Fatalf("frame header descriptor %08b: want single segment, no checksum, no dictionary", fhd)
	}
	p := 5
	var content uint64
	switch fhd >> 6 {
	case 0:
		content = uint64(frame[p])
		p++
	case 1:
		content = uint64(binary.LittleEndian.Uint16(frame[p:])) + 256
		p += 2
	case 2:
		content = uint64(binary.LittleEndian.Uint32(frame[p:]))
		p += 4
	default:
		content = binary.LittleEndian.Uint64(frame[p:])
		p += 8
	}
	for last := false; !last; {
		if p+3 > len(frame) {
			t.Fatalf("block header at %d runs past the frame (%d bytes)", p, len(frame))
		}
		h := uint32(frame[p]) | uint32(frame[p+1])<<8 | uint32(frame[p+2])<<16
		p += 3
		last = h&1 == 1
		typ, size := int(h>>1&3), int(h>>3)
		types = append(types, typ)
		switch typ {
		case 0:
			regen += size
			p += size
		case 1:
			regen += size
			p++
		case 2:
			lh := frame[p]
			if lh&3 != 2 || lh>>2&3 != 3 {
				t.Fatalf("literals header %08b: want Huffman-coded, 4 streams, 18-bit sizes", lh)
			}
			v := uint64(frame[p]) | uint64(frame[p+1])<<8 | uint64(frame[p+2])<<16 | uint64(frame[p+3])<<24 | uint64(frame[p+4])<<32
			lits, comp := int(v>>4&(1<<18-1)), int(v>>22&(1<<18-1))
			if 5+comp+1 != size {
				t.Fatalf("block of %d bytes holds %d bytes of literals after their header, and a sequences byte", size, comp)
			}
			if frame[p+size-1] != 0 {
				t.Fatalf("compressed block ends with %d sequences, want none", frame[p+size-1])
			}
			if lits > 128<<10 {
				t.Fatalf("block regenerates %d bytes, above 128 KiB", lits)
			}
			regen += lits
			p += size
		default:
			t.Fatalf("reserved block type at %d", p-3)
		}
	}
	if p != len(frame) {
		t.Fatalf("frame ends at %d of %d bytes", p, len(frame))
	}
	if uint64(regen) != content {
		t.Fatalf("blocks regenerate %d bytes, the frame header says %d", regen, content)
	}
	return types, regen
}

// TestLiteralFrames round-trips data of every kind and size boundary
// through klauspost's zstd decoder and checks which blocks were written:
// skewed bytes must be Huffman-coded (else the writer gains nothing),
// random ones stored raw, a repeated byte as RLE.
func TestLiteralFrames(t *testing.T) {
	dec, err := zstd.NewReader(nil)
	if err != nil {
		t.Fatal(err)
	}
	defer dec.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	skewed := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			// Geometric bytes: entropy about 2 bits.
			x := 0
			for x < 255 && rng.IntN(2) == 0 {
				x++
			}
			b[i] = byte(x)
		}
		return b
	}
	random := func(n int) []byte {
		b := make([]byte, n)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return b
	}
	const (
		raw, rle, huff = 0, 1, 2
	)
	cases := []struct {
		name  string
		data  []byte
		types []int
	}{
		{"empty", nil, []int{raw}},
		{"one byte", []byte{7}, []int{raw}},
		{"255 bytes", skewed(255), []int{raw}},
		{"256 bytes", skewed(256), []int{raw}},
		{"below Huffman", skewed(literalMinHuffman - 1), []int{raw}},
		{"Huffman", skewed(literalMinHuffman), []int{huff}},
		{"2-byte size, largest", skewed(256 + 1<<16 - 1), []int{huff}},
		{"4-byte size, smallest", skewed(256 + 1<<16), []int{huff}},
		{"one full block", skewed(zstdBlockMax), []int{huff}},
		{"block and a byte", skewed(zstdBlockMax + 1), []int{huff, raw}},
		{"random", random(5000), []int{raw}},
		{"repeated byte", bytes.Repeat([]byte{3}, 4000), []int{rle}},
		{"mixed blocks", append(append(skewed(zstdBlockMax), random(zstdBlockMax)...), bytes.Repeat([]byte{9}, 2000)...), []int{huff, raw, rle}},
	}
	var l literalFrames
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			prefix := []byte("kept")
			frame := l.appendFrame(append([]byte(nil), prefix...), c.data)
			if !bytes.Equal(frame[:len(prefix)], prefix) {
				t.Fatal("appendFrame overwrote dst")
			}
			frame = frame[len(prefix):]
			types, n := literalBlocks(t, frame)
			if fmt.Sprint(types) != fmt.Sprint(c.types) {
				t.Errorf("block types %v, want %v", types, c.types)
			}
			if n != len(c.data) {
				t.Errorf("blocks regenerate %d bytes, want %d", n, len(c.data))
			}
			got, err := dec.DecodeAll(frame, nil)
			if err != nil {
				t.Fatalf("zstd decoder: %v", err)
			}
			if !bytes.Equal(got, c.data) {
				t.Fatalf("decoded %d bytes differ from the %d written", len(got), len(c.data))
			}
			if len(c.types) == 1 && c.types[0] == huff && len(frame) > len(c.data)*2/5 {
				t.Errorf("%d bytes of about 2 bits each coded in %d", len(c.data), len(frame))
			}
		})
	}
}

// FuzzLiteralFrames: any bytes, written as a frame, decode to themselves.
func FuzzLiteralFrames(f *testing.F) {
	f.Add([]byte{})
	f.Add(bytes.Repeat([]byte{1, 1, 1, 2}, 600))
	f.Add(bytes.Repeat([]byte{0}, 2000))
	dec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		f.Fatal(err)
	}
	defer dec.Close()
	var l literalFrames
	f.Fuzz(func(t *testing.T, data []byte) {
		frame := l.appendFrame(nil, data)
		literalBlocks(t, frame)
		got, err := dec.DecodeAll(frame, nil)
		if err != nil {
			t.Fatalf("zstd decoder: %v", err)
		}
		if !bytes.Equal(got, data) {
			t.Fatalf("decoded %d bytes differ from the %d written", len(got), len(data))
		}
	})
}
