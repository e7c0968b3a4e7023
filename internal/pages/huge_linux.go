package pages

import (
	"syscall"
	"unsafe"
)

// madvHugepage is Linux's MADV_HUGEPAGE.
const madvHugepage = 14

// adviseHuge asks the kernel to back the n bytes at p, which must lie
// within one allocation and start on a huge page, with huge pages. It is
// only advice: a kernel without transparent huge pages, or with them
// turned off, refuses it, and the memory keeps its small pages.
func adviseHuge(p unsafe.Pointer, n uintptr) {
	_ = syscall.Madvise(unsafe.Slice((*byte)(p), n), madvHugepage)
}
