// Package pages handles memory a page at a time: it maps fresh memory in
// ahead of its use (Touch), advises transparent huge pages for large slices
// (Huge), gives back the memory of the part of a slice already done with
// (Release), and keeps buffers in memory mapped for them alone (Buffer).
package pages

import "unsafe"

// size is the smallest page size of the platforms Go runs on.
const size = 4096

// HugeSize is the size of a transparent huge page on amd64, and on arm64
// with 4 KiB pages.
const HugeSize = 2 << 20

// Touch writes the zero value to one element of each page of s, which must
// be all zero, as a slice just made is: a large slice just made is mapped to
// no memory yet, and its pages are mapped in as they are first used.
//
// A table that is read before it is written, such as a hash table or an
// array of counts, should be touched first. Its first read of a page maps a
// shared page of zeros, which the first write must then replace; while
// another thread of the process runs, replacing it makes the kernel stop
// that thread's core to drop the old mapping (a TLB shootdown), which the
// write waits for. A first write maps a page at once.
func Touch[E any](s []E) {
	var zero E
	step := max(1, size/int(unsafe.Sizeof(zero)))
	for i := 0; i < len(s); i += step {
		s[i] = zero
	}
}
