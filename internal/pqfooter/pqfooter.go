// Package pqfooter checks a Parquet file's trailer before parquet-go reads
// the footer: parquet-go allocates the footer's length, as the trailer gives
// it, before it compares that length with the file's size, so a damaged
// trailer costs up to 4 GiB of memory before the error.
package pqfooter

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ErrTrailer is returned for a trailer that is not a Parquet file's.
var ErrTrailer = errors.New("no Parquet trailer")

// Check reads the last 8 bytes of the file of size bytes that r reads: the
// footer's length and the magic "PAR1" (or "PARE", an encrypted footer,
// which parquet-go then reports). The footer must fit between the leading
// magic and the trailer.
func Check(r io.ReaderAt, size int64) error {
	if size < 12 {
		return fmt.Errorf("%w: %d bytes, too short for a Parquet file", ErrTrailer, size)
	}
	var b [8]byte
	if _, err := r.ReadAt(b[:], size-8); err != nil {
		return err
	}
	if m := string(b[4:]); m != "PAR1" && m != "PARE" {
		return fmt.Errorf("%w: the file ends in %q, not PAR1", ErrTrailer, b[4:])
	}
	if n := int64(binary.LittleEndian.Uint32(b[:4])); n > size-12 {
		return fmt.Errorf("%w: a footer of %d bytes in a file of %d", ErrTrailer, n, size)
	}
	return nil
}
