package metrics

import (
	"sort"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zkhost/zkhost/sdk"
)

// Namespace prefixes every metric name.
const Namespace = "zkhost"

// latencyBuckets span 10 ms to about 5.5 minutes by doublings, wide enough for
// small partitions on a GPU and large ones on a CPU.
var latencyBuckets = prometheus.ExponentialBuckets(0.01, 2, 16)

// Metrics records the daemon's pipeline as it runs. It is a
// prometheus.Collector. Every method is safe for concurrent use and does
// nothing on a nil *Metrics.
type Metrics struct {
	synthesis      *prometheus.HistogramVec
	prove          *prometheus.HistogramVec
	busy           *prometheus.CounterVec
	retries        *prometheus.CounterVec
	verifyFailures *prometheus.CounterVec
	utilization    *prometheus.GaugeVec
	utilized       *prometheus.CounterVec
	history        *busyHistory
}

// New returns empty metrics, with a busy history of HistoryLength in steps of
// HistoryStep. The metrics' definitions are alike in shape, deliberately: each
// is one series with its own name, help and labels, written out so that the
// list reads as the /metrics page does.
func New() *Metrics {
	return &Metrics{
		synthesis: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "synthesis_duration_seconds",
			Help:    "Time to synthesize one partition (gnark's solver), by priority class.",
			Buckets: latencyBuckets,
		}, []string{"class"}),
		prove: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: Namespace, Name: "prove_duration_seconds",
			Help:    "Wall time of one successful prove call on a device, key loading included.",
			Buckets: latencyBuckets,
		}, []string{"device"}),
		busy: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "device_busy_seconds_total",
			Help: "Time the device was busy proving, as its backend measured it on the device (not the wall time of calls).",
		}, []string{"device"}),
		retries: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "partition_retries_total",
			Help: "Partition attempts that failed and were queued again, by priority class.",
		}, []string{"class"}),
		verifyFailures: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "verification_failures_total",
			Help: "Proofs a device returned that did not verify.",
		}, []string{"device"}),
		utilization: prometheus.NewGaugeVec(prometheus.GaugeOpts{
			Namespace: Namespace, Name: "device_utilization_percent",
			Help: "The device's latest utilization sample from its driver (source nvml: the share of the sample period a kernel ran) or its backend (source process-cpu), 0..100.",
		}, []string{"device", "source"}),
		utilized: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: Namespace, Name: "device_utilized_seconds_total",
			Help: "Sum of utilization samples times their periods: rate() of it is the device's mean utilization (0..1) over any window, where the gauge shows only the latest sample.",
		}, []string{"device", "source"}),
		history: newBusyHistory(HistoryStep, HistoryLength),
	}
}

// ObserveSynthesis records one partition's synthesis time.
func (m *Metrics) ObserveSynthesis(class string, d time.Duration) {
	if m == nil {
		return
	}
	m.synthesis.WithLabelValues(class).Observe(d.Seconds())
}

// ObserveProve records a successful prove call on device that started at start
// and returned at end: its wall time, and the device-busy time the backend
// reported, placed in the busy history where the backend's phases ran (the
// backend reports them relative to receiving the request, end - res.Wall).
func (m *Metrics) ObserveProve(device string, start, end time.Time, res sdk.ProveResult) {
	if m == nil {
		return
	}
	m.prove.WithLabelValues(device).Observe(end.Sub(start).Seconds())
	m.busy.WithLabelValues(device).Add(res.DeviceBusy.Seconds())
	received := end.Add(-res.Wall)
	if len(res.Phases) == 0 {
		m.history.add(device, received, end, res.DeviceBusy)
		return
	}
	for _, ph := range res.Phases {
		from := received.Add(ph.Start)
		m.history.add(device, from, from.Add(ph.Wall), ph.DeviceBusy)
	}
}

// Retry counts a failed partition attempt that is tried again.
func (m *Metrics) Retry(class string) {
	if m == nil {
		return
	}
	m.retries.WithLabelValues(class).Inc()
}

// VerifyFailure counts a proof from device that did not verify.
func (m *Metrics) VerifyFailure(device string) {
	if m == nil {
		return
	}
	m.verifyFailures.WithLabelValues(device).Inc()
}

