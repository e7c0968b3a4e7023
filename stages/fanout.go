package stages

import (
	"context"

	"golang.org/x/sync/errgroup"

	"github.com/pwe-project/pwe/formats/input"
)

// batchBytes is the document text per batch handed to a worker: large enough
// to amortise channel traffic, small enough that threads*4 batches in flight
// stay a few megabytes.
const batchBytes = 1 << 20

// fanOut reads the documents of r in batches and calls work for each batch on
// one of threads worker goroutines; worker is the goroutine's index in
// [0, threads), so per-worker state needs no locks. The first error cancels
// the rest. Batches are recycled, so work must not keep a batch's slices.
func fanOut(ctx context.Context, r *input.Reader, threads int, work func(worker int, b *input.Batch) error) error {
	g, ctx := errgroup.WithContext(ctx)
	free := make(chan *input.Batch, 2*threads+2)
	for range cap(free) {
		free <- new(input.Batch)
	}
	full := make(chan *input.Batch, cap(free))
	g.Go(func() error {
		defer close(full)
		for {
			var b *input.Batch
			select {
			case b = <-free:
			case <-ctx.Done():
				return ctx.Err()
			}
			if !r.NextBatch(b, batchBytes) {
				return r.Err()
			}
			select {
			case full <- b:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	})
	for w := range threads {
		g.Go(func() error {
			for b := range full {
				if err := ctx.Err(); err != nil {
					return err
				}
				if err := work(w, b); err != nil {
					return err
				}
				free <- b
			}
			return nil
		})
	}
	return g.Wait()
}
