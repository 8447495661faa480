package gpu

import (
	"errors"
	"os"
	"strings"
	"testing"
	"time"
)

// TestOpenNVML runs where the NVIDIA driver is absent (as on the build
// machines, where libnvidia-ml.so.1 may be missing or present without a
// loaded driver): OpenNVML must answer ErrNoNVML saying why, every time, and
// never crash. Where the driver is present (ZK_REQUIRE_GPU=1 on the GPU
// machine), it must open device 0 and answer samples.
func TestOpenNVML(t *testing.T) {
	if os.Getenv("ZK_REQUIRE_GPU") == "1" {
		n, err := OpenNVML(0)
		if err != nil {
			t.Fatalf("OpenNVML(0) on the GPU machine: %v", err)
		}
		time.Sleep(time.Second) // the driver samples every 1/6 s or faster
		s, err := n.Samples(time.Time{})
		if err != nil || len(s) == 0 {
			t.Fatalf("Samples: %d samples, error %v", len(s), err)
		}
		t.Logf("%d samples, the last %+v", len(s), s[len(s)-1])
		return
	}
	for range 2 {
		_, err := OpenNVML(0)
		if !errors.Is(err, ErrNoNVML) || !strings.Contains(err.Error(), "libnvidia-ml.so.1") {
			t.Fatalf("OpenNVML without the driver: %v, want ErrNoNVML naming libnvidia-ml.so.1", err)
		}
	}
}

func TestNVMLPlaceSamples(t *testing.T) {
	base := uint64(time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC).UnixMicro())
	n := &NVML{}
	// Out of order, as a ring buffer may answer; percent clamped to 0..100.
	got := n.place([]nvmlSample{{base + 200_000, 50}, {base, 100}, {base + 100_000, 120}})
	want := []UtilizationSample{
		{time.UnixMicro(int64(base)), 100 * time.Millisecond, 100},
		{time.UnixMicro(int64(base + 100_000)), 100 * time.Millisecond, 100},
		{time.UnixMicro(int64(base + 200_000)), 100 * time.Millisecond, 50},
	}
	check := func(got, want []UtilizationSample) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("got %d samples %+v, want %d", len(got), got, len(want))
		}
		for i := range want {
			if !got[i].Time.Equal(want[i].Time) || got[i].Period != want[i].Period || got[i].Percent != want[i].Percent {
				t.Fatalf("sample %d: got %+v, want %+v", i, got[i], want[i])
			}
		}
	}
	check(got, want)
	// Samples already answered are not answered again; a new one takes the
	// gap since the last as its period.
	got = n.place([]nvmlSample{{base + 200_000, 50}, {base + 350_000, 0}})
	check(got, []UtilizationSample{{time.UnixMicro(int64(base + 350_000)), 150 * time.Millisecond, 0}})
}
