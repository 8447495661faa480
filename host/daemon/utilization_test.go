package daemon

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/timeline"
	"github.com/zkhost/zkhost/sdk"
)

// TestPreloadAndUtilization: a daemon with the defaults keeps its timeline in
// the state directory, loads its circuit's key on its device at start
// without a job, and samples the device's utilization (the CPU backend
// reports its process CPU time); the timeline shows the preload and the
// samples, and a job's partition then finds its key resident (no key_load of
// its own).
func TestPreloadAndUtilization(t *testing.T) {
	f := start(t, opts{})
	ctx := testCtx(t, time.Minute)
	var st api.StatusReport
	for {
		var err error
		if st, err = f.c.Status(ctx); err != nil {
			t.Fatal(err)
		}
		d := st.Devices[0]
		if len(d.KeysResident) == 1 && d.UtilizationSource != "" {
			break
		}
		select {
		case <-ctx.Done():
			t.Fatalf("no preloaded key and utilization in status: %+v", d)
		case <-time.After(50 * time.Millisecond):
		}
	}
	if d := st.Devices[0]; d.KeysResident[0] != small || d.UtilizationSource != sdk.UtilizationProcessCPU || d.UtilizationPercent < 0 || d.UtilizationPercent > 100 {
		t.Fatalf("device status %+v: want %s resident and a process-cpu utilization in 0..100", d, small)
	}
	ws := witnesses(t, small, 1, 7)
	job := f.await(ctx, f.submit(ctx, small, api.ClassNormal, ws).ID)
	if job.State != api.JobDone {
		t.Fatalf("job %s %s", job.State, job.Error)
	}
	f.shutdown() // flushes the timeline

	path := filepath.Join(f.stateDir, "timeline.jsonl")
	if f.cfg.Timeline.Path != path {
		t.Fatalf("timeline at %q, want the default %q", f.cfg.Timeline.Path, path)
	}
	evs, err := timeline.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var preloads, samples, jobKeyLoads, jobEvents int
	for _, ev := range evs {
		switch {
		case ev.Job == "" && ev.Phase == timeline.PhaseKeyLoad && ev.Lane == "dev0" && ev.Circuit == small:
			preloads++
		case ev.Job == "" && ev.Phase == timeline.PhaseUtilization && ev.Lane == "dev0" && ev.Utilization != nil && ev.Source == sdk.UtilizationProcessCPU:
			samples++
		case ev.Job == job.ID && ev.Phase == timeline.PhaseKeyLoad:
			jobKeyLoads++
		case ev.Job == job.ID:
			jobEvents++
		}
	}
	if preloads != 1 || samples == 0 || jobKeyLoads != 0 || jobEvents == 0 {
		t.Fatalf("timeline: %d preloads (want 1), %d utilization samples (want some), %d key loads of the job (want 0), %d job events", preloads, samples, jobKeyLoads, jobEvents)
	}
}
