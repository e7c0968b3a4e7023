//go:build amd64 && !purego

package prefetch

// words issues PREFETCHT0 for base+4x-off and base+4x+off, for x in idx.
//
//go:noescape
func words(base *uint32, idx []uint32, off int)
