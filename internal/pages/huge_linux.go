package pages

import (
	"bytes"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/unix"
)

// hugeSize is the size of a transparent huge page on amd64, and on arm64
// with 4 KiB pages.
const hugeSize = 2 << 20

// Huge asks the kernel to back the huge pages that lie wholly inside s's
// capacity with transparent huge pages, where the system leaves that to
// the program (transparent_hugepage set to madvise, the default of many
// distributions). It is only advice: it changes no value, and an error is
// ignored. It serves a large slice just made, none of whose pages have
// been used yet, and written in order: each huge page is then mapped in at
// its first use, one fault where there would have been 512.
//
// A page fault can cost far more than the page's use: on the project's
// build hosts, virtual machines whose page tables the hypervisor shadows,
// one took 11 us, and a thread that wrote 256 MiB of fresh memory page by
// page spent 0.71 s, against 0.02 s with huge pages.
func Huge[E any](s []E) {
	if b := wholeHugePages(s); b != nil {
		_ = unix.Madvise(b, unix.MADV_HUGEPAGE)
	}
}

// Unhuge withdraws Huge's advice from s, whose memory the caller is done
// with, where the system gives huge pages only on advice. The advice
// outlives the slice: the Go runtime reuses the memory for other values,
// and a fault there maps in a whole huge page, however little of it the new
// values use. 2000 allocations of 8 KiB, made after an advised slice of 64
// MiB was freed and returned to the system, added 8.6-12.6 MiB to the
// process's resident memory, against 0.8-0.9 MiB after a slice never
// advised or one whose advice Unhuge had withdrawn (BENCHMARKS.md, session
// 32). The kernel's khugepaged may also merge sparse pages there back into
// huge ones; that is why Go 1.21.1 stopped advising huge pages itself. It
// matters in pwe run, where fit, which can run for hours, shares its
// process with tokenize and count. Where the system maps huge pages
// wherever it can (transparent_hugepage set to always), the advice changes
// little, and withdrawing it would forbid them, so Unhuge leaves it.
//
// It is only advice too: s's values stay, and s may still be used.
func Unhuge[E any](s []E) {
	if !adviseOnly() {
		return
	}
	if b := wholeHugePages(s); b != nil {
		_ = unix.Madvise(b, unix.MADV_NOHUGEPAGE)
	}
}

// adviseOnly reports whether the system maps transparent huge pages only
// where a program advises them.
var adviseOnly = sync.OnceValue(func() bool {
	b, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	return err == nil && bytes.Contains(b, []byte("[madvise]"))
})

// wholeHugePages returns the huge pages that lie wholly inside s's
// capacity, as bytes, or nil if there are none or s takes less than two.
func wholeHugePages[E any](s []E) []byte {
	var zero E
	n := uintptr(cap(s)) * unsafe.Sizeof(zero)
	if n < 2*hugeSize {
		return nil
	}
	base := unsafe.Pointer(unsafe.SliceData(s[:cap(s)]))
	start := uintptr(base)
	lo := roundUp(start, hugeSize)
	hi := (start + n) &^ (hugeSize - 1)
	if hi <= lo {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Add(base, lo-start)), hi-lo)
}

// roundUp rounds x up to a multiple of to, a power of two.
func roundUp(x, to uintptr) uintptr { return (x + to - 1) &^ (to - 1) }
