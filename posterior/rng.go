package posterior

// Sides of a sweep, the stream used for initial values, the stream of a
// sweep's frame-change moves and the streams of MAP's random starts (one
// per start, in the chain's place).
const (
	sideRho      = 0
	sideAlpha    = 1
	sideInit     = 2
	sideGroup    = 3
	sideMAPStart = 4
)

// splitmix64 is the finaliser of Steele, Lea and Flood's SplitMix64: a
// bijection of uint64 that spreads every input bit over the output.
func splitmix64(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}

// streamSeeds returns the two seeds of the random stream for one token
// update: the stream depends only on (seed, chain, sweep, side, token), so
// every draw is the same whichever thread makes it. For a fixed seed the
// map is injective for chain < 2^56, side < 2^8 and sweep, token < 2^32.
func streamSeeds(seed uint64, chain, sweep, side, token int) (uint64, uint64) {
	hi := splitmix64(splitmix64(seed) ^ (uint64(chain)<<8 | uint64(side)))
	lo := splitmix64(uint64(uint32(sweep))<<32 | uint64(uint32(token)))
	return hi, lo
}

// sweepsFit reports whether warmup + draws x thin sweeps (warmup, draws
// >= 0, thin >= 1) number fewer than 2^32, the range of the streams' sweep
// index, without overflowing on any size of int.
func sweepsFit(warmup, draws, thin int) bool {
	const limit = int64(1) << 32
	w, d, t := int64(warmup), int64(draws), int64(thin)
	return w < limit && d <= (limit-1-w)/t
}
