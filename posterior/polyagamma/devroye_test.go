package polyagamma

import (
	"math"
	"testing"
)

// igCDF returns P(X <= x) for the inverse Gaussian IG(1/z, 1) (the Lévy
// law 1/chi^2_1 at z = 0), with exp(2z) Phi(-b) formed in logs.
func igCDF(z, x float64) float64 {
	sx := math.Sqrt(x)
	a := 0.5 * math.Erfc(-(x*z-1)/sx/math.Sqrt2)
	return a + math.Exp(2*z+math.Log(0.5*math.Erfc((x*z+1)/sx/math.Sqrt2)))
}

// The left-hand piece of Devroye's envelope is IG(1/z, 1) truncated to
// (0, t); both of its samplers (the normal tail with the tilt folded into
// the acceptance for z <= 1/t, Michael, Schucany & Haas above) against the
// exact CDF, KS at family-wise level 1e-3.
func TestDevroyeLeft(t *testing.T) {
	if relErr(tailA, 1/math.Sqrt(devroyeT)) > 1e-15 || relErr(tailRate, (tailA+math.Sqrt(tailA*tailA+4))/2) > 1e-15 {
		t.Fatalf("tail constants %v, %v do not match t = %v", tailA, tailRate, devroyeT)
	}
	zs := []float64{0, 0.3, 1.2, 1 / devroyeT, 1.6, 3, 50, 5000}
	const n = 100_000
	crit := ksCritical(1e-3/float64(len(zs)), n)
	g := newRNG(NewXoshiro(11, 12))
	xs := make([]float64, n)
	for _, z := range zs {
		var d devroye
		d.init(2 * z)
		for i := range xs {
			xs[i] = d.left(&g)
			if !(xs[i] > 0 && xs[i] < devroyeT) {
				t.Fatalf("z=%g: draw %g outside (0, t)", z, xs[i])
			}
		}
		ft := igCDF(z, devroyeT)
		if D := ksOneSample(xs, func(x float64) float64 { return igCDF(z, x) / ft }); D > crit {
			t.Errorf("z=%g: KS D = %.5f above %.5f", z, D, crit)
		}
	}
}
