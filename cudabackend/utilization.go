package cudabackend

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/zkhost/zkhost/cudabackend/gpu"
	"github.com/zkhost/zkhost/sdk"
)

// nvmlDevices holds each device ordinal's NVML handle, opened at the first
// Utilization call (a backend process owns one device, so this holds one
// entry; a failed open is kept too, so a machine without NVML is not asked
// again ten times a second). Handles live as long as the process.
var nvmlDevices struct {
	mu sync.Mutex
	m  map[int]nvmlEntry
}

type nvmlEntry struct {
	n   *gpu.NVML
	err error
}

func openNVML(dev int) (*gpu.NVML, error) {
	nvmlDevices.mu.Lock()
	defer nvmlDevices.mu.Unlock()
	if e, ok := nvmlDevices.m[dev]; ok {
		return e.n, e.err
	}
	n, err := gpu.OpenNVML(dev)
	if nvmlDevices.m == nil {
		nvmlDevices.m = map[int]nvmlEntry{}
	}
	nvmlDevices.m[dev] = nvmlEntry{n, err}
	return n, err
}

// Utilization answers NVML's GPU utilization samples of the backend's device
// taken after since (sdk.UtilizationReporter). Without NVML (no driver, a
// device NVML does not know) it answers ErrUnavailable saying "no NVML" and
// why, and the host records no utilization for the device.
func (b *Backend) Utilization(ctx context.Context, since time.Time) (sdk.Utilization, error) {
	n, err := openNVML(b.opts.Device)
	if err != nil {
		return sdk.Utilization{}, sdk.Errorf(sdk.ErrUnavailable, "%v", err)
	}
	samples, err := n.Samples(since)
	if err != nil {
		kind := sdk.ErrInternal
		if errors.Is(err, gpu.ErrNoNVML) {
			kind = sdk.ErrUnavailable
		}
		return sdk.Utilization{}, sdk.Errorf(kind, "utilization: %v", err)
	}
	u := sdk.Utilization{Source: sdk.UtilizationNVML, Samples: make([]sdk.UtilizationSample, len(samples))}
	for i, s := range samples {
		u.Samples[i] = sdk.UtilizationSample{Time: s.Time, Period: s.Period, Percent: s.Percent}
	}
	return u, nil
}

var _ sdk.UtilizationReporter = (*Backend)(nil)
