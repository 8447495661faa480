package cudabackend

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zkhost/zkhost/sdk"
)

// Without NVML (no driver here) Utilization answers a typed unavailable error
// that says "no NVML" and why, and keeps answering so; with the driver
// (ZK_REQUIRE_GPU=1 on the GPU machine) it answers NVML samples.
func TestUtilization(t *testing.T) {
	b := New(Options{})
	defer b.Close()
	ctx := context.Background()
	if os.Getenv("ZK_REQUIRE_GPU") == "1" {
		time.Sleep(time.Second)
		u, err := b.Utilization(ctx, time.Time{})
		if err != nil || u.Source != sdk.UtilizationNVML || len(u.Samples) == 0 {
			t.Fatalf("Utilization on the GPU machine: %+v, %v", u, err)
		}
		return
	}
	for range 2 {
		_, err := b.Utilization(ctx, time.Now())
		if sdk.KindOf(err) != sdk.ErrUnavailable || !strings.Contains(err.Error(), "no NVML") {
			t.Fatalf("Utilization without the driver: %v, want unavailable saying no NVML", err)
		}
	}
}
