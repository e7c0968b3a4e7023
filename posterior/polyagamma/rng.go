package polyagamma

import (
	"math"
	"math/bits"
	"math/rand/v2"
)

// rng draws the uniform, exponential and normal variates the samplers
// need (gammaGen builds gamma variates on them). Every variate costs one
// or more 64-bit words, four to six per PG(1, c) draw, so the generator
// itself is a large part of the sampler's time, and calling a rand.Source
// through its interface for each word costs more than producing it. rng
// therefore steps a xoshiro256++ state inline. When Src is a *Xoshiro
// (what the Gibbs sampler passes), that state is a copy of Src's, written
// back when the Rand or Fill call ends, so the words are exactly the ones
// Src would give and Fill matches repeated Rand (TestInlineXoshiro). Any
// other Source seeds the inline state with two of its words per Rand or
// Fill call, as Xoshiro.Seed does: draws are still reproducible from Src's
// seed, but Fill then uses Src differently from repeated Rand.
// Exponential and normal variates come from 256-layer ziggurats with
// float64 tables (Marsaglia & Tsang 2000, "The ziggurat method for
// generating random variables", J. Stat. Softw. 5(8)) that take all their
// bits from one word.
type rng struct {
	s0, s1, s2, s3 uint64
	src            *Xoshiro // where the state goes back to, if it came from one
}

func newRNG(src rand.Source) rng {
	if x, ok := src.(*Xoshiro); ok {
		g := x.rng()
		g.src = x
		return g
	}
	return NewXoshiro(src.Uint64(), src.Uint64()).rng()
}

// release writes the state back to the *Xoshiro it came from.
func (g *rng) release() {
	if g.src != nil {
		g.store(g.src)
	}
}

func (g *rng) uint64() uint64 {
	r := bits.RotateLeft64(g.s0+g.s3, 23) + g.s0
	t := g.s1 << 17
	g.s2 ^= g.s0
	g.s3 ^= g.s1
	g.s1 ^= g.s2
	g.s0 ^= g.s3
	g.s2 ^= t
	g.s3 = bits.RotateLeft64(g.s3, 45)
	return r
}

// Xoshiro is the xoshiro256++ generator (Blackman & Vigna, "Scrambled
// linear pseudorandom number generators", ACM Trans. Math. Softw. 47(4),
// 2021) as a rand.Source: 256 bits of state, period 2^256 - 1, every
// output bit of full quality (the ziggurats take their layer from the
// lowest eight). A Sampler steps it inline; its state advances by shifts
// and exclusive-ors rather than through PCG-DXSM's chain of 128-bit
// multiplications, which made sums of Devroye draws 6 to 11 % faster
// (BENCHMARKS.md, session 9). Streams seeded with different (a, b) start at
// different states, and with 256 bits of state they do not overlap in
// practice.
type Xoshiro struct{ s [4]uint64 }

// NewXoshiro returns a generator seeded with a and b.
func NewXoshiro(a, b uint64) *Xoshiro {
	x := &Xoshiro{}
	x.Seed(a, b)
	return x
}

// Seed resets x to the state of seeds a and b. Three Feistel rounds with
// SplitMix64's output function (Steele, Lea & Flood 2014) turn (a, b) into
// (u, v), a bijection in which each half depends on both seeds; two words
// of SplitMix64 started at u and two started at v (as Blackman and Vigna
// advise for seeding xoshiro) make the state. So distinct seeds give
// distinct states, never the all-zero one, and streams whose seeds share
// a word do not share half their state.
func (x *Xoshiro) Seed(a, b uint64) { x.s = seedXoshiro(a, b) }

// Uint64 returns the next word.
func (x *Xoshiro) Uint64() uint64 {
	g := x.rng()
	v := g.uint64()
	g.store(x)
	return v
}

// rng returns an inline generator at x's state, not tied to x.
func (x *Xoshiro) rng() rng { return rng{s0: x.s[0], s1: x.s[1], s2: x.s[2], s3: x.s[3]} }

