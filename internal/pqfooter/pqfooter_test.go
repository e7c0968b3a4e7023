package pqfooter

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/parquet-go/parquet-go"
)

func TestCheck(t *testing.T) {
	type row struct{ A int64 }
	var buf bytes.Buffer
	if err := parquet.Write(&buf, []row{{1}, {2}}); err != nil {
		t.Fatal(err)
	}
	good := buf.Bytes()
	if err := Check(bytes.NewReader(good), int64(len(good))); err != nil {
		t.Fatalf("a file parquet-go wrote: %v", err)
	}
	n := len(good)
	footer := int(binary.LittleEndian.Uint32(good[n-8:]))
	withLen := func(l uint32) []byte {
		b := bytes.Clone(good)
		binary.LittleEndian.PutUint32(b[n-8:], l)
		return b
	}
	cases := map[string][]byte{
		"footer one byte too long": withLen(uint32(n - 11)),
		"footer of 4 GiB":          withLen(1<<32 - 1),
		"wrong magic":              append(bytes.Clone(good[:n-4]), "PAR2"...),
		"too short":                []byte("PAR1PAR1"),
		"empty":                    nil,
	}
	for name, b := range cases {
		if err := Check(bytes.NewReader(b), int64(len(b))); !errors.Is(err, ErrTrailer) {
			t.Errorf("%s: error %v, want ErrTrailer", name, err)
		}
	}
	// The longest footer that fits: everything between the magics.
	if err := Check(bytes.NewReader(withLen(uint32(n-12))), int64(n)); err != nil {
		t.Errorf("footer of %d bytes (the file's %d): %v", n-12, footer, err)
	}
}
