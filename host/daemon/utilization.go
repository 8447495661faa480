package daemon

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/zkhost/zkhost/host/timeline"
	"github.com/zkhost/zkhost/sdk"
)

// utilizationInterval is how often the daemon asks each device's backend for
// its utilization samples: ten times a second. NVML keeps its own samples
// (every 1/6 s or faster) with their times, so the interval decides only how
// fresh the figures are, not how fine; a backend that measures on demand (the
// CPU backend) gives one sample per call.
const utilizationInterval = 100 * time.Millisecond

// utilizationRetry is how long the sampler waits after a backend said it
// cannot measure (no NVML) before it asks again: a driver may come back after
// a backend restart, but asking ten times a second would only fill the log.
const utilizationRetry = 30 * time.Second

// utilWindow keeps a device's utilization samples of the last minute, for the
// status page, and why there are none when there are none.
type utilWindow struct {
	mu      sync.Mutex
	window  time.Duration
	source  string
	reason  string // why there are no samples ("" while samples come)
	samples []sdk.UtilizationSample
}

func newUtilWindow(w time.Duration) *utilWindow { return &utilWindow{window: w} }

func (u *utilWindow) add(source string, s sdk.UtilizationSample) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.source, u.reason = source, ""
	u.samples = append(u.samples, s)
	i := 0
	for i < len(u.samples) && s.Time.Sub(u.samples[i].Time) > u.window {
		i++
	}
	u.samples = u.samples[i:]
}

func (u *utilWindow) setReason(why string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.reason = why
}

// percent is the mean of the samples within the window before now, each
// weighted by its period, and their source; a negative percent when there are
// none, with the reason instead of a source.
func (u *utilWindow) percent(now time.Time) (pct float64, source, reason string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	var sum, weight float64
	for _, s := range u.samples {
		if now.Sub(s.Time) > u.window {
			continue
		}
		w := max(s.Period, time.Millisecond).Seconds()
		sum += s.Percent * w
		weight += w
	}
	if weight == 0 {
		return -1, "", u.reason
	}
	return sum / weight, u.source, ""
}

// sampleUtilization asks de's backend for its utilization samples every
// utilizationInterval and records each new one in the timeline (a
// PhaseUtilization event on the device's lane), the metrics and the status
// window. A backend that does not implement the call is asked no more; one
// that cannot measure is asked again after utilizationRetry.
func (d *Daemon) sampleUtilization(de *deviceEntry) {
	name := de.dev.Name()
	tick := time.NewTicker(utilizationInterval)
	defer tick.Stop()
	var (
		since     time.Time // the newest sample recorded
		notBefore time.Time
		lastErr   string
	)
	for {
		select {
		case <-d.ctx.Done():
			return
		case now := <-tick.C:
			if now.Before(notBefore) {
				continue
			}
		}
		ctx, cancel := context.WithTimeout(d.ctx, time.Second)
		u, err := de.dev.Utilization(ctx, since)
		cancel()
		if err != nil {
			if d.ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
				continue // stopping, or the backend is restarting
			}
			if sdk.KindOf(err) == sdk.ErrUnimplemented {
				de.util.setReason("the backend reports no utilization")
				d.log.Info("the backend reports no utilization; the timeline has no utilization lane for it", "device", name)
				return
			}
			if err.Error() != lastErr {
				d.log.Warn("no utilization samples from the device", "device", name, "error", err)
				lastErr = err.Error()
			}
			de.util.setReason(err.Error())
			notBefore = time.Now().Add(utilizationRetry)
			continue
		}
		lastErr = ""
		for _, s := range u.Samples {
			if !s.Time.After(since) {
				continue
			}
			since = s.Time
			de.util.add(u.Source, s)
			d.metrics.ObserveUtilization(name, u.Source, s.Percent, s.Period)
			if d.tl != nil {
				pct := s.Percent
				d.tl.Record(timeline.Event{
					Lane: name, Phase: timeline.PhaseUtilization, Start: s.Time.Add(-s.Period), End: s.Time,
					Utilization: &pct, Source: u.Source,
				})
			}
		}
	}
}

// preloadKeys loads every circuit's key on de at the daemon's start ([keys]
// preload), one after another, and records each load in the timeline as a
// key_load on the device's lane with no job. A job that needs a key while it
// loads waits for the same load (the device shares concurrent loads of one
// key); a key that fails to load (no room on the device) is logged and loaded
// on demand later, as without preloading.
func (d *Daemon) preloadKeys(de *deviceEntry) {
	if !de.dev.Description().Device.Available {
		return
	}
	seen := map[string]bool{}
	for _, name := range d.circuitNames() {
		ce := d.circuits[name]
		if seen[ce.key.ID] || de.refuses(ce) {
			continue // another name for a key already loaded, or a key this device cannot prove with
		}
		seen[ce.key.ID] = true
		start := time.Now()
		_, err := de.dev.LoadKey(d.ctx, ce.key)
		if d.ctx.Err() != nil {
			return
		}
		if err != nil {
			d.log.Warn("preloading a key failed; it will be loaded when a job needs it", "device", de.dev.Name(), "key", ce.key.ID, "error", err)
			continue
		}
		end := time.Now()
		d.log.Info("key preloaded", "device", de.dev.Name(), "key", ce.key.ID, "took", end.Sub(start).Round(time.Millisecond))
		if d.tl != nil {
			d.tl.Record(timeline.Event{Lane: de.dev.Name(), Phase: timeline.PhaseKeyLoad, Circuit: ce.name, Start: start, End: end})
		}
	}
}
