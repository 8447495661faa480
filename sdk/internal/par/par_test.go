package par

import (
	"context"
	"sync/atomic"
	"testing"
)

// TestForChunksCoversEachIndexOnce: every index is in exactly one chunk, no
// chunk is longer than asked, whatever the sizes.
func TestForChunksCoversEachIndexOnce(t *testing.T) {
	for _, tc := range []struct{ n, chunk int }{{0, 1}, {1, 1}, {10, 3}, {1000, 1}, {1000, 64}, {7, 100}} {
		seen := make([]atomic.Int32, tc.n)
		if err := ForChunks(context.Background(), tc.n, tc.chunk, func(start, end int) {
			if end-start > tc.chunk || end <= start {
				t.Errorf("n %d chunk %d: chunk [%d, %d)", tc.n, tc.chunk, start, end)
			}
			for i := start; i < end; i++ {
				seen[i].Add(1)
			}
		}); err != nil {
			t.Fatal(err)
		}
		for i := range seen {
			if c := seen[i].Load(); c != 1 {
				t.Fatalf("n %d chunk %d: index %d seen %d times", tc.n, tc.chunk, i, c)
			}
		}
	}
}

// TestForChunksStopsWhenCancelled: a cancelled context hands out no more
// chunks and is the error.
func TestForChunksStopsWhenCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	var calls atomic.Int32
	err := ForChunks(ctx, 1<<20, 1, func(start, end int) {
		if calls.Add(1) == 10 {
			cancel()
		}
	})
	if err == nil {
		t.Fatal("a cancelled loop returned no error")
	}
	if n := calls.Load(); n >= 1<<20 {
		t.Fatalf("%d chunks ran after the cancel", n)
	}
}
