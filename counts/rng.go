package counts

// Random streams are counter based: each decision is a hash of the seed and
// the identity of what is decided (document and position, or target), so
// results do not depend on which goroutine made them or in what order.

const golden = 0x9e3779b97f4a7c15

// Stream domains keep the subsampling and negative streams of one seed
// apart.
const (
	domainSubsample = 0x5ab5a3b1e0000001
	domainNegatives = 0x6e6567a71e000002
)

// mix64 is the splitmix64 finaliser: a bijection of 64-bit words whose
// outputs pass as independent uniforms for distinct inputs.
func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// streamKey derives the key of the stream for one (seed, domain, id).
func streamKey(seed, domain, id uint64) uint64 {
	return mix64(mix64(seed^domain) + id*golden)
}

// rng is a splitmix64 sequence started at a stream key. aliasDraws reads
// its state as a wyrand counter instead, for the many draws of a target's
// negatives.
type rng struct{ s uint64 }

func newRNG(seed, domain, id uint64) rng { return rng{s: streamKey(seed, domain, id)} }

func (r *rng) next() uint64 {
	r.s += golden
	return mix64(r.s)
}

// float returns a uniform number in [0, 1) with 53 random bits.
func (r *rng) float() float64 { return float64(r.next()>>11) * 0x1p-53 }

// openFloat returns a uniform number in (0, 1), safe for logarithms.
func (r *rng) openFloat() float64 { return (float64(r.next()>>11) + 0.5) * 0x1p-53 }

// below returns a uniform integer in [0, n) by the multiply-high method;
// its bias is below n/2^64.
func (r *rng) below(n uint64) uint64 {
	hi, _ := mul64(r.next(), n)
	return hi
}
