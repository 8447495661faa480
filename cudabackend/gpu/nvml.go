package gpu

import (
	"errors"
	"fmt"
	"sort"
	"sync"
	"time"
)

// ErrNoNVML means NVML (the NVIDIA driver's management library,
// libnvidia-ml.so.1) cannot be used: no driver on this machine, a build
// without cgo, or a device NVML does not know. Test it with errors.Is; the
// message says which.
var ErrNoNVML = errors.New("no NVML")

// UtilizationSample is NVML's GPU utilization over the Period that ends at
// Time: the share of it, 0 to 100, during which one or more kernels ran on
// the device.
type UtilizationSample struct {
	Time    time.Time
	Period  time.Duration
	Percent float64
}

// NVML samples one device's utilization through NVML, which is loaded with
// dlopen when OpenNVML is first called, so a binary that imports this package
// starts on a machine without the driver (and says why it has no samples).
// It is safe for concurrent use.
//
// Samples prefers nvmlDeviceGetSamples(NVML_GPU_UTILIZATION_SAMPLES): the
// driver's own samples, taken every 1/6 s or faster depending on the GPU, each
// stamped with the CPU time (µs since the Unix epoch) it was taken at. Where
// the device does not keep them, it falls back to
// nvmlDeviceGetUtilizationRates, read at the moment of the call, over the
// time since the previous call.
type NVML struct {
	mu       sync.Mutex
	dev      nvmlDevice
	name     string        // how the device was found, for errors
	last     time.Time     // the newest sample answered so far
	period   time.Duration // the driver's sample period, once two samples were seen
	polled   bool          // the device keeps no samples: poll the current rate
	lastPoll time.Time
}

// OpenNVML finds CUDA device ordinal dev in NVML: by its PCI bus id, which
// both CUDA and NVML know (their orderings differ on machines with several
// GPUs unless CUDA_DEVICE_ORDER=PCI_BUS_ID), or, where the bus id cannot be
// read (a build without CUDA), by NVML index dev. An error wraps ErrNoNVML.
func OpenNVML(dev int) (*NVML, error) {
	if err := nvmlLoad(); err != nil {
		return nil, err
	}
	var (
		d    nvmlDevice
		name string
		err  error
	)
	if bus, berr := PCIBusID(dev); berr == nil {
		name = fmt.Sprintf("CUDA device %d (PCI %s)", dev, bus)
		d, err = nvmlDeviceByPCI(bus)
	} else {
		name = fmt.Sprintf("NVML device %d", dev)
		d, err = nvmlDeviceByIndex(dev)
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrNoNVML, name, err)
	}
	return &NVML{dev: d, name: name}, nil
}

// Samples returns the utilization samples taken after since (every sample
// the driver still holds when since is zero, a few seconds' worth), oldest
// first; none when no new sample was taken yet.
func (n *NVML) Samples(since time.Time) ([]UtilizationSample, error) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.polled {
		return n.poll()
	}
	var lastSeen uint64
	if !since.IsZero() && since.UnixMicro() > 0 {
		lastSeen = uint64(since.UnixMicro())
	}
	raw, err := nvmlUtilizationSamples(n.dev, lastSeen)
	if errors.Is(err, errNVMLNotSupported) {
		n.polled = true
		return n.poll()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", n.name, err)
	}
	return n.place(raw), nil
}

// place turns the driver's samples into UtilizationSamples: sorted by time,
// each with the period since the one before it (the first with the period
// seen so far, or the next gap).
func (n *NVML) place(raw []nvmlSample) []UtilizationSample {
	sort.Slice(raw, func(i, j int) bool { return raw[i].micros < raw[j].micros })
	out := make([]UtilizationSample, 0, len(raw))
	for _, r := range raw {
		t := time.UnixMicro(int64(r.micros))
		if !t.After(n.last) && !n.last.IsZero() {
			continue // already answered
		}
		s := UtilizationSample{Time: t, Percent: min(100, max(0, r.percent))}
		if !n.last.IsZero() {
			if gap := t.Sub(n.last); gap < 2*time.Second {
				n.period = gap
			}
		}
		s.Period = n.period
		n.last = t
		out = append(out, s)
	}
	if len(out) > 1 && out[0].Period == 0 {
		out[0].Period = out[1].Period
	}
	return out
}

// poll reads the current utilization rate, as nvidia-smi does, over the time
// since the previous poll.
func (n *NVML) poll() ([]UtilizationSample, error) {
	pct, err := nvmlUtilizationRate(n.dev)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", n.name, err)
	}
	now := time.Now()
	s := UtilizationSample{Time: now, Percent: min(100, max(0, pct))}
	if !n.lastPoll.IsZero() {
		s.Period = now.Sub(n.lastPoll)
	}
	n.lastPoll = now
	return []UtilizationSample{s}, nil
}

// nvmlSample is one sample as the driver gives it.
type nvmlSample struct {
	micros  uint64 // CPU time, µs since the Unix epoch
	percent float64
}

// errNVMLNotSupported is NVML_ERROR_NOT_SUPPORTED from the driver.
var errNVMLNotSupported = errors.New("NVML: not supported on this device")
