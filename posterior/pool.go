package posterior

import (
	"context"
	"sync"
)

// chunk is a range [lo, hi) of token ids processed by one task.
type chunk struct{ lo, hi int }

// partition splits tokens 0..v-1 into contiguous chunks of about equal
// cost, cost(i) being the work for token i, aiming at perThread chunks per
// thread so that tokens of very different degree (Zipf counts) still keep
// every thread busy to the end.
func partition(v, threads int, cost func(i int) float64) []chunk {
	const perThread = 8
	var total float64
	for i := range v {
		total += cost(i)
	}
	want := min(v, max(1, threads*perThread))
	target := total / float64(want)
	chunks := make([]chunk, 0, want+1)
	lo := 0
	var acc float64
	for i := range v {
		acc += cost(i)
		if acc >= target || i == v-1 {
			chunks = append(chunks, chunk{lo, i + 1})
			lo = i + 1
			acc = 0
		}
	}
	return chunks
}

// pool runs tasks on a fixed number of goroutines, each owning a
// workspace, so that chains and tokens share the threads and no scratch is
// allocated per token.
type pool struct {
	ctx   context.Context
	tasks chan func(*workspace)
	wg    sync.WaitGroup
}

// startPool starts threads workers; newWorkspace may be nil when tasks need
// no scratch. Stop must be called to release the goroutines.
func startPool(ctx context.Context, threads int, newWorkspace func() *workspace) *pool {
	p := &pool{ctx: ctx, tasks: make(chan func(*workspace))}
	p.wg.Add(threads)
	for range threads {
		go func() {
			defer p.wg.Done()
			var ws *workspace
			if newWorkspace != nil {
				ws = newWorkspace()
			}
			for t := range p.tasks {
				t(ws)
			}
		}()
	}
	return p
}

// stop ends the workers once the queued tasks have run.
func (p *pool) stop() {
	close(p.tasks)
	p.wg.Wait()
}

// forEach runs f on every chunk and returns when all have finished. Chunks
// not yet started when the context is cancelled are skipped; the caller
// checks the context afterwards.
func (p *pool) forEach(chunks []chunk, f func(ws *workspace, c chunk)) {
	var done sync.WaitGroup
	done.Add(len(chunks))
	for _, c := range chunks {
		p.tasks <- func(ws *workspace) {
			defer done.Done()
			if p.ctx.Err() == nil {
				f(ws, c)
			}
		}
	}
	done.Wait()
}