// store sets x's state to g's.
func (g *rng) store(x *Xoshiro) { x.s = [4]uint64{g.s0, g.s1, g.s2, g.s3} }

func seedXoshiro(a, b uint64) [4]uint64 {
	mix := func(z uint64) uint64 { out, _ := splitMix64(z); return out }
	u := a ^ mix(b)
	v := b ^ mix(u)
	u ^= mix(v)
	var s [4]uint64
	s[0], u = splitMix64(u)
	s[1], _ = splitMix64(u)
	s[2], v = splitMix64(v)
	s[3], _ = splitMix64(v)
	return s
}

// splitMix64 advances a SplitMix64 state and returns its output and the
// new state. The output is a bijection of the new state, so two outputs
// from one start are never both zero.
func splitMix64(state uint64) (uint64, uint64) {
	state += 0x9e3779b97f4a7c15
	z := state
	z = (z ^ z>>30) * 0xbf58476d1ce4e5b9
	z = (z ^ z>>27) * 0x94d049bb133111eb
	return z ^ z>>31, state
}

// unif returns a uniform variate on the open interval (0, 1), so its log is
// finite.
func (g *rng) unif() float64 {
	return (float64(g.uint64()>>11) + 0.5) * (1.0 / (1 << 53))
}

// A ziggurat covers the density f (decreasing on [0, inf), f(0) = 1) with
// zigLayers layers of equal area v: layer 0 is [0, x_0] x [0, f(r)] plus
// the tail beyond r = x_1, layer i >= 1 is [0, x_i] x [f(x_i), f(x_{i+1})],
// with x_zigLayers = 0. A draw picks a layer and a uniform x in [0, x_i]
// from one 64-bit word (8 bits for the layer, bit 8 for a normal's sign, the
// top 53 bits for x); it is done at once when x < x_{i+1} (97.8% of
// words for the exponential, 98.5% for the normal).
const zigLayers = 256

type ziggurat struct {
	w    [zigLayers]float64 // x_i / 2^53
	k    [zigLayers]uint64  // 2^53 x_{i+1} / x_i: below it the point is under f
	f    [zigLayers + 1]float64
	r    float64
	invR float64
}

// newZiggurat builds the tables from r, f and its inverse; v is the layer
// area r f(r) + int_r^inf f.
func newZiggurat(r, tail float64, f, finv func(float64) float64) ziggurat {
	z := ziggurat{r: r, invR: 1 / r}
	v := r*f(r) + tail
	var x [zigLayers + 1]float64
	x[0], x[1] = v/f(r), r
	for i := 1; i < zigLayers-1; i++ {
		x[i+1] = finv(f(x[i]) + v/x[i])
	}
	for i := range zigLayers {
		z.w[i] = x[i] / (1 << 53)
		z.k[i] = uint64(x[i+1] / x[i] * (1 << 53))
		z.f[i] = f(x[i])
	}
	z.f[zigLayers] = 1
	return z
}

// Marsaglia and Tsang's r for 256 layers.
var (
	expZig = newZiggurat(7.69711747013104972, math.Exp(-7.69711747013104972),
		func(x float64) float64 { return math.Exp(-x) },
		func(y float64) float64 { return -math.Log(y) })
	normZig = newZiggurat(3.6541528853610088, math.Sqrt(math.Pi/2)*math.Erfc(3.6541528853610088/math.Sqrt2),
		func(x float64) float64 { return math.Exp(-x * x / 2) },
		func(y float64) float64 { return math.Sqrt(-2 * math.Log(y)) })
)

// exp returns a standard exponential variate.
func (g *rng) exp() float64 {
	u := g.uint64()
	if x, ok := expZig.fast(u); ok {
		return x
	}
	return g.expSlow(u)
}

