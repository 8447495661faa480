//go:build clustersoak

// The cluster soak is built only with the clustersoak tag (make soak-cluster):
// a long run that make test leaves out by not compiling it, not by skipping.

package e2e

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/api/apitest"
	"github.com/zkhost/zkhost/host/client"
)

var (
	clusterSoakParts = flag.Int("soak.cluster.partitions", 600, "partitions of TestClusterSoak")
	clusterSoakKills = flag.Int("soak.cluster.host-kills", 4, "kill -9s (and restarts) of hosts in TestClusterSoak")
)

// TestClusterSoak is the cluster's long soak (make soak-cluster): jobs of
// every class and both circuits submitted to random hosts of three (each
// embedding one NATS server of three, replicas 3), while a random host is
// killed with kill -9 and restarted every few seconds, one at a time so that
// two NATS servers of three always run. Every job must complete with every
// proof verified, read from a random host at the end.
func TestClusterSoak(t *testing.T) {
	hosts := startCluster(t, 3)
	rng := rand.New(rand.NewPCG(*soakSeed, 15))
	type sub struct {
		id      string
		circuit string
		seed    uint64
		n       int
	}
	var (
		mu   sync.Mutex
		subs []sub
	)
	// The killer has its own random source (a rand.Rand is not safe for two
	// goroutines); it kills while the jobs are submitted and proved.
	killRng := rand.New(rand.NewPCG(*soakSeed, 16))
	kills := 0
	var killer sync.WaitGroup
	killer.Go(func() {
		for k := 0; k < *clusterSoakKills; k++ {
			time.Sleep(time.Duration(2+killRng.IntN(4)) * time.Second)
			h := hosts[killRng.IntN(len(hosts))]
			h.kill()
			mu.Lock()
			kills++
			mu.Unlock()
			t.Logf("kill -9 of a host (%d of %d)", k+1, *clusterSoakKills)
			if err := h.tryStart(3 * time.Minute); err != nil {
				t.Errorf("restart: %v\n%s", err, h.logTail(60))
				return
			}
		}
	})
	classes := api.Classes
	total := 0
	for i := 0; total < *clusterSoakParts; i++ {
		n := min(1+rng.IntN(12), *clusterSoakParts-total)
		circ := []string{"chain", "merkle"}[rng.IntN(2)]
		seed := uint64(1000 + i)
		req := api.SubmitRequest{Circuit: circ, Witnesses: witnesses(t, circ, seed, n), Class: classes[rng.IntN(len(classes))],
			RequestID: fmt.Sprintf("soak-%d", i)}
		// A host being killed refuses or drops the call: retry elsewhere
		// with the same request id, as a client would.
		var job api.Job
		var err error
		for try := 0; try < 60; try++ {
			c := hosts[rng.IntN(len(hosts))].liveClient()
			if c == nil {
				time.Sleep(200 * time.Millisecond)
				continue
			}
			if job, err = c.Submit(ctxFor(t, 30*time.Second), req); err == nil {
				break
			}
			time.Sleep(200 * time.Millisecond)
		}
		if err != nil || job.ID == "" {
			t.Fatalf("submit: %v", err)
		}
		mu.Lock()
		subs = append(subs, sub{job.ID, circ, seed, n})
		mu.Unlock()
		total += n
	}
	killer.Wait()
	for _, s := range subs {
		var got api.Job
		apitest.WaitFor(t, 20*time.Minute, "job "+s.id, func() bool {
			c := hosts[rng.IntN(len(hosts))].liveClient()
			if c == nil {
				return false
			}
			j, err := c.Get(ctxFor(t, 30*time.Second), s.id)
			got = j
			return err == nil && j.State.Terminal()
		})
		checkDone(t, got, s.circuit, s.seed, s.n)
	}
	t.Logf("soak: %d jobs, %d partitions, %d host kills: every proof verified", len(subs), total, kills)
	for _, h := range hosts {
		h.stop()
	}
}

// liveClient is the host's client now: nil while it is down, and a new one
// after each restart.
func (h *host) liveClient() *client.Client {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.client
}
