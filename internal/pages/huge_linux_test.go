package pages

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestHuge checks that Huge marks the huge pages inside a large slice for
// transparent huge pages (VmFlags "hg" in /proc/self/smaps) and leaves its
// values alone.
func TestHuge(t *testing.T) {
	s := adviseFilled(t, Huge[uint64])
	start := uintptr(unsafe.Pointer(&s[0]))
	lo := (start + HugeSize - 1) &^ (HugeSize - 1)
	hi := (start + uintptr(len(s))*8) &^ (HugeSize - 1)
	if hi-lo < HugeSize {
		t.Fatalf("no whole huge page in [%#x, %#x)", start, start+uintptr(len(s))*8)
	}
	checkHugeFlag(t, lo, hi)
}

// TestUnhuge checks that Unhuge withdraws Huge's advice (VmFlags "nh"
// instead of "hg") where the system maps huge pages only on advice, leaves
// the values alone, and leaves the advice elsewhere.
func TestUnhuge(t *testing.T) {
	s := adviseFilled(t, func(s []uint64) {
		Huge(s)
		Unhuge(s)
	})
	b := wholeHugePages(s)
	lo := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	hi := lo + uintptr(len(b))
	if adviseOnly() {
		checkFlag(t, lo, hi, "nh")
	} else {
		checkFlag(t, lo, hi, "hg")
	}
}

// TestHugeHeap checks that hugeHeap marks ranges for transparent huge
// pages, returns them to the system, that the heap's next values land
// there, and that HugeHeap's withdraw withdraws the advice.
func TestHugeHeap(t *testing.T) {
	if !adviseOnly() {
		t.Skip("transparent huge pages are not left to advice here")
	}
	const n = 48 << 20
	spans := hugeHeap(n)
	var size uintptr
	for _, r := range spans {
		size += r[1] - r[0]
		checkHugeFlag(t, r[0], r[1])
	}
	if size < n/2 {
		t.Fatalf("%d bytes advised of %d", size, n)
	}
	// Returned to the system, the ranges do not count against the memory
	// limit.
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	if ms.HeapReleased < uint64(size) {
		t.Errorf("%d bytes of the heap released to the system after advising %d", ms.HeapReleased, size)
	}
	// The pieces took the heap's free memory, and the runtime hands out the
	// lowest free pages first: the next values land in the ranges.
	const chunk = 64 << 10
	var kept [][]byte
	in := 0
	for range size / chunk {
		b := make([]byte, chunk)
		p := uintptr(unsafe.Pointer(&b[0]))
		for _, r := range spans {
			if p >= r[0] && p < r[1] {
				in++
				break
			}
		}
		kept = append(kept, b)
	}
	if want := len(kept) / 2; in < want {
		t.Errorf("%d of %d new slices of 64 KiB in the advised ranges, want at least %d", in, len(kept), want)
	}
	for _, r := range spans {
		adviseRange(r[0], r[1]-r[0], unix.MADV_NOHUGEPAGE) // as HugeHeap's withdraw
		checkFlag(t, r[0], r[1], "nh")
	}
}

// TestHugeHeapOnce checks that HugeHeap acts once in a process.
func TestHugeHeapOnce(t *testing.T) {
	if !adviseOnly() {
		t.Skip("transparent huge pages are not left to advice here")
	}
	heapAdvised.Store(false)
	HugeHeap(8 << 20)()
	if !heapAdvised.Load() {
		t.Fatal("HugeHeap did not act")
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before := ms.NumForcedGC
	HugeHeap(8 << 20)()
	runtime.ReadMemStats(&ms)
	if ms.NumForcedGC != before {
		t.Errorf("HugeHeap acted a second time: %d forced collections", ms.NumForcedGC-before)
	}
}

// adviseFilled fills a slice of three huge pages, calls advise on it and
// checks that the values stayed. It skips the test on a kernel without
// transparent huge pages.
func adviseFilled(t *testing.T, advise func([]uint64)) []uint64 {
	t.Helper()
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skip("no transparent huge pages on this kernel")
	}
	s := make([]uint64, 3*HugeSize/8)
	for i := range s {
		s[i] = uint64(i) * 0x9e3779b97f4a7c15
	}
	advise(s)
	for i, x := range s {
		if x != uint64(i)*0x9e3779b97f4a7c15 {
			t.Fatalf("element %d changed to %#x", i, x)
		}
	}
	return s
}

// checkHugeFlag checks that the mappings covering [lo, hi) are all marked
// for transparent huge pages.
func checkHugeFlag(t *testing.T, lo, hi uintptr) {
	t.Helper()
	checkFlag(t, lo, hi, "hg")
}

