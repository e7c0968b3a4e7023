package stages

import (
	"context"
	"sync"

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

// fanOutChained reads batches with next, as fanOutFrom does, for work that
// must follow batch order in part. A batch is either done in order by one
// of threads workers, with direct, or worked on out of order into a result,
// with work, which consume then takes in order. The direct and consume
// calls are made one at a time, in batch order, by the workers themselves:
// a worker that takes the batch next in order does it directly, and the
// worker that makes the next result in order ready, or finishes the batch
// before it, consumes it and the ready results after it. So the work in
// order waits on no goroutine of its own, and a batch that comes up in
// order needs no result handed over. Batches and results are recycled, so
// the functions must not keep them.
func fanOutChained[B, R any](ctx context.Context, threads int, next func(*B) (bool, error),
	direct func(worker int, b *B) error, work func(worker int, b *B, res *R) error, consume func(res *R) error) error {
	type job struct {
		b   B
		res R
		seq int64
	}
	g, ctx := errgroup.WithContext(ctx)
	free := make(chan *job, inFlight(threads))
	for range cap(free) {
		free <- new(job)
	}
	todo := make(chan *job, cap(free))
	g.Go(func() error {
		defer close(todo)
		for seq := int64(0); ; seq++ {
			var j *job
			select {
			case j = <-free:
			case <-ctx.Done():
				return ctx.Err()
			}
			if ok, err := next(&j.b); !ok {
				return err
			}
			j.seq = seq
			select {
			case todo <- j:
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	})
	// The batches are done or consumed in order one at a time because only
	// the worker with the batch next in order, or with its result, can act
	// on it, and nextSeq moves on only when that is over.
	var (
		mu      sync.Mutex
		nextSeq int64 // the batch to be done or consumed next
		ready   = make(map[int64]*job, cap(free))
	)
	// chain consumes the ready results from nextSeq on. It is called with
	// mu held and returns with mu released. At most cap(free) jobs exist,
	// so the sends on free never block.
	chain := func() error {
		for {
			j, ok := ready[nextSeq]
			if !ok {
				mu.Unlock()
				return nil
			}
			delete(ready, nextSeq)
			mu.Unlock()
			err := consume(&j.res)
			free <- j
			if err != nil {
				return err
			}
			mu.Lock()
			nextSeq++
		}
	}
	for w := range threads {
		g.Go(func() error {
			for j := range todo {
				if err := ctx.Err(); err != nil {
					return err
				}
				mu.Lock()
				inOrder := j.seq == nextSeq
				mu.Unlock()
				if inOrder {
					err := direct(w, &j.b)
					free <- j
					if err != nil {
						return err
					}
					mu.Lock()
					nextSeq++
				} else {
					if err := work(w, &j.b, &j.res); err != nil {
						return err
					}
					mu.Lock()
					ready[j.seq] = j
				}
				if err := chain(); err != nil {
					return err
				}
			}
			return nil
		})
	}
	return g.Wait()
}
