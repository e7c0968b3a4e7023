// Package prefetch asks the processor to bring memory into its caches
// ahead of use, for loops whose loads go to places known in advance but
// scattered too widely for the hardware to guess.
package prefetch

// Words prefetches, for every index x in idx, the cache lines that hold
// the words of base from x-span to x+span: base[x-span] and base[x+span]
// must lie within base for every x. It only hints; where the processor has
// no prefetch instruction that pwe uses, it does nothing.
func Words(base []uint32, idx []uint32, span int) {
	if len(idx) == 0 || len(base) == 0 {
		return
	}
	words(&base[0], idx, span*4)
}
