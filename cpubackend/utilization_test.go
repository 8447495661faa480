package cpubackend

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/zkhost/zkhost/sdk"
)

func TestUtilizationCountsProcessCPU(t *testing.T) {
	b := New(Options{Threads: 1})
	// Burn 50 ms of CPU time (not wall time: a loaded machine only stretches
	// the period), then take a sample: it covers the burn, so it is above 0.
	start, err := processCPU()
	if err != nil {
		t.Fatal(err)
	}
	x := 0
	for cpu := start; cpu-start < 50*time.Millisecond; cpu, _ = processCPU() {
		for i := range 100000 {
			x ^= i
		}
	}
	_ = x
	u, err := b.Utilization(context.Background(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if u.Source != sdk.UtilizationProcessCPU || len(u.Samples) != 1 {
		t.Fatalf("got %+v, want one %s sample", u, sdk.UtilizationProcessCPU)
	}
	first := u.Samples[0]
	if first.Percent <= 0 || first.Percent > 100 || first.Period <= 0 {
		t.Fatalf("sample %+v: want a percentage in (0, 100] over a positive period", first)
	}
	// The next sample starts where this one ended.
	u, err = b.Utilization(context.Background(), first.Time)
	if err != nil {
		t.Fatal(err)
	}
	if len(u.Samples) != 1 {
		t.Fatalf("got %+v, want one sample", u)
	}
	if s := u.Samples[0]; !s.Time.Add(-s.Period).Equal(first.Time) || s.Percent < 0 || s.Percent > 100 {
		t.Fatalf("second sample %+v does not start at %v with a percentage in [0, 100]", s, first.Time)
	}
}

// TestUtilizationCountsWorkers: a proof computed in the key's worker process
// counts in the backend's utilization (its CPU time is the worker's, not the
// backend's), while the worker runs and after it ended.
func TestUtilizationCountsWorkers(t *testing.T) {
	f, b := loadedChain(t, Options{Threads: 1, WorkerPath: testExecutable(t)})
	b.clockMu.Lock()
	var pid int
	for p := range b.workers.live {
		pid = p
	}
	live := len(b.workers.live)
	b.clockMu.Unlock()
	if live != 1 {
		t.Fatalf("%d workers live after LoadKey, want one", live)
	}
	if _, err := b.Utilization(context.Background(), time.Time{}); err != nil {
		t.Fatal(err)
	}
	before, _ := processCPU()
	workerBefore := liveCPU(pid)
	if _, err := b.Prove(context.Background(), sdk.ProveRequest{KeyID: "chain", Partition: f.partition(t)}); err != nil {
		t.Fatal(err)
	}
	own, _ := processCPU()
	worker := liveCPU(pid) - workerBefore
	if worker <= 0 {
		t.Fatalf("the worker's CPU time did not grow over a proof (%v)", worker)
	}
	u, err := b.Utilization(context.Background(), time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	s := u.Samples[0]
	// One thread: the sample's CPU time is percent × period; it holds the
	// worker's time on top of the backend's own (/proc counts in 10 ms ticks).
	if got := time.Duration(s.Percent / 100 * float64(s.Period)); s.Percent < 100 && got < worker+(own-before)-10*time.Millisecond {
		t.Fatalf("sample %+v holds %v of CPU, want at least the worker's %v and the backend's %v", s, got, worker, own-before)
	}

	// Once the key is unloaded its worker has ended, and its time is kept.
	if err := b.UnloadKey(context.Background(), "chain"); err != nil {
		t.Fatal(err)
	}
	b.clockMu.Lock()
	ended, live := b.workers.ended, len(b.workers.live)
	b.clockMu.Unlock()
	if ended < worker || live != 0 {
		t.Fatalf("after the worker ended: %v of its CPU counted, %d workers live; want at least %v and none", ended, live, worker)
	}
}

func TestLiveCPU(t *testing.T) {
	start, _ := processCPU()
	x := 0
	for cpu := start; cpu-start < 50*time.Millisecond; cpu, _ = processCPU() {
		for i := range 100000 {
			x ^= i
		}
	}
	_ = x
	// /proc counts in ticks of 10 ms: the 50 ms burnt show as 40 at least.
	if got := liveCPU(os.Getpid()); got < 40*time.Millisecond {
		t.Fatalf("liveCPU of this process %v, want at least 40ms after burning 50ms", got)
	}
	if got := liveCPU(1 << 30); got != 0 {
		t.Fatalf("liveCPU of no process %v, want 0", got)
	}
}
