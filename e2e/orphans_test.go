package e2e

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/api/apitest"
)

// TestNoOrphans SIGKILLs the host while partitions sit in shared memory and a
// backend proves: every backend exits on its own (parent-death signal and the
// watchdog in sdk.Serve) within a couple of seconds, taking the last mappings
// of the host's memfds with it (nothing is left to reap), their go-plugin
// sockets stay in <state>/sockets and the next host on the same state directory
// removes them, resumes the job from its journal and completes it, holding no
// partition once it is done.
func TestNoOrphans(t *testing.T) {
	slow := linkBinary(t, faultBin(), "slow-backend")
	h := newHost(t, hostConf{Devices: []deviceConf{
		cpuDevice(),
		{Backend: slow, Options: map[string]string{"threads": "1", "slow": "20s"}},
	}, Workers: 2})
	h.start()

	job := h.submit("chain", 61, 6, api.ClassNormal)
	apitest.WaitFor(t, 30*time.Second, "dev1 to hold a partition", func() bool { return h.device("dev1").InFlight > 0 })
	apitest.WaitFor(t, 30*time.Second, "partitions staged in shared memory", func() bool { return len(h.shmFiles()) >= 1 })

	first := h.pid()
	backends := backendsOf(first) // with the prove workers running, which must go too
	if n := countBackends(backends); n != 2 {
		t.Fatalf("host %d runs %d backends, want 2: %v", first, n, backends)
	}
	// The backends' go-plugin sockets live in the state directory, not /tmp.
	sockDir := filepath.Join(h.stateDir, "sockets")
	if socks := socketFiles(t, sockDir); len(socks) != 2 {
		t.Fatalf("sockets in %s: %v, want the two backends' sockets", sockDir, socks)
	}
	h.kill()
	killed := time.Now()
	// Wait on the pids themselves: an exiting process loses its environment (which
	// backendsOf reads) before it stops running.
	apitest.WaitFor(t, 5*time.Second, "the backends to exit after the host's death", func() bool {
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
	leftSockets := socketFiles(t, sockDir)

	// A new host on the same state directory, with a healthy device.
	h.writeConfig(hostConf{Devices: []deviceConf{cpuDevice()}})
	h.start()
	if len(leftSockets) != 2 {
		t.Errorf("sockets left by the killed host's backends: %v, want both (killed processes remove nothing)", leftSockets)
	}
	m := regexp.MustCompile(`removed backend sockets left by an earlier run: sockets=(\d+)`).FindStringSubmatch(h.logText())
	if m == nil || m[1] != strconv.Itoa(len(leftSockets)) {
		t.Errorf("the restarted host reported reaping sockets: %v, want %d", m, len(leftSockets))
	}
	for _, s := range leftSockets {
		if _, err := os.Stat(filepath.Join(sockDir, s)); err == nil {
			t.Errorf("stale socket %s survived the restart", s)
		}
	}
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
	if socks := socketFiles(t, sockDir); len(socks) > 0 {
		t.Errorf("backend sockets left after a clean stop: %v", socks)
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

// socketFiles lists the unix sockets in dir, whatever their names.
// Deliberately parallel to sdk/plugins' socketsIn: the SDK is a module of its
// own, and a test helper is no part of its API; plugins.ReapSockets would not
// serve, as it sees only the sockets named as go-plugin names them.
func socketFiles(t *testing.T, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range entries {
		if e.Type()&os.ModeSocket != 0 {
			out = append(out, e.Name())
		}
	}
	return out
}
