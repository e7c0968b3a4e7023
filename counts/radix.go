package counts

const (
	radixMaxWidth = 11
	radixMaxPass  = (64 + radixMaxWidth - 1) / radixMaxWidth
)

// radixHistLen is the histogram length radixSort needs for keyBits-bit
// keys.
func radixHistLen(keyBits uint) int {
	if keyBits == 0 {
		return 0
	}
	passes := (keyBits + radixMaxWidth - 1) / radixMaxWidth
	width := (keyBits + passes - 1) / passes
	return int(passes) << width
}

// radixSort sorts a, whose keys use the low keyBits bits, by least
// significant digit first, using tmp (same length) as scratch. It returns
// the sorted keys and the other buffer, free for reuse. Digits on which all
// keys agree are skipped.
func radixSort(a, tmp []uint64, keyBits uint, hist []uint32) (sorted, free []uint64) {
	if keyBits == 0 {
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
