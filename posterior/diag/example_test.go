package diag_test

import (
	"fmt"

	"github.com/pwe-project/pwe/posterior/diag"
)

func ExampleSummarizer_Summarize() {
	chains := [][]float64{
		{0.3, -1.2, 0.8, 0.1, -0.4, 1.5, 0.2, -0.7, 0.9, -0.1, 0.4, -0.3},
		{1.1, 0.5, -0.6, 0.0, 1.3, -0.9, 0.6, 0.2, -0.2, 0.7, -1.0, 0.3},
		{2.1, 2.6, 1.9, 2.4, 3.0, 2.2, 1.7, 2.8, 2.3, 2.0, 2.5, 1.8},
	}
	var s diag.Summarizer // reuse it for every coordinate
	sum := s.Summarize(chains)
	fmt.Printf("mean %.3f  median %.3f  sd %.3f  q5 %.3f  q95 %.3f\n",
		sum.Mean, sum.Median, sum.SD, sum.Q5, sum.Q95)
	fmt.Printf("rhat %.2f  ess_bulk %.1f  ess_tail %.1f\n", sum.Rhat, sum.ESSBulk, sum.ESSTail)
	fmt.Printf("converged: %v\n", sum.Rhat < 1.01)
	// Output:
	// mean 0.856  median 0.650  sd 1.196  q5 -0.925  q95 2.650
	// rhat 1.56  ess_bulk 14.7  ess_tail 56.0
	// converged: false
}

func ExampleQuantile() {
	sorted := []float64{1, 3, 4, 7, 10}
	fmt.Printf("%.2f %.2f %.2f\n", diag.Quantile(sorted, 0.05), diag.Quantile(sorted, 0.5), diag.Quantile(sorted, 0.95))
	// Output:
	// 1.40 4.00 9.40
}
