package pages

import (
	"bytes"
	"cmp"
	"os"
	"runtime/debug"
	"slices"
	"sync"
	"sync/atomic"
	"unsafe"

	"golang.org/x/sys/unix"
)

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

// Release returns to the system the memory of the blocks of align bytes,
// aligned to align (a power of two, at least 4 KiB), that lie wholly inside
// s's length. Their values are lost: they read as zero afterwards, and the
// caller must not need them. It serves a large slice read from front to
// back once, such as count's index of positions: the part behind the
// reader is given back while the slice is still in use, and the memory
// that the process takes next (the writer's pages) can reuse it, still
// mapped in by the host, rather than be fresh memory. With align at
// HugeSize, no huge page is split.
func Release[E any](s []E, align int) {
	if align < size || align&(align-1) != 0 {
		return
	}
	if b := alignedBlocks(s, len(s), uintptr(align)); b != nil {
		_ = unix.Madvise(b, unix.MADV_DONTNEED)
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
	if uintptr(cap(s))*unsafe.Sizeof(zero) < 2*HugeSize {
		return nil
	}
	return alignedBlocks(s, cap(s), HugeSize)
}

// alignedBlocks returns the blocks of align bytes, aligned to align (a
// power of two), that lie wholly inside the first n elements of s's
// memory (n at most its capacity), as bytes, or nil if there are none.
func alignedBlocks[E any](s []E, n int, align uintptr) []byte {
	var zero E
	if n == 0 {
		return nil
	}
	base := unsafe.Pointer(unsafe.SliceData(s[:n]))
	start := uintptr(base)
	lo := roundUp(start, align)
	hi := (start + uintptr(n)*unsafe.Sizeof(zero)) &^ (align - 1)
	if hi <= lo {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Add(base, lo-start)), hi-lo)
}

// roundUp rounds x up to a multiple of to, a power of two.
func roundUp(x, to uintptr) uintptr { return (x + to - 1) &^ (to - 1) }

// HugeHeap advises transparent huge pages for the heap's free memory and
// for up to n bytes more that the Go runtime maps for it, where the system
// leaves huge pages to advice, and returns a function that withdraws the
// advice. The runtime never advises huge pages for the heap itself, so
// every value, buffer and table of a stage is mapped in 4 KiB at a time,
// a page fault each; on the project's build hosts a fault costs about
// 11 us, and tokenize and count on bench-raw took 9 000 to 17 000 of them
// (BENCHMARKS.md, session 34).
//
// HugeHeap allocates n bytes in pieces (at most heapPiece each, and in
// all at most maxHugeHeap and half the Go memory limit): they take the
// heap's free memory first, the lowest first, then memory the runtime
// maps anew. It advises huge pages for their whole huge pages, frees
// them and has the runtime return them to the system (debug.FreeOSMemory),
// so that they count against no limit and are mapped in again only as
// they are used: the runtime hands out the lowest free addresses first,
// so the heap's next values land there. The pieces are made of fresh
// memory but for the heap's free memory, which the runtime clears, so the
// cost of the allocation is bounded by that: one piece of 1 GiB that began
// in memory used before had the runtime clear all of it.
//
// It acts once in a process, while the heap is small (the first stage
// of a command, or tokenize and count together in pwe run): later, as in
// tests, the heap's free memory can be large, and HugeHeap returned to the
// system memory the next values would have reused. The advice lasts until
// withdraw, like Unhuge's, which a stage or pwe run calls when counting is
// done, so that a process that runs on (pwe run's fit) does not keep
// mapping whole huge pages for small values.
//
// It does nothing on 32-bit systems, whose address space is too small to
// spare, or where huge pages are not left to advice.
func HugeHeap(n int64) (withdraw func()) {
	if unsafe.Sizeof(uintptr(0)) < 8 || n < 2*HugeSize || !adviseOnly() || !heapAdvised.CompareAndSwap(false, true) {
		return func() {}
	}
	spans := hugeHeap(min(n, maxHugeHeap, debug.SetMemoryLimit(-1)/2))
	return func() {
		for _, r := range spans {
			adviseRange(r[0], r[1]-r[0], unix.MADV_NOHUGEPAGE)
		}
	}
}

// heapAdvised is set once HugeHeap has acted in the process.
var heapAdvised atomic.Bool

const (
	// maxHugeHeap bounds the memory HugeHeap advises: about what a stage's
	// heap takes besides the tables that advise huge pages themselves.
	maxHugeHeap = 256 << 20
	// heapPiece is the size of HugeHeap's pieces: small enough that the
	// runtime places one in the heap's free memory rather than past it,
	// large enough that whole huge pages make most of it.
	heapPiece = 16 << 20
)

// adviseRange gives advice for a range of the heap, which is named by its
// address alone, not by a pointer that would keep its memory alive.
func adviseRange(start, size uintptr, advice int) {
	_, _, _ = unix.Syscall(unix.SYS_MADVISE, start, size, uintptr(advice))
}

// hugeHeap is HugeHeap, run every time: it returns the ranges it advised,
// [start, end) each, in order.
func hugeHeap(n int64) [][2]uintptr {
	// The collector waits while the pieces are made: each one would start
	// a cycle, whose assists the pieces would wait on with nothing to mark.
	// For 256 MiB, mapPieces took 1.4-1.9 ms so against 6.8-7.8 ms, and
	// hugeHeap 3.8-5.0 against 8.5-9.7 (three runs each).
	gc := debug.SetGCPercent(-1)
	spans := mapPieces(n)
	debug.SetGCPercent(gc)
	for _, r := range spans {
		adviseRange(r[0], r[1]-r[0], unix.MADV_HUGEPAGE)
	}
	debug.FreeOSMemory()
	return spans
}

// mapPieces allocates n bytes in pieces, which makes the runtime map any
// that its free memory does not hold, and returns the whole huge pages of
// the ranges they cover, merged where pieces adjoin; the pieces are
// garbage once it returns.
func mapPieces(n int64) [][2]uintptr {
	var pieces [][]byte
	for n > 0 {
		k := min(n, heapPiece)
		pieces = append(pieces, make([]byte, k))
		n -= k
	}
	var spans [][2]uintptr
	for _, p := range pieces {
		lo := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
		spans = append(spans, [2]uintptr{lo, lo + uintptr(len(p))})
	}
	slices.SortFunc(spans, func(a, b [2]uintptr) int { return cmp.Compare(a[0], b[0]) })
	merged := spans[:0]
	for _, r := range spans {
		if k := len(merged); k > 0 && merged[k-1][1] == r[0] {
			merged[k-1][1] = r[1]
		} else {
			merged = append(merged, r)
		}
	}
	whole := merged[:0]
	for _, r := range merged {
		lo, hi := roundUp(r[0], HugeSize), r[1]&^(HugeSize-1)
		if lo < hi {
			whole = append(whole, [2]uintptr{lo, hi})
		}
	}
	return whole
}
