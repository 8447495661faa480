package e2e

import (
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
)

// TestNoOrphans SIGKILLs the host while partitions sit in shared memory and a
// backend proves: every backend exits on its own (parent-death signal and the
// watchdog in sdk.Serve) within a couple of seconds, taking the last mappings
// of the host's memfds with it (nothing is left to reap), and the next host on
// the same state directory resumes the job from its journal and completes it,
// holding no partition once it is done.
func TestNoOrphans(t *testing.T) {
	slow := linkBinary(t, faultBin(), "slow-backend")
	h := newHost(t, hostConf{Devices: []deviceConf{
		cpuDevice(),
		{Backend: slow, Options: map[string]string{"threads": "1", "slow": "20s"}},
	}, Workers: 2})
	h.start()

	job := h.submit("chain", 61, 6, api.ClassNormal)
	waitFor(t, 30*time.Second, "dev1 to hold a partition", func() bool { return h.device("dev1").InFlight > 0 })
	waitFor(t, 30*time.Second, "partitions staged in shared memory", func() bool { return len(h.shmFiles()) >= 1 })

	first := h.pid()
	backends := backendsOf(first) // with the prove workers running, which must go too
	if n := countBackends(backends); n != 2 {
		t.Fatalf("host %d runs %d backends, want 2: %v", first, n, backends)
	}
	h.kill()
	killed := time.Now()
	// Wait on the pids themselves: an exiting process loses its environment (which
	// backendsOf reads) before it stops running.
	waitFor(t, 5*time.Second, "the backends to exit after the host's death", func() bool {
		for _, b := range backends {
			if alive(b.pid) {
				return false
			}
		}
		return true
	})
	gone := time.Since(killed)
	t.Logf("backends exited %s after the host was killed", gone.Round(time.Millisecond))
	if gone > 3*time.Second {
		t.Errorf("backends took %s to exit after the host died, want at most 3s", gone)
	}
	for _, b := range backends {
		if alive(b.pid) {
			t.Errorf("backend process %d (%s, worker %v) outlived its host", b.pid, b.exe, b.worker)
		}
	}
	// A new host on the same state directory, with a healthy device.
	h.writeConfig(hostConf{Devices: []deviceConf{cpuDevice()}})
	h.start()
	done, _ := h.await(job.ID, 2*time.Minute)
	checkDone(t, done, "chain", 61, 6)
	if left := h.shmFiles(); len(left) > 0 {
		t.Errorf("the restarted host still holds partitions after the job: %v", left)
	}
	second := h.pid()
	h.stop()
	for _, p := range []int{first, second} {
		if b := backendsOf(p); len(b) > 0 {
			t.Errorf("backends of host %d still run: %v", p, b)
		}
	}
}

// countBackends counts the backends among procs, leaving out prove workers.
func countBackends(procs []proc) int {
	n := 0
	for _, p := range procs {
		if !p.worker {
			n++
		}
	}
	return n
}
