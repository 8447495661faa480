package e2e

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/api/apitest"
)

// TestSwappedBinaryIsDown replaces a pinned backend binary after the daemon
// started, then kills the backend while it proves: every restart fails the
// checksum. The device must then say so (not healthy, the reason, the failed
// restarts), its partition goes back to the queue without spending an attempt
// instead of showing "proving" on it, a new submission that no device can
// serve is refused with the reason, and when the right binary is back the
// device restarts by itself and the job ends done with verified proofs.
func TestSwappedBinaryIsDown(t *testing.T) {
	dir := t.TempDir()
	pinned := filepath.Join(dir, "pinned-backend")
	copyFile(t, faultBin(), pinned, 0o755)
	dev := faultDevice(map[string]string{"slow": "1s"})
	dev.Backend, dev.SHA256 = pinned, fileSHA256(t, pinned)
	h := newHost(t, hostConf{Devices: []deviceConf{dev}, MaxAttempts: 2})
	h.start()
	job := h.submit("chain", 61, 3, api.ClassNormal)
	apitest.WaitFor(t, 30*time.Second, "dev0 to be proving", func() bool { return h.device("dev0").InFlight > 0 })

	// Another program under the pinned name (written beside it and renamed
	// over it, as a package upgrade does), then the backend dies.
	swap := filepath.Join(dir, "swap")
	copyFile(t, cpuBin(), swap, 0o755)
	if err := os.Rename(swap, pinned); err != nil {
		t.Fatal(err)
	}
	victim := h.backendPID(pinned, 5*time.Second)
	if err := syscall.Kill(victim, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	apitest.WaitFor(t, 30*time.Second, "dev0 to be reported down", func() bool {
		d := h.device("dev0")
		return !d.Healthy && strings.Contains(d.Error, "down") && strings.Contains(d.Error, "checksum")
	})
	_, err := h.client.Submit(ctxFor(t, 10*time.Second), api.SubmitRequest{Circuit: "chain", Witnesses: witnesses(t, "chain", 62, 1)})
	if !errors.Is(err, api.ErrUnavailable) || !strings.Contains(err.Error(), "dev0") || !strings.Contains(err.Error(), "checksum") {
		t.Errorf("submit with no device serving: %v, want unavailable naming dev0 and why", err)
	}
	// Nothing is proving on the down device.
	apitest.WaitFor(t, 30*time.Second, "no partition proving on the down device", func() bool {
		j, err := h.client.Get(ctxFor(t, 10*time.Second), job.ID)
		if err != nil {
			t.Fatal(err)
		}
		if j.State.Terminal() {
			t.Fatalf("job ended while its only device was down: %s (%s)", j.State, j.Error)
		}
		for _, p := range j.Partitions {
			if p.State == api.PartitionProving {
				return false
			}
		}
		return h.device("dev0").InFlight == 0
	})

	// The right binary is back: the device restarts by itself.
	copyFile(t, faultBin(), swap, 0o755)
	if err := os.Rename(swap, pinned); err != nil {
		t.Fatal(err)
	}
	done, events := h.await(job.ID, 2*time.Minute)
	checkDone(t, done, "chain", 61, 3)
	if failed := eventsOf(events, api.EventPartitionFailed); len(failed) > 0 {
		t.Errorf("partitions failed while the device was down: %+v", failed)
	}
	if d := h.device("dev0"); !d.Healthy || d.Restarts < 1 {
		t.Errorf("dev0 after the binary came back: healthy %v, %d restarts, %q", d.Healthy, d.Restarts, d.Error)
	}
}
