package counts_test

import (
	"context"
	"fmt"

	"github.com/pwe-project/pwe/counts"
	"github.com/pwe-project/pwe/formats"
)

func Example() {
	// Vocabulary counts, ids ordered by descending count.
	vocab := []int64{2, 1}
	c, err := counts.New(counts.Config{Window: 2, Negatives: 0}, vocab)
	if err != nil {
		panic(err)
	}
	defer c.Close()
	acc := c.NewAccumulator()
	if err := acc.Add([]int32{0, 1, 0}, 0); err != nil {
		panic(err)
	}
	st, err := c.Finish(context.Background(), func(b *formats.CountColumns) error {
		for _, r := range b.AppendTo(nil) {
			fmt.Printf("%d %d n_pos=%v n_neg=%v\n", r.TargetID, r.ContextID, r.NPos, r.NNeg)
		}
		return nil
	})
	if err != nil {
		panic(err)
	}
	fmt.Println("positive pairs:", st.PositivePairs)
	// Output:
	// 0 0 n_pos=2 n_neg=0
	// 0 1 n_pos=2 n_neg=0
	// 1 0 n_pos=2 n_neg=0
	// positive pairs: 6
}
