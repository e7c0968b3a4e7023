package posterior

import "fmt"

// Params holds one value of every vector: Rho[i*D:(i+1)*D] is the target
// vector rho_i and Alpha[j*D:(j+1)*D] the context vector alpha_j (row-major
// V x D matrices).
type Params struct {
	V, D  int
	Rho   []float64
	Alpha []float64
}

// NewParams returns zero vectors for v tokens in d dimensions, Rho and
// Alpha sharing one allocation.
func NewParams(v, d int) *Params {
	if v < 1 || d < 1 {
		panic(fmt.Sprintf("posterior: NewParams(%d, %d): sizes must be positive", v, d))
	}
	buf := make([]float64, 2*v*d)
	return paramsOver(v, d, buf)
}

// paramsOver returns Params viewing buf, laid out as Rho then Alpha.
func paramsOver(v, d int, buf []float64) *Params {
	return &Params{V: v, D: d, Rho: buf[: v*d : v*d], Alpha: buf[v*d:]}
}

// Target returns rho_i, aliasing p.Rho.
func (p *Params) Target(i int) []float64 { return p.Rho[i*p.D : (i+1)*p.D : (i+1)*p.D] }

// Context returns alpha_j, aliasing p.Alpha.
func (p *Params) Context(j int) []float64 { return p.Alpha[j*p.D : (j+1)*p.D : (j+1)*p.D] }

// Clone returns a deep copy of p.
func (p *Params) Clone() *Params {
	q := NewParams(p.V, p.D)
	q.copyFrom(p)
	return q
}

// copyFrom sets p's vectors to q's, which must have p's sizes.
func (p *Params) copyFrom(q *Params) {
	copy(p.Rho, q.Rho)
	copy(p.Alpha, q.Alpha)
}

// Logit returns rho_i . alpha_j, the log-odds that (i, j) is a positive
// pair.
func (p *Params) Logit(i, j int) float64 {
	return dot(p.Target(i), p.Context(j))
}

func dot(x, y []float64) float64 {
	y = y[:len(x)]
	var s float64
	for k, v := range x {
		s += v * y[k]
	}
	return s
}
