//go:build amd64 && !purego

package prefetch

import "unsafe"

// window issues PREFETCHT0 for base+x<<shift-off, base+x<<shift+off and
// marks+(x+bias)/8, for x in idx.
//
//go:noescape
func window(base unsafe.Pointer, marks *byte, idx []uint32, off int, shift uint, bias int)
