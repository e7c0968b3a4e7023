package pages

import (
	"bytes"
	"math/rand/v2"
	"testing"
)

// TestBuffer runs random appends, reservations and resets on a Buffer and
// on a plain slice, and checks that they hold the same bytes throughout,
// and that the room the Buffer reports is room it has.
func TestBuffer(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var m Buffer
	defer m.Free()
	var want []byte
	for step := range 3000 {
		switch r := rng.IntN(20); {
		case r == 0:
			m.Reset()
			want = want[:0]
		case r == 1:
			// Up to 5 MiB: past the huge pages' size.
			n := rng.IntN(5 << 20)
			m.Reserve(n)
			if m.Cap() < n {
				t.Fatalf("step %d: Reserve(%d) left room for %d", step, n, m.Cap())
			}
		default:
			parts := make([][]byte, rng.IntN(3)+1)
			for i := range parts {
				parts[i] = make([]byte, rng.IntN(1<<uint(rng.IntN(17))))
				for j := range parts[i] {
					parts[i][j] = byte(rng.Uint32())
				}
				want = append(want, parts[i]...)
			}
			m.Append(parts...)
		}
		if m.Len() != len(want) || !bytes.Equal(m.Bytes(), want) {
			t.Fatalf("step %d: buffer holds %d bytes, differing from the %d expected", step, m.Len(), len(want))
		}
		// The room beyond the contents must be writable.
		if b := m.Bytes(); cap(b) > len(b) {
			b[:cap(b)][cap(b)-1] = 1
		}
	}
	m.Free()
	if m.Len() != 0 || m.Cap() != 0 {
		t.Fatalf("after Free: %d bytes, room for %d", m.Len(), m.Cap())
	}
	// A freed Buffer can be used again.
	m.Append([]byte("again"))
	if string(m.Bytes()) != "again" {
		t.Fatalf("after Free and Append: %q", m.Bytes())
	}
}
