package pages

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapBytes returns an empty slice with room for at least n bytes in memory
// mapped for it alone: whole huge pages, aligned, from n of half a huge
// page on, which the kernel is advised to back with transparent huge
// pages, and whole small pages below that. Half a huge page in small pages
// is 256 page faults, which cost more than the memory the rest of a huge
// page takes: count's buffers of column chunks on bench-raw, which grow
// from a page's size to a row group's estimate (about 1.8 MB for some),
// took 2 300 faults (9 MB) in small pages, a tenth of count's time in
// faults on one thread.
func mapBytes(n int) []byte {
	if n <= 0 {
		return nil
	}
	length := roundUp(uintptr(n), size)
	var extra uintptr
	if length >= HugeSize/2 {
		length = roundUp(length, HugeSize)
		extra = HugeSize // to cut an aligned stretch from
	}
	p, err := unix.MmapPtr(-1, 0, nil, length+extra, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		panic(fmt.Sprintf("pages: mapping %d bytes: %v", length+extra, err))
	}
	if extra > 0 {
		start := uintptr(p)
		head := roundUp(start, HugeSize) - start
		if head > 0 {
			_ = unix.MunmapPtr(p, head)
		}
		if tail := extra - head; tail > 0 {
			_ = unix.MunmapPtr(unsafe.Add(p, head+length), tail)
		}
		p = unsafe.Add(p, head)
		_ = unix.Madvise(unsafe.Slice((*byte)(p), length), unix.MADV_HUGEPAGE)
	}
	return unsafe.Slice((*byte)(p), length)[:0]
}

// unmapBytes returns the memory of a slice that mapBytes made, given with
// its whole capacity.
func unmapBytes(b []byte) {
	if cap(b) == 0 {
		return
	}
	if err := unix.MunmapPtr(unsafe.Pointer(unsafe.SliceData(b[:cap(b)])), uintptr(cap(b))); err != nil {
		panic(fmt.Sprintf("pages: unmapping %d bytes: %v", cap(b), err))
	}
}
