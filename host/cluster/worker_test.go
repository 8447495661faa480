package cluster

import (
	"context"
	"sync"
	"testing"

	"github.com/zkhost/zkhost/host/api"
)

// TestCountFailure: failed deliveries counted at once by hosts on different
// servers are each counted once, so a partition fails its job after exactly
// max_deliver failures, however often it was handed back in between.
func TestCountFailure(t *testing.T) {
	urls := startServers(t, 3)
	a, b := member(t, urls[:1], "h0", 3), member(t, urls[2:], "h1", 3)
	rec := createJob(t, a, 2, api.ClassNormal)
	var wg sync.WaitGroup
	counts := make(chan int, 12)
	for i := range 12 {
		wg.Go(func() {
			n, err := []*Cluster{a, b}[i%2].countFailure(context.Background(), rec.ID, 1)
			if err != nil {
				t.Error(err)
			}
			counts <- n
		})
	}
	wg.Wait()
	close(counts)
	seen := map[int]bool{}
	for n := range counts {
		if seen[n] {
			t.Errorf("count %d returned twice", n)
		}
		seen[n] = true
	}
	for n := 1; n <= 12; n++ {
		if !seen[n] {
			t.Errorf("count %d never returned", n)
		}
	}
	if n, err := a.countFailure(context.Background(), rec.ID, 0); err != nil || n != 1 {
		t.Errorf("the other partition's first failure: %d, %v", n, err)
	}
}
