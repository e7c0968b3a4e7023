package counts

const (
	radixMaxWidth = 11
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
	width := (keyBits + passes - 1) / passes
	return int(passes) << width
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
	const buckets = 1 << radixMaxWidth
	shift := keyBits - radixMaxWidth
	start := hist[:buckets+1]
	next := hist[buckets+1 : 2*buckets+1]
	rest := hist[2*buckets+1:]
	clear(start)
	for _, k := range a {
		start[k>>shift+1]++
	}
	for b := range buckets {
		start[b+1] += start[b]
	}
	copy(next, start[:buckets])
	for _, k := range a {
		d := k >> shift
		tmp[next[d]] = k
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
	buckets := 1 << width
	mask := uint64(buckets - 1)
	h := hist[:int(passes)*buckets]
	clear(h)
	for _, k := range a {
		for p := range passes {
			h[int(p)*buckets+int(k>>(p*width)&mask)]++
		}
	}
	n := uint32(len(a))
	for p := range passes {
		hp := h[int(p)*buckets : int(p+1)*buckets]
		shift := p * width
		if hp[a[0]>>shift&mask] == n {
			continue
		}
		sum := uint32(0)
		for i, c := range hp {
			hp[i] = sum
			sum += c
		}
		for _, k := range a {
			d := k >> shift & mask
			tmp[hp[d]] = k
			hp[d]++
		}
		a, tmp = tmp, a
	}
	return a, tmp
}
