package daemon

import (
	"errors"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/api/apitest"
)

// TestEnableDevice: a device that crashed crash_limit times is unhealthy in
// Status until an operator enables it; then its backend restarts and it proves.
func TestEnableDevice(t *testing.T) {
	f := start(t, opts{extra: "\n[health]\ncrash_limit = 1\ncrash_window = \"1h\"\n"})
	ctx := testCtx(t, time.Minute)
	f.d.devices[0].dev.Kill()
	apitest.WaitFor(t, 10*time.Second, "the device to be unhealthy", func() bool {
		st, err := f.c.Status(ctx)
		return err == nil && !st.Devices[0].Healthy
	})
	if _, err := f.c.EnableDevice(ctx, "nosuch"); !errors.Is(err, api.ErrNotFound) {
		t.Fatalf("enable an unknown device: %v, want not found", err)
	}
	ds, err := f.c.EnableDevice(ctx, "dev0")
	if err != nil {
		t.Fatal(err)
	}
	if ds.Name != "dev0" {
		t.Fatalf("enable answered %+v", ds)
	}
	apitest.WaitFor(t, 20*time.Second, "the device to be healthy again", func() bool {
		st, err := f.c.Status(ctx)
		return err == nil && st.Devices[0].Healthy && st.Devices[0].Error == ""
	})
	ws := witnesses(t, small, 1, 7)
	job := f.await(ctx, f.submit(ctx, small, api.ClassNormal, ws).ID)
	if job.State != api.JobDone {
		t.Fatalf("job after enable: %s %s", job.State, job.Error)
	}
	verifyProofs(t, small, job, ws)
}
