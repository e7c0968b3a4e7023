package pages

import "unsafe"

// HugeSize is the size of a transparent huge page on amd64, and on arm64
// with 4 KiB pages.
const HugeSize = 2 << 20

// hugeMin is the smallest slice Huge places on huge pages. Moving a
// slice's start to a boundary makes its allocation up to a huge page
// larger: never used, that room is no resident memory, but the Go
// runtime counts it against the memory limit. From 8 huge pages up that
// is at most an eighth more.
const hugeMin = 8 * HugeSize

// Huge returns a zeroed slice of length n and capacity c, as make does.
// When the capacity spans hugeMin bytes or more, the slice starts on a
// huge page boundary and the kernel is asked to back its whole huge pages
// with huge pages (Linux's transparent huge pages, where they are on or in
// madvise mode) as they are first used. A table read or written at random,
// far larger than the processor's TLB reaches with small pages, then
// misses the TLB on few of its accesses instead of most, and it is mapped
// in with one page fault every 2 MiB instead of every 4 KiB.
func Huge[E any](n, c int) []E {
	var zero E
	size := unsafe.Sizeof(zero)
	if size == 0 || uintptr(c)*size < hugeMin {
		return make([]E, n, c)
	}
	// The first boundary lies less than a huge page after the
	// allocation's start; the slice starts at the first element from it.
	pad := int((HugeSize + size - 1) / size)
	s := make([]E, c+pad)
	start := uintptr(unsafe.Pointer(&s[0]))
	boundary := (start + HugeSize - 1) &^ (HugeSize - 1)
	skip := int((boundary - start + size - 1) / size)
	whole := (uintptr(c) * size) &^ (HugeSize - 1)
	adviseHuge(unsafe.Add(unsafe.Pointer(&s[0]), boundary-start), whole)
	return s[skip : skip+n : skip+c]
}
