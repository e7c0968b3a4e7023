package pages

import (
	"fmt"
	"unsafe"

	"golang.org/x/sys/unix"
)

// mapBytes returns an empty slice with room for at least n bytes in memory
// mapped for it alone: whole huge pages, aligned, from n of hugeSize on,
// which the kernel is advised to back with transparent huge pages, and
// whole small pages below that.
func mapBytes(n int) []byte {
	if n <= 0 {
		return nil
	}
	length := roundUp(uintptr(n), size)
	var extra uintptr
	if length >= hugeSize {
		length = roundUp(length, hugeSize)
		extra = hugeSize // to cut an aligned stretch from
	}
	p, err := unix.MmapPtr(-1, 0, nil, length+extra, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		panic(fmt.Sprintf("pages: mapping %d bytes: %v", length+extra, err))
	}
	if extra > 0 {
		start := uintptr(p)
		head := roundUp(start, hugeSize) - start
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
