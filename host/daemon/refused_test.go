package daemon

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
)

// TestKeyRefusedForGood: a device whose backend refuses a key for good (its
// memory holds no key that large: the CPU backend's -max-domain) takes none of
// the key's partitions again, and they are proved on another device; alone, it
// fails the job at its first attempt, saying why, instead of retrying.
func TestKeyRefusedForGood(t *testing.T) {
	const refused = "max-domain = \"1\"\n"
	t.Run("another device proves", func(t *testing.T) {
		// The extra device is dev0; the fixture's own, with -max-domain, dev1.
		other := fmt.Sprintf("\n[keys]\npreload = false\n[[device]]\nbackend = %q\nin_flight = 1\n[device.options]\nthreads = \"1\"\n", backendBin)
		f := start(t, opts{extra: other, deviceOptions: refused})
		ctx := testCtx(t, 3*time.Minute)
		ws := witnesses(t, small, 4, 7)
		job := f.await(ctx, f.submit(ctx, small, api.ClassNormal, ws).ID)
		if job.State != api.JobDone {
			t.Fatalf("job %s: %s", job.State, job.Error)
		}
		for i, p := range job.Partitions {
			if p.Device != "dev0" {
				t.Errorf("partition %d proved on %s, want dev0 (dev1 refused the key)", i, p.Device)
			}
		}
		verifyProofs(t, small, job, ws)
		// dev1 was asked once (it was free while dev0 proved), never again.
		if n := strings.Count(f.log.String(), "device refused a key for good"); n != 1 {
			t.Errorf("dev1 refused the key %d times, want once:\n%s", n, f.log.String())
		}
	})
	t.Run("no other device", func(t *testing.T) {
		f := start(t, opts{extra: "\n[keys]\npreload = false\n", deviceOptions: refused})
		ctx := testCtx(t, 2*time.Minute)
		job := f.await(ctx, f.submit(ctx, small, api.ClassNormal, witnesses(t, small, 1, 7)).ID)
		if job.State != api.JobFailed {
			t.Fatalf("job %s, want failed", job.State)
		}
		for _, want := range []string{"after 1 attempt", "-max-domain 1", "no other device can take the key"} {
			if !strings.Contains(job.Error, want) {
				t.Errorf("job error %q does not say %q", job.Error, want)
			}
		}
	})
}
