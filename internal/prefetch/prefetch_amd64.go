//go:build amd64 && !purego

package prefetch

import "unsafe"

// ends issues PREFETCHT0 for base+x<<shift-off and base+x<<shift+off, for
// x in idx.
//
//go:noescape
func ends(base unsafe.Pointer, idx []uint32, off int, shift uint)

// bitsAt issues PREFETCHT0 for base+(x+bias)/8, for x in idx.
//
//go:noescape
func bitsAt(base *byte, idx []uint32, bias int)
