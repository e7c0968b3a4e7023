package stages

import (
	"context"
	"sync/atomic"

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

// fanOutInOrder reads batches with next, as fanOutFrom does, for work that
// must follow batch order in part. Worker 0 takes the batches in order: it
// does a batch itself with direct, unless another worker has taken it, and
// then it waits for that worker's result and passes it, with its batch, to
// consume. Workers 1 to threads-1 take batches at least two ahead of the
// one in order and work on them into results with work, so that worker 0
// seldom waits for a result just begun. direct and consume are called one
// at a time, in batch order, on worker 0; the others' batches are those
// worker 0 does not reach first. Batches and results are recycled, so the
// functions must not keep them.
//
// With two threads on bench-raw's tokenize, worker 0 does about half of the
// batches itself. When the workers took batches in turn, and a result was
// consumed by whichever worker finished it, a batch next in order was nearly
// always being worked on already, 7 to 14 of 141 were done directly, and
// tokenize on two threads took 6.5-11.6 % more CPU and 6-11 % more wall
// time, in two sets of alternating runs.
func fanOutInOrder[B, R any](ctx context.Context, threads int, next func(*B) (bool, error),
	direct func(b *B) error, work func(worker int, b *B, res *R) error, consume func(b *B, res *R) error) error {
	type job struct {
		b   B
		res R
		seq atomic.Int64
		// claim is 0 while the batch is free to take, 1 once a worker has
		// taken it, 2 once worker 0 has; it is reset when the job is
		// refilled, after seq and done.
		claim atomic.Int32
		done  chan struct{} // closed when a worker's result is ready
	}
	g, ctx := errgroup.WithContext(ctx)
	// A job more than fanOut's lets the workers keep two batches ahead of
	// worker 0; one thread has no workers.
	free := make(chan *job, inFlight(threads)+min(threads-1, 1))
	for range cap(free) {
		j := new(job)
		j.claim.Store(2)
		free <- j
	}
	// At most cap(free) jobs exist, so sends on order never block. A job
	// is sent on todo once each time it is filled; a worker may take it
	// from there after it was done and refilled, which claim sorts out, so
	// todo may hold more sends than jobs: those that find it full are
	// dropped, leaving their batch to worker 0.
	order := make(chan *job, cap(free))
	todo := make(chan *job, 4*cap(free))
	var nextSeq atomic.Int64 // the batch worker 0 does or consumes next
	g.Go(func() error {
		defer close(order)
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
			j.seq.Store(seq)
			j.done = make(chan struct{})
			j.claim.Store(0)
			order <- j
			if threads > 1 {
				select {
				case todo <- j:
				default:
				}
			}
		}
	})
	for w := 1; w < threads; w++ {
		g.Go(func() error {
			for j := range todo {
				if err := ctx.Err(); err != nil {
					return err
				}
				if j.seq.Load() < nextSeq.Load()+2 || !j.claim.CompareAndSwap(0, 1) {
					continue
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
			if j.claim.CompareAndSwap(0, 2) {
				if err := direct(&j.b); err != nil {
					return err
				}
			} else {
				select {
				case <-j.done:
				case <-ctx.Done():
					return ctx.Err()
				}
				if err := consume(&j.b, &j.res); err != nil {
					return err
				}
			}
			nextSeq.Store(j.seq.Load() + 1)
			free <- j
		}
		return nil
	})
	return g.Wait()
}
