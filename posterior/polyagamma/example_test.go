package polyagamma_test

import (
	"fmt"

	"github.com/pwe-project/pwe/posterior/polyagamma"
)

func Example() {
	s := polyagamma.Sampler{Src: polyagamma.NewXoshiro(1, 2)}
	w := s.Rand(3, 1.5) // one Pólya-Gamma PG(3, 1.5) draw
	fmt.Println(w > 0)
	fmt.Printf("mean %.6f  variance %.6f\n", polyagamma.Mean(3, 1.5), polyagamma.Var(3, 1.5))
	fmt.Printf("at c = 0: mean %.4f = b/4, variance %.4f = b/24\n", polyagamma.Mean(3, 0), polyagamma.Var(3, 0))
	fmt.Printf("P(W <= mean) = %.6f\n", polyagamma.CDF(3, 1.5, polyagamma.Mean(3, 1.5)))
	// Output:
	// true
	// mean 0.635149  variance 0.083426
	// at c = 0: mean 0.7500 = b/4, variance 0.1250 = b/24
	// P(W <= mean) = 0.574564
}
