package stages

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"testing"
	"time"
)

// TestFanOutInOrder runs fanOutInOrder over numbered batches with random
// delays and checks that every batch is done once, directly or by work and
// then consume with its own result, that the in-order calls are made one at
// a time and in batch order, and that an error from any of the three
// functions ends the run with that error.
func TestFanOutInOrder(t *testing.T) {
	const n = 300
	for _, threads := range []int{1, 2, 3, 5} {
		for _, failAt := range []string{"", "direct", "work", "consume"} {
			t.Run(fmt.Sprintf("threads %d fail %q", threads, failAt), func(t *testing.T) {
				var seq int
				next := func(b *int) (bool, error) {
					if seq == n {
						return false, nil
					}
					*b, seq = seq, seq+1
					return true, nil
				}
				var inside atomic.Int32 // calls in order under way
				var order []int         // batches in the order done or consumed
				worked := 0             // touched only in order
				var rngs [8]*rand.Rand
				for w := range rngs {
					rngs[w] = rand.New(rand.NewPCG(uint64(threads), uint64(w)))
				}
				pause := func(w int) { time.Sleep(time.Duration(rngs[w].IntN(100)) * time.Microsecond) }
				fail := errors.New("injected")
				var injected atomic.Bool
				failing := func(b int) bool {
					if b != n/2 {
						return false
					}
					injected.Store(true)
					return true
				}
				// inOrder records a call in order, which lasts a while, and
				// checks that no other overlaps it.
				inOrder := func(w, b int) {
					if inside.Add(1) != 1 {
						t.Errorf("batch %d: calls in order overlap", b)
					}
					order = append(order, b)
					pause(w)
					inside.Add(-1)
				}
				err := fanOutInOrder(context.Background(), threads, next,
					func(b *int) error {
						inOrder(0, *b)
						if failAt == "direct" && failing(*b) {
							return fail
						}
						return nil
					},
					func(w int, b *int, res *[2]int) error {
						pause(w)
						*res = [2]int{*b, 2 * *b}
						if failAt == "work" && failing(*b) {
							return fail
						}
						return nil
					},
					func(b *int, res *[2]int) error {
						if res[0] != *b || res[1] != 2*res[0] {
							t.Errorf("batch %d consumed with the result %d", res[0], res[1])
						}
						worked++
						inOrder(7, res[0])
						if failAt == "consume" && failing(res[0]) {
							return fail
						}
						return nil
					})
				// A function fails at batch n/2 only if that batch goes its
				// way; then the run ends with its error, and otherwise well.
				if injected.Load() {
					if !errors.Is(err, fail) {
						t.Fatalf("error %v, want the injected one", err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if len(order) != n {
					t.Fatalf("%d batches done or consumed, want %d", len(order), n)
				}
				for i, b := range order {
					if b != i {
						t.Fatalf("in-order call %d was for batch %d", i, b)
					}
				}
				if threads == 1 && worked > 0 || threads > 1 && worked == 0 {
					t.Errorf("%d threads: %d batches worked out of order", threads, worked)
				}
			})
		}
	}
}
