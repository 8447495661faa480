package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/api/apitest"
	"github.com/zkhost/zkhost/sdk/circuit"
)

// synthReadyLog is the line a synthesis host logs once it pulls work.
const synthReadyLog = "synthesizing partitions for the proving hosts"

// TestClusterSynthesisHosts: one proving host and two synthesis-only hosts
// (cluster.role = "synthesize": no device, no backend, no API), serving a
// BLS12-381 circuit and a BN254 one. The synthesis hosts solve partitions of
// either curve and ship their compact wire assignments, which name the
// curve; the proving host (the CPU backend taking compact partitions, as a
// GPU backend does) proves them, and every proof verifies with gnark. Each
// synthesis host does part of the work; a witness the circuit does not
// accept fails its job naming the partition and the constraint, whichever
// host solves it; jobs of wire assignments go straight to the proving host.
func TestClusterSynthesisHosts(t *testing.T) {
	// One NATS server, embedded in the proving host; the synthesis hosts
	// are its clients (forming a cluster of servers is tested elsewhere).
	addr := apitest.FreeAddr(t)
	dev := cpuDevice()
	dev.Options["compact-w"] = "true"
	bn254 := filepath.Join(keyDirBN254, fixtures["chain-bn254"].spec.ID())
	circuits := fmt.Sprintf("[[circuit]]\nname = \"chain\"\nkeys = %q\n\n[[circuit]]\nname = \"merkle\"\nkeys = %q\n\n"+
		"[[circuit]]\nname = \"chain-bn254\"\nccs = %q\npk = %q\nvk = %q\n\n",
		keyDir, keyDir, bn254+circuit.ExtCCS, bn254+circuit.ExtPK, bn254+circuit.ExtVK)
	prover := newHost(t, hostConf{Devices: []deviceConf{dev}, Circuits: circuits,
		Extra: fmt.Sprintf("[cluster]\nname = \"h0\"\nembedded = true\nlisten = %q\nack_wait = %q\n", addr, clusterAckWait)})
	startAll(t, []*host{prover})
	hosts := []*host{prover}
	for i := 1; i <= 2; i++ {
		hosts = append(hosts, newHost(t, hostConf{ReadyLog: synthReadyLog, Circuits: circuits,
			Extra: fmt.Sprintf("[cluster]\nname = \"h%d\"\nurls = [%q]\nreplicas = 1\nack_wait = %q\nrole = \"synthesize\"\n", i, "nats://"+addr, clusterAckWait)}))
	}
	startAll(t, hosts[1:])
	// synthesized counts a synthesis host's partitions of circuit name.
	synthesized := func(h *host, name string) int {
		n := 0
		for _, line := range strings.Split(h.logText(), "\n") {
			if strings.Contains(line, "partition synthesized") && strings.Contains(line, "circuit="+name+" ") {
				n++
			}
		}
		return n
	}
	for _, tc := range []struct {
		name  string
		seed  uint64
		parts int
		// each: every synthesis host must have solved some; else the two
		// together (the proving host solves what it pulls first itself).
		each bool
	}{
		{"chain", 500, 16, true},
		{"chain-bn254", 510, 8, false},
	} {
		job := prover.submit(tc.name, tc.seed, tc.parts, api.ClassNormal)
		got, _ := prover.await(job.ID, 4*time.Minute)
		checkDone(t, got, tc.name, tc.seed, tc.parts)
		// The synthesis hosts synthesized some of them, and the proving
		// host proved what they shipped.
		total := 0
		for i, h := range hosts[1:] {
			n := synthesized(h, tc.name)
			total += n
			t.Logf("%s: synthesis host h%d synthesized %d partitions", tc.name, i+1, n)
			if tc.each && n == 0 {
				t.Errorf("%s: synthesis host h%d synthesized nothing of %d partitions\n%s", tc.name, i+1, tc.parts, h.logTail(30))
			}
		}
		if total == 0 {
			t.Errorf("%s: the synthesis hosts synthesized nothing of %d partitions\n%s", tc.name, tc.parts, hosts[1].logTail(30))
		}
	}

	// A well-formed witness the circuit does not accept fails its job.
	bad := append([]byte(nil), witnesses(t, "chain", 501, 1)[0]...)
	bad[len(bad)-1] ^= 1
	good := witnesses(t, "chain", 502, 1)[0]
	j, err := prover.client.Submit(ctxFor(t, time.Minute), api.SubmitRequest{Circuit: "chain", Witnesses: [][]byte{bad, good}})
	if err != nil {
		t.Fatal(err)
	}
	failed, _ := prover.await(j.ID, 3*time.Minute)
	if failed.State != api.JobFailed || !strings.Contains(failed.Error, "partition 0") || !strings.Contains(failed.Error, "constraint") {
		t.Errorf("job with an unsatisfied witness: %s (%s), want failed naming partition 0 and a constraint", failed.State, failed.Error)
	}

	// Wire assignments are solved already: proved without a synthesis host.
	ws := witnesses(t, "chain", 503, 3)
	aj, err := prover.client.Submit(ctxFor(t, time.Minute), api.SubmitRequest{Circuit: "chain", Assignments: assignments(t, "chain", ws)})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := prover.await(aj.ID, 3*time.Minute)
	checkDone(t, got, "chain", 503, 3)

	// zkhost bench against the proving host: its timeline names the host's
	// own one-partition jobs, which the bench maps back to the cluster's
	// jobs for the steady window and the isolated proofs.
	out, err := exec.Command(zkhostBin(), "bench", "--config", prover.cfgPath, "--circuit", "chain", "--k", "8", "--name", "chain",
		"--jobs", "6", "--partitions", "4", "--concurrency", "2", "--isolated", "1").CombinedOutput()
	if err != nil || !strings.Contains(string(out), "from each device's first proof") || !strings.Contains(string(out), "ratio to the isolated rate") {
		t.Errorf("zkhost bench against the proving host: %v\n%s", err, out)
	}
	// zkhost status shows the synthesized partitions waiting beside the rest
	// of the cluster's queue (none now: every job is done).
	st, err := exec.Command(zkhostBin(), "status", "--config", prover.cfgPath).CombinedOutput()
	if err != nil || !strings.Contains(string(st), "SYNTHESIZED") {
		t.Errorf("zkhost status of the proving host: %v\n%s", err, st)
	}
	for _, h := range hosts {
		h.stop()
	}
}
