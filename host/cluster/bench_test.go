package cluster

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
)

// BenchmarkQueueCost is what the cluster adds to one partition, proving
// aside: publish (with the job's record), pull, read the job, store the proof
// once, mark it by compare-and-set, ack. On one server (replicas 1) and on
// three (replicas 3, every write a raft round), all in this process.
func BenchmarkQueueCost(b *testing.B) {
	for _, servers := range []int{1, 3} {
		b.Run(fmt.Sprintf("servers=%d", servers), func(b *testing.B) {
			urls := startServers(b, servers)
			c := member(b, urls, "h0", servers)
			ctx := context.Background()
			proof := make([]byte, 400) // a BLS12-381 Groth16 proof is a few hundred bytes
			input := make([]byte, 1<<10)
			b.ResetTimer()
			start := time.Now()
			rec := createJob(b, c, b.N, api.ClassNormal)
			inputs := make([][]byte, b.N)
			for i := range inputs {
				inputs[i] = input
			}
			if err := c.publish(ctx, rec, inputs, false); err != nil {
				b.Fatal(err)
			}
			for range b.N {
				m := c.next(ctx)
				idx := 0
				fmt.Sscan(m.Headers().Get(hdrPartition), &idx)
				if _, _, err := c.getJob(ctx, rec.ID); err != nil {
					b.Fatal(err)
				}
				if err := c.recordProof(ctx, rec.ID, idx, proofRecord{Proof: proof, Host: "h0"}); err != nil {
					b.Fatal(err)
				}
				if err := m.DoubleAck(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(time.Since(start).Microseconds())/float64(b.N), "µs/partition")
		})
	}
}
