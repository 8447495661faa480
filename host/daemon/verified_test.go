package daemon

import (
	"sync"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
)

// TestPartitionVerifiedCompletesOnce: finalizers that verify a job's partitions
// at the same moment (their journal writes share one commit) see the job
// complete exactly once, and only when every partition's view and event are in.
func TestPartitionVerifiedCompletesOnce(t *testing.T) {
	const n = 16
	for round := range 50 {
		d := &Daemon{}
		sub := make(chan api.JobEvent, n)
		j := &liveJob{id: "j", state: api.JobRunning, parts: make([]api.Partition, n), subs: map[chan api.JobEvent]struct{}{sub: {}}}
		var (
			wg       sync.WaitGroup
			mu       sync.Mutex
			complete int
		)
		for i := range n {
			wg.Go(func() {
				if d.partitionVerified(j, i, time.Now(), api.JobEvent{Kind: api.EventPartitionVerified, Partition: i}) {
					// What the completing finalizer sees: every partition verified, every event sent.
					d.mu.Lock()
					for _, p := range j.parts {
						if p.State != api.PartitionVerified || p.VerifiedAt.IsZero() {
							t.Errorf("round %d: job complete while partition %d is %s", round, p.Index, p.State)
						}
					}
					if len(sub) != n {
						t.Errorf("round %d: job complete after %d of %d events", round, len(sub), n)
					}
					d.mu.Unlock()
					mu.Lock()
					complete++
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		if complete != 1 {
			t.Fatalf("round %d: %d finalizers saw the job complete, want 1", round, complete)
		}
	}
	// A job that has ended takes no more updates.
	d := &Daemon{}
	j := &liveJob{id: "j", state: api.JobCancelled, parts: make([]api.Partition, 1), subs: map[chan api.JobEvent]struct{}{}}
	if d.partitionVerified(j, 0, time.Now(), api.JobEvent{}) || j.parts[0].State == api.PartitionVerified {
		t.Error("a cancelled job's partition became verified")
	}
}
