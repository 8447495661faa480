package daemon

import (
	"fmt"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
)

// TestKeyResidencePreferred: with two devices free, a partition goes to the device
// where its key is already resident, and the other device never loads the key.
func TestKeyResidencePreferred(t *testing.T) {
	// Preloading would put the key on both devices at start.
	second := fmt.Sprintf("\n[keys]\npreload = false\n[[device]]\nbackend = %q\nin_flight = 1\n[device.options]\nthreads = \"1\"\n", backendBin)
	f := start(t, opts{extra: second})
	ctx := testCtx(t, 2*time.Minute)
	if _, err := f.c.PreloadKey(ctx, small, "dev1"); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		ws := witnesses(t, small, 1, uint64(100+i))
		job := f.await(ctx, f.submit(ctx, small, api.ClassNormal, ws).ID)
		if job.State != api.JobDone {
			t.Fatalf("job %d: %s %s", i, job.State, job.Error)
		}
		if dev := job.Partitions[0].Device; dev != "dev1" {
			t.Errorf("job %d proved on %s, want dev1 where the key is resident", i, dev)
		}
		verifyProofs(t, small, job, ws)
	}
	st, err := f.c.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range st.Devices {
		if d.Name == "dev0" && len(d.KeysResident) != 0 {
			t.Errorf("dev0 loaded %v though dev1 held the key", d.KeysResident)
		}
	}
}