// checkFlag checks that the mappings covering [lo, hi) all have the flag
// in VmFlags.
func checkFlag(t *testing.T, lo, hi uintptr, flag string) {
	t.Helper()
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skip(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	var from, to uintptr
	covered := uintptr(0)
	for sc.Scan() {
		line := sc.Text()
		if a, b, ok := vmaRange(line); ok {
			from, to = a, b
			continue
		}
		flags, ok := strings.CutPrefix(line, "VmFlags:")
		if !ok || to <= lo || from >= hi {
			continue
		}
		if !strings.Contains(" "+flags+" ", " "+flag+" ") {
			t.Fatalf("mapping %#x-%#x, inside the slice's huge pages, has flags%s", from, to, flags)
		}
		covered += min(to, hi) - max(from, lo)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if covered != hi-lo {
		t.Fatalf("mappings with the flag cover %d bytes of the %d advised", covered, hi-lo)
	}
}

// vmaRange parses the first line of a mapping in /proc/self/smaps,
// "start-end perms ...".
func vmaRange(line string) (from, to uintptr, ok bool) {
	field, _, _ := strings.Cut(line, " ")
	a, b, ok := strings.Cut(field, "-")
	if !ok {
		return 0, 0, false
	}
	x, err1 := strconv.ParseUint(a, 16, 64)
	y, err2 := strconv.ParseUint(b, 16, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return uintptr(x), uintptr(y), true
}

// TestBufferHuge checks that a Buffer of half a huge page or more is made
// of whole huge pages, aligned and marked for transparent huge pages.
func TestBufferHuge(t *testing.T) {
	if _, err := os.Stat("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil {
		t.Skip("no transparent huge pages on this kernel")
	}
	// Half a huge page and more takes whole huge pages.
	for _, n := range []int{3*HugeSize - 5, HugeSize/2 + 5} {
		var m Buffer
		m.Reserve(n)
		b := m.Bytes()[:m.Cap()]
		start := uintptr(unsafe.Pointer(&b[0]))
		if start%HugeSize != 0 || len(b)%HugeSize != 0 {
			t.Fatalf("buffer of %d at %#x of %d bytes, want whole huge pages", n, start, len(b))
		}
		checkHugeFlag(t, start, start+uintptr(len(b)))
		m.Free()
	}
}

// TestRelease checks that Release zeroes exactly the aligned blocks wholly
// inside the slice given, for several alignments and ends that do and do
// not fall on a block, and that it gives their memory back: the pages are
// no longer resident (mincore).
func TestRelease(t *testing.T) {
	for _, align := range []int{size, 4 * size, HugeSize} {
		for _, cut := range [][2]int{{0, 3 * HugeSize}, {123, 2*HugeSize + 4*size + 8}, {size + 4, size + 8}, {0, 0}} {
			s := make([]byte, 4*HugeSize)
			for i := range s {
				s[i] = byte(i%251 + 1)
			}
			part := s[cut[0]:cut[1]]
			Release(part, align)
			start := uintptr(unsafe.Pointer(&s[0]))
			lo := (start + uintptr(cut[0]) + uintptr(align) - 1) &^ uintptr(align-1)
			hi := (start + uintptr(cut[1])) &^ uintptr(align-1)
			for i := range s {
				a := start + uintptr(i)
				want := byte(i%251 + 1)
				if a >= lo && a < hi {
					want = 0
				}
				if s[i] != want {
					t.Fatalf("align %d, s[%d:%d]: byte %d is %d, want %d", align, cut[0], cut[1], i, s[i], want)
				}
			}
			runtime.KeepAlive(s)
		}
	}
	// Residency: a block released and not touched again is not mapped.
	s := make([]byte, 3*HugeSize)
	for i := range s {
		s[i] = 1
	}
	Release(s, size)
	start := uintptr(unsafe.Pointer(&s[0]))
	lo := (start + size - 1) &^ (size - 1)
	hi := (start + uintptr(len(s))) &^ (size - 1)
	vec := make([]byte, (hi-lo)/size)
	if _, _, errno := unix.Syscall(unix.SYS_MINCORE, lo, hi-lo, uintptr(unsafe.Pointer(&vec[0]))); errno != 0 {
		t.Fatal(errno)
	}
	for i, v := range vec {
		if v&1 != 0 {
			t.Fatalf("page %d of %d is still resident after Release", i, len(vec))
		}
	}
	runtime.KeepAlive(s)
}
