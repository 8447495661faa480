package e2e

import (
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
)

// TestClusterLargeInputs: inputs larger than a NATS message. The three hosts'
// servers carry messages of at most 4 KiB (max_payload) and partition
// messages carry inputs of at most 1 KiB (inline_max): a chain-k8 wire
// assignment (8 KiB) exceeds both and travels through the object store, a
// chain witness (under 100 bytes) inside its message. Jobs of each, and of
// both in one cluster, complete with proofs that verify, read from a host
// other than the one that took them.
func TestClusterLargeInputs(t *testing.T) {
	hosts, _ := startClusterWith(t, 3, func(int) (hostConf, string) {
		return hostConf{Devices: []deviceConf{cpuDevice()}}, "max_payload = \"4KiB\"\ninline_max = \"1KiB\""
	})
	const parts = 3
	ws := witnesses(t, "chain", 300, parts)
	as := assignments(t, "chain", ws)
	if len(as[0]) <= 4<<10 {
		t.Fatalf("a chain-k8 assignment is %d bytes: no larger than max_payload, it tests nothing", len(as[0]))
	}
	big, err := hosts[0].client.Submit(ctxFor(t, time.Minute), api.SubmitRequest{Circuit: "chain", Assignments: as})
	if err != nil {
		t.Fatalf("submit of %d-byte assignments to a cluster whose max_payload is 4 KiB: %v", len(as[0]), err)
	}
	small := hosts[1].submit("chain", 301, parts, api.ClassNormal)
	got, _ := hosts[2].await(big.ID, 3*time.Minute)
	checkDone(t, got, "chain", 300, parts)
	got, _ = hosts[0].await(small.ID, 3*time.Minute)
	checkDone(t, got, "chain", 301, parts)
	for _, h := range hosts {
		h.stop()
	}
}