// fast returns the variate a word u gives when it falls inside the
// ziggurat (for the normal, its absolute value), and whether it did. It is
// small enough to be inlined, and so is uint64, but not the two together
// with the call to the slow path: hot loops therefore spell out
//
//	u := g.uint64()
//	x, ok := expZig.fast(u)
//	if !ok {
//		x = g.expSlow(u)
//	}
//
// which saves the call, a fifth of the cost of a variate.
func (z *ziggurat) fast(u uint64) (float64, bool) {
	i, m := uint8(u), u>>11
	return float64(m) * z.w[i], m < z.k[i]
}

// height returns the height at fraction u of layer i >= 1, between
// f(x_i) and f(x_{i+1}) (i+1 taken as an int: as a uint8 it would wrap to 0
// in the top layer).
func (z *ziggurat) height(i uint8, u float64) float64 {
	j := int(i)
	return z.f[j] + u*(z.f[j+1]-z.f[j])
}

// expSlow finishes an exponential variate whose first word u fell outside
// the ziggurat's rectangles.
func (g *rng) expSlow(u uint64) float64 {
	z := &expZig
	for {
		i, m := uint8(u), u>>11
		x := float64(m) * z.w[i]
		switch {
		case m < z.k[i]:
			return x
		case i == 0:
			// The exponential's tail beyond r is r plus an exponential.
			return z.r + g.exp()
		case z.height(i, g.unif()) < math.Exp(-x):
			return x
		}
		u = g.uint64()
	}
}

// norm returns a standard normal variate.
func (g *rng) norm() float64 {
	u := g.uint64()
	if x, ok := normZig.fast(u); ok {
		return signed(x, u)
	}
	return g.normSlow(u)
}

// signed gives x the sign bit 8 of u holds, which the ziggurat leaves
// unused.
func signed(x float64, u uint64) float64 {
	if u&0x100 != 0 {
		return -x
	}
	return x
}

// normSlow finishes a normal variate whose first word u fell outside the
// ziggurat's rectangles.
func (g *rng) normSlow(u uint64) float64 {
	z := &normZig
	for {
		i, m := uint8(u), u>>11
		x := float64(m) * z.w[i]
		switch {
		case m < z.k[i]:
		case i == 0:
			// Marsaglia's (1964) tail method: r + e1/r given
			// e1^2 <= 2 r^2 e2 follows the normal beyond r.
			for {
				e1 := g.exp() * z.invR
				if e1*e1 <= 2*g.exp() {
					x = z.r + e1
					break
				}
			}
		case z.height(i, g.unif()) < math.Exp(-x*x/2):
		default:
			u = g.uint64()
			continue
		}
		return signed(x, u)
	}
}

// gammaGen draws Gamma(shape, 1) variates by Marsaglia & Tsang (2000),
// "A simple method for generating gamma variables", ACM TOMS 26(3); for
// shape < 1 it uses their boost Gamma(shape+1) U^(1/shape), with U^(1/shape)
// = exp(-E/shape) for an exponential E. The set-up (a square root and a
// division) is shared by the head terms of a gamma sum, which all have the
// same shape.
type gammaGen struct {
	d, c  float64 // Marsaglia & Tsang's d = a - 1/3 and 1/sqrt(9d), a >= 1
	boost float64 // 1/shape if shape < 1, else 0
}

func newGammaGen(shape float64) gammaGen {
	var boost float64
	if shape < 1 {
		boost = 1 / shape
		shape++
	}
	d := shape - 1.0/3
	return gammaGen{d: d, c: 1 / math.Sqrt(9*d), boost: boost}
}

func (gg *gammaGen) draw(g *rng) float64 {
	d, c := gg.d, gg.c
	var x float64
	for {
		w := g.uint64()
		n, ok := normZig.fast(w)
		if ok {
			n = signed(n, w)
		} else {
			n = g.normSlow(w)
		}
		v := 1 + c*n
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := g.unif()
		n2 := n * n
		if u < 1-0.0331*n2*n2 || math.Log(u) < 0.5*n2+d*(1-v+math.Log(v)) {
			x = d * v
			break
		}
	}
	if gg.boost != 0 {
		x *= math.Exp(-g.exp() * gg.boost)
	}
	return x
}
