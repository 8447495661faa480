package cluster

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/nats-io/nats-server/v2/server"

	"github.com/zkhost/zkhost/host/api"
)

// TestBucketLeaderLost: the NATS server leading the jobs bucket dies while
// hosts read the job's record, record proofs and await the job, each with a
// deadline minutes away (as an API client's is). Every read and write
// completes once JetStream has elected another leader, and every Await ends
// with the job done. Requests used to be bounded only by the caller's
// deadline: one in flight when the server died got no reply and waited for
// all of it, so an Await begun at the kill never ended though the job was
// done (in process, a stopped server loses such requests the same).
func TestBucketLeaderLost(t *testing.T) {
	srvs, urls := startServerSet(t, 3)
	var members []*Cluster
	for i := range 4 {
		members = append(members, member(t, urls, fmt.Sprintf("h%d", i), 3))
	}
	const parts = 24
	rec := createJob(t, members[0], parts, api.ClassNormal)
	// Far beyond a leader election: reaching it is the failure.
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()

	type result struct {
		last api.JobEvent
		err  error
	}
	awaited := make(chan result, len(members))
	for _, m := range members {
		go func() {
			var last api.JobEvent
			err := m.Await(ctx, rec.ID, func(ev api.JobEvent) error { last = ev; return nil })
			awaited <- result{last, err}
		}()
	}
	var stop atomic.Bool
	var readers sync.WaitGroup
	for _, m := range members {
		for range 2 {
			readers.Go(func() {
				for !stop.Load() {
					if _, _, err := m.getJob(ctx, rec.ID); err != nil {
						t.Errorf("reading the job on %s: %v", m.cfg.Name, err)
						return
					}
				}
			})
		}
	}
	recorded := make(chan int, parts)
	go func() {
		defer close(recorded)
		for idx := range parts {
			m := members[idx%len(members)]
			pr := proofRecord{Proof: []byte{byte(idx)}, Host: m.cfg.Name, At: time.Now()}
			if err := m.recordProof(ctx, rec.ID, idx, pr); err != nil {
				t.Errorf("recording partition %d on %s: %v", idx, m.cfg.Name, err)
				return
			}
			recorded <- idx
			time.Sleep(50 * time.Millisecond)
		}
	}()
	for idx := range recorded {
		if idx == parts/3 {
			leader := bucketLeader(t, members[0], srvs)
			t.Logf("stopping %s, the bucket's leader, after partition %d", leader.Name(), idx)
			leader.Shutdown()
		}
	}
	for range members {
		r := <-awaited
		if r.err != nil {
			t.Errorf("await: %v", r.err)
		} else if r.last.Kind != api.EventJobDone || r.last.Job.Count(api.PartitionVerified) != parts {
			t.Errorf("await ended with %s", r.last.Kind)
		}
	}
	stop.Store(true)
	readers.Wait()
}

// bucketLeader returns the server of srvs leading the jobs bucket's stream.
func bucketLeader(t *testing.T, c *Cluster, srvs []*server.Server) *server.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := c.js.Stream(ctx, c.n.kvStream())
	if err != nil {
		t.Fatal(err)
	}
	info, err := s.Info(ctx)
	if err != nil || info.Cluster == nil {
		t.Fatalf("bucket stream info: %v", err)
	}
	for _, srv := range srvs {
		if srv.Name() == info.Cluster.Leader {
			return srv
		}
	}
	t.Fatalf("the bucket's leader %q is none of the servers", info.Cluster.Leader)
	return nil
}
