package stages

import (
	"context"

	"golang.org/x/sync/errgroup"

	"github.com/pwe-project/pwe/formats/input"
)

// batchBytes is the document text per batch handed to a worker: large enough
// to amortise channel traffic, small enough that the batches in flight stay
// in the cache. With inFlight's batches, 512 KiB made tokenize 1.6-1.9 %
// cheaper than 1 MiB on one and two threads (and 256 KiB no better); when
// more batches were in flight, 2 and 4 MiB had been 5 and 12 % slower.
const batchBytes = 512 << 10

// inFlight is the number of batches that exist at once for threads workers:
// one being read and one for each worker. More let the reader run ahead,
// but then a batch is no longer in the cache when it is worked on and its
// result consumed: with 2*threads+2, tokenize on two threads took 7-9 %
// more CPU and 6-7 % more wall time, and 25 MiB more memory.
func inFlight(threads int) int { return threads + 1 }

// nextBatch reads the next batch of r into b, as fanOutFrom's next.
func nextBatch(r *input.Reader) func(b *input.Batch) (bool, error) {
	return func(b *input.Batch) (bool, error) {
		if !r.NextBatch(b, batchBytes) {
			return false, r.Err()
		}
		return true, nil
	}
}

// fanOut reads the documents of r in batches and calls work for each batch on
// one of threads worker goroutines; worker is the goroutine's index in
// [0, threads), so per-worker state needs no locks. The first error cancels
// the rest. Batches are recycled, so work must not keep a batch's slices.
func fanOut(ctx context.Context, r *input.Reader, threads int, work func(worker int, b *input.Batch) error) error {
	return fanOutFrom(ctx, threads, nextBatch(r), work)
}

// fanOutFrom is fanOut over any source of batches: next fills a batch and
// returns false at the end. It runs on one goroutine.
func fanOutFrom[B any](ctx context.Context, threads int, next func(*B) (bool, error), work func(worker int, b *B) error) error {
	g, ctx := errgroup.WithContext(ctx)
	free := make(chan *B, inFlight(threads))
	for range cap(free) {
		free <- new(B)
	}
	full := make(chan *B, cap(free))
	g.Go(func() error {
		defer close(full)
		for {
			var b *B
			select {
			case b = <-free:
			case <-ctx.Done():
				return ctx.Err()
			}
			if ok, err := next(b); !ok {
				return err
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

// fanOutOrdered is fanOut whose results are taken in corpus order: work
// turns a batch into a result on one of threads goroutines, and consume
// receives the results, on one goroutine, in the order in which their
// batches were read. Results are recycled like batches.
func fanOutOrdered[R any](ctx context.Context, r *input.Reader, threads int,
	work func(worker int, b *input.Batch, res *R) error, consume func(res *R) error) error {
	type job struct {
		b    input.Batch
		res  R
		done chan struct{}
	}
	g, ctx := errgroup.WithContext(ctx)
	free := make(chan *job, inFlight(threads))
	for range cap(free) {
		free <- new(job)
	}
	// At most cap(free) jobs exist, so sends on todo and order never block.
	todo := make(chan *job, cap(free))
	order := make(chan *job, cap(free))
	g.Go(func() error {
		defer close(order)
		defer close(todo)
		for {
			var j *job
			select {
			case j = <-free:
			case <-ctx.Done():
				return ctx.Err()
			}
			if !r.NextBatch(&j.b, batchBytes) {
				return r.Err()
			}
			j.done = make(chan struct{})
			order <- j
			todo <- j
		}
	})
	for w := range threads {
		g.Go(func() error {
			for j := range todo {
				if err := ctx.Err(); err != nil {
					return err
				}
				if err := work(w, &j.b, &j.res); err != nil {
					return err
				}
				close(j.done)
			}
			return nil
		})
	}
	g.Go(func() error {
		for j := range order {
			select {
			case <-j.done:
			case <-ctx.Done():
				return ctx.Err()
			}
			if err := consume(&j.res); err != nil {
				return err
			}
			free <- j
		}
		return nil
	})
	return g.Wait()
}
