package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
)

// TestShowCluster: zkhost status on a host of a cluster shows the NATS
// connection with NATS's last error, every host (a silent one flagged), and
// the cluster's queue with its oldest partition.
func TestShowCluster(t *testing.T) {
	now := time.Now()
	var b strings.Builder
	showCluster(&b, &api.ClusterStatus{Host: "h0", Prefix: "zkhost",
		Connection: api.ClusterConnection{State: "reconnecting", Since: now, Server: "nats://n1:4222",
			LastError: "nats: Authorization Violation", LastErrorAt: now, Reconnects: 3},
		Hosts: []api.ClusterHost{{Name: "h0", Alive: true, Free: 2, Devices: []string{"gpu0"}, Keys: []string{"porep"}},
			{Name: "h1", LastSeen: now.Add(-time.Minute), Devices: []string{"gpu0 (down)"}}},
		Queues: []api.ClusterQueue{{Class: api.ClassCritical, Waiting: 4, Held: 2, Redelivered: 1, Synthesized: 17}},
		Oldest: now.Add(-90 * time.Second)})
	out := b.String()
	for _, want := range []string{"NATS reconnecting", "nats://n1:4222", "3 reconnections", "nats: Authorization Violation",
		"h1", "SILENT since", "gpu0 (down)", "porep", "critical", "SYNTHESIZED", "17", "Oldest partition not yet done: 1m30s"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
}
