//go:build !linux

package pages

// Huge does nothing where transparent huge pages are not advised by
// madvise; see the Linux version.
func Huge[E any](s []E) {}

// Unhuge does nothing where Huge does nothing.
func Unhuge[E any](s []E) {}

// HugeHeap does nothing where Huge does nothing.
func HugeHeap(n int64) (withdraw func()) { return func() {} }

// Release does nothing where the memory of a slice in use cannot be given
// back; see the Linux version.
func Release[E any](s []E, align int) {}
