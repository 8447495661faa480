package e2e

import (
	"cmp"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/api/apitest"
	"github.com/zkhost/zkhost/sdk/plugins"
	"github.com/zkhost/zkhost/sdk/procfs"
)

// A stopped plugin (SIGSTOP: a debugger, an operator's kill -STOP, a frozen
// cgroup) never answers, not even go-plugin's shutdown request. These tests stop
// real backend and synthesizer processes and check that the host kills them
// (SIGKILL once the graceful kill's grace is over), retries their work, shows the
// device restarting meanwhile, and stops within its bound while a child is
// stopped.

// stopProcess sends SIGSTOP to pid and makes sure the test leaves no stopped
// process behind, whatever happens.
func stopProcess(t *testing.T, pid int) {
	t.Helper()
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("SIGSTOP %d: %v", pid, err)
	}
	// procfs.Stopped says why this waits.
	apitest.WaitFor(t, 30*time.Second, fmt.Sprintf("process %d to stop", pid), func() bool { return procfs.Stopped("/proc", pid) })
	t.Cleanup(func() {
		// Only while it is still stopped: once gone, its pid may be another's.
		if procfs.Stopped("/proc", pid) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// stopHostWithin stops the daemon (SIGTERM) and fails the test unless it has
// exited within limit (host.stop itself gives up after 30 seconds).
func stopHostWithin(t *testing.T, h *host, limit time.Duration) {
	t.Helper()
	start := time.Now()
	h.stop()
	if el := time.Since(start); el > limit {
		t.Errorf("the daemon took %s to stop, want at most %s", el.Round(time.Millisecond), limit)
	}
}

// shutdownBound is how long a daemon with a stopped child may take to stop: the
// child's graceful kill gives up after plugins.KillGrace, SIGKILL ends it at
// once, and the rest of the stop takes a few seconds on a loaded machine.
const shutdownBound = plugins.KillGrace + 20*time.Second

// TestStoppedBackendKilled stops the only backend with SIGSTOP before a job
// arrives: its proof meets the prove deadline, the host kills the backend with
// SIGKILL (status shows the device restarting and why meanwhile), restarts it
// and proves the partitions again, and the job ends done with verified proofs.
// Then the new backend is stopped too and the daemon must still stop within
// its bound, leaving no process behind.
func TestStoppedBackendKilled(t *testing.T) {
	exe := linkBinary(t, cpuBin(), "stopped-backend")
	h := newHost(t, hostConf{Devices: []deviceConf{{Backend: exe, Options: map[string]string{"threads": "1"}}},
		MaxAttempts: 5, ProveTimeout: 8 * time.Second})
	h.start()
	first := h.backendPID(exe, 30*time.Second)
	stopProcess(t, first)
	start := time.Now()
	job := h.submit("merkle", 61, 2, api.ClassNormal)

	apitest.WaitFor(t, 2*time.Minute, "status to show dev0 restarting after its proof deadline", func() bool {
		ds := h.device("dev0")
		return strings.Contains(ds.Error, "restarting: backend did not answer a proof within 8s")
	})
	done, events := h.await(job.ID, 3*time.Minute)
	checkDone(t, done, "merkle", 61, 2)
	checkRetried(t, events, "", "did not answer within 8s", "the stopped backend met its deadline")
	t.Logf("job done %s after its submit", time.Since(start).Round(time.Millisecond))
	apitest.WaitFor(t, 30*time.Second, "the stopped backend to be gone", func() bool { return !alive(first) })
	if !strings.Contains(h.logText(), "sending SIGKILL") {
		t.Errorf("the daemon's log does not say the stopped backend was sent SIGKILL")
	}
	if ds := h.device("dev0"); ds.Restarts < 1 || !ds.Healthy {
		t.Errorf("dev0 after the kill: %+v, want healthy with a restart", ds)
	}

	stopRestartedThenHost(t, h, exe, first, "backend")
}

// TestStoppedSynthesizerKilled stops a synthesizer plugin with SIGSTOP before a
// job arrives: its call meets synthesizer_timeout, the host kills it with
// SIGKILL, restarts it and synthesizes the partition again, and the job ends
// done with verified proofs. Then the new synthesizer is stopped too and the
// daemon must still stop within its bound, leaving no process behind.
func TestStoppedSynthesizerKilled(t *testing.T) {
	script, exe := faultSynth(t, "stopped-synth", "", false)
	h := newHost(t, hostConf{Devices: []deviceConf{cpuDevice()}, MaxAttempts: 5, Circuits: synthCircuits(
		map[string]string{"chainsynth": script}, map[string]string{"chainsynth": "synthesizer_timeout = \"3s\""})})
	h.start()
	first := h.backendPID(exe, 30*time.Second)
	stopProcess(t, first)
	job := h.submitChainAs("chainsynth", 62, 2)
	done, events := h.await(job.ID, 3*time.Minute)
	checkDone(t, done, "chain", 62, 2)
	checkRetried(t, events, "", "did not answer within 3s", "the stopped synthesizer met its deadline")
	apitest.WaitFor(t, 30*time.Second, "the stopped synthesizer to be gone", func() bool { return !alive(first) })

	stopRestartedThenHost(t, h, exe, first, "synthesizer")
}

// stopRestartedThenHost stops the plugin exe restarted after first (what
// names it in messages) with SIGSTOP, then stops h, which must stop within its
// bound and take the stopped plugin with it.
func stopRestartedThenHost(t *testing.T, h *host, exe string, first int, what string) {
	t.Helper()
	second := h.backendPID(exe, 30*time.Second)
	if second == first {
		t.Fatalf("the %s still runs as pid %d", what, first)
	}
	stopProcess(t, second)
	stopHostWithin(t, h, shutdownBound)
	if alive(second) {
		t.Errorf("the stopped %s (pid %d) outlived the daemon's stop", what, second)
	}
}

// checkRetried fails t unless some partition was retried and every retry was
// on device (any device when "") for a reason containing reason; cause says
// what should have made the retries, for the message.
func checkRetried(t *testing.T, events []api.JobEvent, device, reason, cause string) {
	t.Helper()
	retried := eventsOf(events, api.EventPartitionRetried)
	if len(retried) == 0 {
		t.Fatalf("no partition was retried, though %s; events: %v", cause, kinds(events))
	}
	for _, e := range retried {
		if device != "" && e.Device != device || !strings.Contains(e.Reason, reason) {
			t.Errorf("retry of partition %d on %s: %q, want %q on %s, as %s", e.Partition, e.Device, e.Reason, reason, cmp.Or(device, "any device"), cause)
		}
	}
}
