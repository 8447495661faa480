package e2e

import (
	"os"
	"strings"
	"testing"
	"time"
)

// clusterOperated checks, on three running `zkhost serve` hosts, what an
// operator sees and does: every host's status shows the cluster (three hosts
// alive, its NATS connection, the queue), a host restarted with another
// cluster-wide setting refuses to start (exit status non-zero) naming the
// setting and both values, and starts with --cluster-reconfigure, which
// changes the cluster and says so.
func clusterOperated(t *testing.T, hosts []*host) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for i, h := range hosts {
		for {
			st := h.status()
			cl := st.Cluster
			ok := cl != nil && len(cl.Hosts) == 3 && cl.Connection.State == "connected" && cl.QueueError == "" && len(cl.Queues) == 4
			for i := 0; ok && i < len(cl.Hosts); i++ {
				ok = cl.Hosts[i].Alive && len(cl.Hosts[i].Devices) == 1
			}
			if ok {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("host %d's status does not show the cluster: %+v", i, cl)
			}
			time.Sleep(100 * time.Millisecond)
		}
	}

	victim := hosts[2]
	victim.stop()
	b, err := os.ReadFile(victim.cfgPath)
	if err != nil {
		t.Fatal(err)
	}
	drifted := strings.Replace(string(b), "ack_wait = \""+clusterAckWait+"\"", "ack_wait = \"6s\"", 1)
	if drifted == string(b) {
		t.Fatal("no ack_wait in the host's config")
	}
	if err := os.WriteFile(victim.cfgPath, []byte(drifted), 0o600); err != nil {
		t.Fatal(err)
	}
	err = victim.tryStart(time.Minute)
	if err == nil || !strings.Contains(err.Error(), "exited while starting: exit status 1") {
		t.Fatalf("a host with another ack_wait: %v, want it to exit non-zero", err)
	}
	want := "cluster.ack_wait is 6s here but " + clusterAckWait + " in consumer"
	if log := victim.logText(); !strings.Contains(log, want) || !strings.Contains(log, "--cluster-reconfigure") {
		t.Fatalf("its log lacks %q and the way to change it:\n%s", want, victim.logTail(20))
	}
	victim.args = []string{"--cluster-reconfigure"}
	if err := victim.tryStart(time.Minute); err != nil {
		t.Fatalf("with --cluster-reconfigure: %v\n%s", err, victim.logTail(30))
	}
	if log := victim.logText(); !strings.Contains(log, "changing a cluster-wide setting") {
		t.Errorf("the reconfiguring host did not log its change:\n%s", victim.logTail(20))
	}
}
