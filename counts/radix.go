package counts

const (
	radixMaxWidth = 11
	radixBuckets  = 1 << radixMaxWidth
	radixMaxPass  = (64 + radixMaxWidth - 1) / radixMaxWidth
	// Keys of more than radixSplitBits bits are first split on their top
	// digit, so that the rest of the sort runs bucket by bucket in cache.
	radixSplitBits = 2 * radixMaxWidth
)

// radixHistLen is the histogram length radixSort needs for keyBits-bit
// keys.
func radixHistLen(keyBits uint) int {
	if keyBits > radixSplitBits {
		return 2<<radixMaxWidth + 1 + lsdHistLen(keyBits-radixMaxWidth)
	}
	return lsdHistLen(keyBits)
}

func lsdHistLen(keyBits uint) int {
	if keyBits == 0 {
		return 0
	}
	passes := (keyBits + radixMaxWidth - 1) / radixMaxWidth
	return int(passes) * radixBuckets
}

// radixSort sorts a, whose keys use the low keyBits bits, using tmp (same
// length) as scratch. It returns the sorted keys and the other buffer, free
// for reuse.
//
// Short keys are sorted by least significant digit first. Longer ones are
// first distributed on their top digit: sorting a buffer much larger than
// the cache takes one pass through memory that way, against one per digit,
// as long as the buckets are small enough to be sorted in cache. Pair keys
// with the larger id on top are: the larger id of a spilled pair is spread
// over most of the vocabulary, where the smaller one is mostly one of a few
// hundred frequent tokens.
func radixSort(a, tmp []uint64, keyBits uint, hist []uint32) (sorted, free []uint64) {
	if keyBits <= radixSplitBits || len(a) < 1<<radixMaxWidth {
		return lsdSort(a, tmp, keyBits, hist)
	}
	const buckets, bm = radixBuckets, radixBuckets - 1
	shift := keyBits - radixMaxWidth
	start := (*[buckets + 1]uint32)(hist[:buckets+1])
	next := (*[buckets]uint32)(hist[buckets+1 : 2*buckets+1])
	rest := hist[2*buckets+1:]
	clear(start[:])
	// The keys have keyBits bits, so masking the top digit changes
	// nothing; it spares the bounds checks.
	for _, k := range a {
		start[k>>shift&bm+1]++
	}
	for b := range buckets {
		start[b+1] += start[b]
	}
	copy(next[:], start[:buckets])
	out := tmp[:len(a)]
	for _, k := range a {
		d := k >> shift & bm
		out[next[d]] = k
		next[d]++
	}
	for b := range buckets {
		lo, hi := start[b], start[b+1]
		if hi-lo < 2 {
			continue
		}
		if s, _ := lsdSort(tmp[lo:hi], a[lo:hi], shift, rest); &s[0] != &tmp[lo] {
			copy(tmp[lo:hi], s)
		}
	}
	return tmp, a
}

// lsdSort is radixSort by least significant digit first. Digits on which
// all keys agree are skipped.
func lsdSort(a, tmp []uint64, keyBits uint, hist []uint32) (sorted, free []uint64) {
	if keyBits == 0 || len(a) == 0 {
		return a, tmp
	}
	passes := (keyBits + radixMaxWidth - 1) / radixMaxWidth
	width := (keyBits + passes - 1) / passes
	mask := uint64(1)<<width - 1
	h := hist[:int(passes)*radixBuckets]
	clear(h)
	// The histograms of all digits are counted in one read of the keys.
	// Each has radixBuckets entries whatever the width, so that indices
	// masked with radixBuckets-1 need no bounds checks, and the common
	// numbers of digits have loops of their own: a loop over the digits
	// inside the loop over the keys kept its counters in memory.
	const bm = radixBuckets - 1
	digit := func(p uint) *[radixBuckets]uint32 {
		return (*[radixBuckets]uint32)(h[int(p)*radixBuckets:])
	}
	switch passes {
	case 1:
		h0 := digit(0)
		for _, k := range a {
			h0[k&mask&bm]++
		}
	case 2:
		h0, h1 := digit(0), digit(1)
		for _, k := range a {
			h0[k&mask&bm]++
			h1[k>>width&mask&bm]++
		}
	case 3:
		h0, h1, h2 := digit(0), digit(1), digit(2)
		for _, k := range a {
			h0[k&mask&bm]++
			h1[k>>width&mask&bm]++
			h2[k>>(2*width)&mask&bm]++
		}
	default:
		for _, k := range a {
			for p := range passes {
				digit(p)[k>>(p*width)&mask&bm]++
			}
		}
	}
	n := uint32(len(a))
	for p := range passes {
		hp := digit(p)
		shift := p * width
		if hp[a[0]>>shift&mask&bm] == n {
			continue
		}
		sum := uint32(0)
		for i, c := range hp[:mask+1] {
			hp[i] = sum
			sum += c
		}
		out := tmp[:len(a)]
		for _, k := range a {
			d := k >> shift & mask & bm
			out[hp[d]] = k
			hp[d]++
		}
		a, tmp = out, a
	}
	return a, tmp
}
