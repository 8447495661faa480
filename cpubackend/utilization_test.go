package cpubackend

import (
	"context"
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
