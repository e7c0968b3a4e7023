package pages

import (
	"testing"
	"unsafe"
)

// hugeCase checks that Huge[E](n, c) has length n and capacity c, is all
// zero, can be filled, and starts within an element of a huge page
// boundary when it is large enough.
func hugeCase[E comparable](t *testing.T, n, c int, one E) {
	t.Helper()
	s := Huge[E](n, c)
	if len(s) != n || cap(s) != c {
		t.Fatalf("%T: Huge(%d, %d) has length %d and capacity %d", one, n, c, len(s), cap(s))
	}
	var zero E
	size := unsafe.Sizeof(zero)
	full := s[:c]
	for i, x := range full {
		if x != zero {
			t.Fatalf("%T: Huge(%d, %d)[%d] is not zero", one, n, c, i)
		}
	}
	for i := range full {
		full[i] = one
	}
	if c == 0 {
		return
	}
	off := uintptr(unsafe.Pointer(&full[0])) % HugeSize
	large := uintptr(c)*size >= hugeMin
	switch {
	case large && off >= size && off <= HugeSize-size:
		t.Fatalf("%T: Huge(%d, %d) starts %d bytes past a huge page boundary", one, n, c, off)
	case !large && n != c && len(append(s, one)) != n+1:
		t.Fatalf("%T: appending to Huge(%d, %d) failed", one, n, c)
	}
}

func TestHuge(t *testing.T) {
	type triple [3]uint32 // 12 bytes: no divisor of a huge page
	big := int(hugeMin / 4)
	for _, nc := range [][2]int{{0, 0}, {0, 10}, {5, 10}, {big - 1, big - 1}, {0, big}, {big, big}, {big / 2, big + 12345}} {
		hugeCase(t, nc[0], nc[1], uint32(1))
		hugeCase(t, nc[0], nc[1], triple{1, 2, 3})
	}
	hugeCase(t, 3, 3, struct{}{})
}
