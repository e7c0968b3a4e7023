package pages

import (
	"testing"
	"unsafe"
)

// touchCase fills a slice of n elements of E with non-zero values, touches
// it, and checks that Touch zeroed the first element and left no page-sized
// stretch of the slice unwritten, with about one element zeroed a page.
func touchCase[E comparable](t *testing.T, n int, one E) {
	t.Helper()
	s := make([]E, n)
	for i := range s {
		s[i] = one
	}
	Touch(s)
	var zero E
	elem := int(unsafe.Sizeof(zero))
	last := -1 // the last element zeroed
	for i, x := range s {
		if x != zero {
			continue
		}
		if gap := (i - last - 1) * elem; last >= 0 && gap >= size {
			t.Fatalf("%T: the %d bytes between elements %d and %d were not written", zero, gap, last, i)
		}
		last = i
	}
	switch {
	case n > 0 && s[0] != zero:
		t.Fatalf("%T: the first element was not touched", zero)
	case n > 0 && (n-1-last)*elem >= size:
		t.Fatalf("%T: the last %d elements of %d were not touched", zero, n-1-last, n)
	}
	zeroed := 0
	for _, x := range s {
		if x == zero {
			zeroed++
		}
	}
	if want := (n*elem + size - 1) / size; n > 0 && elem < size && zeroed > want+1 {
		t.Fatalf("%T: %d of %d elements zeroed, want one a page (%d)", zero, zeroed, n, want)
	}
}

func TestTouch(t *testing.T) {
	type slot struct{ a, b uint64 }
	type big [5000]byte
	for _, n := range []int{0, 1, 255, 4096, 4097, 100000} {
		touchCase(t, n, byte(1))
		touchCase(t, n, uint32(1))
		touchCase(t, n, slot{1, 2})
		touchCase(t, n, "x")
	}
	touchCase(t, 7, big{1})
}
