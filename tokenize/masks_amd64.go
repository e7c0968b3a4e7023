//go:build amd64 && !purego

package tokenize

// haveBlockClasses reports whether blockClasses is implemented here.
const haveBlockClasses = true

// blockClasses returns the masks of word runes, upper-case letters and
// white space (asciiMasks's) of the 64 bytes at p, with SSE2's byte
// compares: four loads of sixteen bytes where asciiMasksGo takes eight of
// eight and five range tests on each. Bytes from 0x80 up, signed, fall in
// no class.
//
//go:noescape
func blockClasses(p *byte) (word, upper, white uint64)
