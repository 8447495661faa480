package par

import (
	"context"
	"runtime"
	"sync"
	"sync/atomic"
)

// ForChunks calls fn(start, end) for consecutive chunks [start, end) of [0, n), each at
// most chunk long, on GOMAXPROCS goroutines; chunks are handed out in order as workers
// free up, so uneven chunks balance. It stops handing out chunks once ctx ends and then
// returns ctx's error; fn's writes to disjoint ranges need no locking.
func ForChunks(ctx context.Context, n, chunk int, fn func(start, end int)) error {
	if n <= 0 {
		return ctx.Err()
	}
	nbChunks := (n + chunk - 1) / chunk
	workers := min(runtime.GOMAXPROCS(0), nbChunks)
	if workers == 1 {
		for c := 0; c < nbChunks && ctx.Err() == nil; c++ {
			start := c * chunk
			fn(start, min(start+chunk, n))
		}
		return ctx.Err()
	}
	var next atomic.Int64
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				c := int(next.Add(1) - 1)
				if c >= nbChunks {
					return
				}
				start := c * chunk
				fn(start, min(start+chunk, n))
			}
		})
	}
	wg.Wait()
	return ctx.Err()
}
