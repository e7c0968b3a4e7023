package polyagamma

import (
	"encoding/binary"
	"math"
	"math/bits"
	"math/rand/v2"
)

// rng draws the uniform, exponential and normal variates the samplers
// need (gammaGen builds gamma variates on them). Every variate costs one
// or more 64-bit words, four to six per PG(1, c) draw, so the generator
// itself is a large part of the sampler's time, and calling a rand.Source
// through its interface for each word costs more than producing it. rng therefore steps a PCG-DXSM
// state inline. When Src is a *rand.PCG (what the Gibbs sampler passes),
// that state is a copy of Src's, written back when the Rand or Fill call
// ends, so the words are exactly the ones Src would give and Fill matches
// repeated Rand (TestInlinePCG). Any other Source seeds the inline state
// with two of its words per Rand or Fill call: draws are still reproducible
// from Src's seed, but Fill then uses Src differently from repeated Rand.
// Exponential and normal variates come from 256-layer ziggurats with
// float64 tables (Marsaglia & Tsang 2000, "The ziggurat method for
// generating random variables", J. Stat. Softw. 5(8)) that take all their
// bits from one word.
type rng struct {
	hi, lo uint64
	pcg    *rand.PCG // where the state goes back to, if it came from one
}

// pcgEncoding is the length of a *rand.PCG's binary encoding, "pcg:"
// followed by the two state words in big-endian order.
const pcgEncoding = 20

func newRNG(src rand.Source) rng {
	if p, ok := src.(*rand.PCG); ok {
		var buf [pcgEncoding]byte
		b, err := p.AppendBinary(buf[:0])
		// An encoding this code does not know is treated as any Source.
		if err == nil && len(b) == pcgEncoding && string(b[:4]) == "pcg:" {
			return rng{hi: binary.BigEndian.Uint64(b[4:]), lo: binary.BigEndian.Uint64(b[12:]), pcg: p}
		}
	}
	return rng{hi: src.Uint64(), lo: src.Uint64()}
}

// release writes the state back to the *rand.PCG it came from.
func (g *rng) release() {
	if g.pcg == nil {
		return
	}
	var buf [pcgEncoding]byte
	b := append(buf[:0], "pcg:"...)
	b = binary.BigEndian.AppendUint64(b, g.hi)
	b = binary.BigEndian.AppendUint64(b, g.lo)
	if err := g.pcg.UnmarshalBinary(b); err != nil {
		panic("polyagamma: cannot restore PCG state: " + err.Error())
	}
}

// PCG-DXSM constants (O'Neill, "PCG: a family of simple fast
// space-efficient statistically good algorithms for random number
// generation", 2014; the DXSM output function of pcg-cpp, as used by
// math/rand/v2): the 128-bit LCG multiplier and increment, each as high
// and low word, and the 64-bit output multiplier.
const (
	pcgMulHi   = 0x2360ed051fc65da4
	pcgMulLo   = 0x4385df649fccf645
	pcgIncHi   = 0x5851f42d4c957f2d
	pcgIncLo   = 0x14057b7ef767814f
	pcgOutMult = 0xda942042e4dd58b5
)

func (g *rng) uint64() uint64 {
	hi, lo := bits.Mul64(g.lo, pcgMulLo)
	hi += g.hi*pcgMulLo + g.lo*pcgMulHi
	lo += pcgIncLo
	if lo < pcgIncLo {
		hi++
	}
	hi += pcgIncHi
	g.hi, g.lo = hi, lo
	hi = (hi ^ hi>>32) * pcgOutMult
	return (hi ^ hi>>48) * (lo | 1)
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