// ObserveUtilization records one utilization sample of device: percent (0..100)
// over period, measured by source.
func (m *Metrics) ObserveUtilization(device, source string, percent float64, period time.Duration) {
	if m == nil {
		return
	}
	m.utilization.WithLabelValues(device, source).Set(percent)
	m.utilized.WithLabelValues(device, source).Add(percent / 100 * period.Seconds())
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prometheus.Desc) {
	m.synthesis.Describe(ch)
	m.prove.Describe(ch)
	m.busy.Describe(ch)
	m.retries.Describe(ch)
	m.verifyFailures.Describe(ch)
	m.utilization.Describe(ch)
	m.utilized.Describe(ch)
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prometheus.Metric) {
	m.synthesis.Collect(ch)
	m.prove.Collect(ch)
	m.busy.Collect(ch)
	m.retries.Collect(ch)
	m.verifyFailures.Collect(ch)
	m.utilization.Collect(ch)
	m.utilized.Collect(ch)
}

// The busy history's shape: 15 minutes in steps of 5 seconds.
const (
	HistoryStep   = 5 * time.Second
	HistoryLength = 180
)

// History is each device's busy share over the last minutes, in equal steps.
type History struct {
	// Start is the beginning of the first step; the last step ends at most one
	// step before the time the history was asked for (steps are complete).
	Start time.Time
	Step  time.Duration
	// Devices holds one series per device that reported busy time, by name.
	Devices []DeviceHistory
}

// DeviceHistory is one device's busy share per step, 0..1, oldest first.
type DeviceHistory struct {
	Device string
	Busy   []float64
}

// BusyHistory returns the busy history up to now. The shares are device-busy
// time over step length, capped at 1 (a backend proving two partitions at once
// may report overlapping busy time).
func (m *Metrics) BusyHistory(now time.Time) History {
	if m == nil {
		return History{Step: HistoryStep}
	}
	return m.history.snapshot(now)
}

// busyHistory sums device-busy time into fixed steps of wall-clock time.
type busyHistory struct {
	mu      sync.Mutex
	step    time.Duration
	keep    int64
	devices map[string]map[int64]time.Duration // device -> step index -> busy
}

func newBusyHistory(step time.Duration, keep int) *busyHistory {
	return &busyHistory{step: step, keep: int64(keep), devices: map[string]map[int64]time.Duration{}}
}

func (h *busyHistory) index(t time.Time) int64 { return t.UnixNano() / int64(h.step) }

// add spreads busy evenly over [from, to).
func (h *busyHistory) add(device string, from, to time.Time, busy time.Duration) {
	if busy <= 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	steps := h.devices[device]
	if steps == nil {
		steps = map[int64]time.Duration{}
		h.devices[device] = steps
	}
	first, last := h.index(from), h.index(to)
	if !to.After(from) || first == last {
		steps[first] += busy
	} else {
		wall := float64(to.Sub(from))
		for i := first; i <= last; i++ {
			lo := i * int64(h.step)
			hi := lo + int64(h.step)
			ov := min(hi, to.UnixNano()) - max(lo, from.UnixNano())
			if ov > 0 {
				steps[i] += time.Duration(float64(busy) * float64(ov) / wall)
			}
		}
	}
	for i := range steps {
		if i < last-h.keep {
			delete(steps, i)
		}
	}
}

func (h *busyHistory) snapshot(now time.Time) History {
	h.mu.Lock()
	defer h.mu.Unlock()
	end := h.index(now) // the current, incomplete step is left out
	start := end - h.keep
	out := History{Start: time.Unix(0, start*int64(h.step)), Step: h.step}
	names := make([]string, 0, len(h.devices))
	for d := range h.devices {
		names = append(names, d)
	}
	sort.Strings(names)
	for _, d := range names {
		series := make([]float64, h.keep)
		for i, busy := range h.devices[d] {
			if i >= start && i < end {
				series[i-start] = min(1, float64(busy)/float64(h.step))
			}
		}
		out.Devices = append(out.Devices, DeviceHistory{Device: d, Busy: series})
	}
	return out
}
