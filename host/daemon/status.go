package daemon

import (
	"context"
	"fmt"
	"time"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/device"
	"github.com/zkhost/zkhost/host/metrics"
	"github.com/zkhost/zkhost/host/queue"
	"github.com/zkhost/zkhost/sdk/circuit"
)

// Status implements api.Service.
func (d *Daemon) Status(ctx context.Context) (api.StatusReport, error) {
	if err := d.stopping(); err != nil {
		return api.StatusReport{}, err
	}
	now := time.Now()
	rep := api.StatusReport{
		SynthesisCapacity: d.synthWorkers,
		Uptime:            now.Sub(d.started),
		Version:           Version,
	}
	// Waiting work: partitions not yet dispatched to a device.
	jobsPerClass := map[api.Class]map[uint64]bool{}
	partsPerClass := map[api.Class]int{}
	for _, q := range []*queue.Queue[*task]{d.synthQ, d.readyQ} {
		for _, it := range q.Snapshot() {
			if jobsPerClass[it.Class] == nil {
				jobsPerClass[it.Class] = map[uint64]bool{}
			}
			jobsPerClass[it.Class][it.JobSeq] = true
			partsPerClass[it.Class]++
		}
	}
	for _, c := range api.Classes {
		rep.Queues = append(rep.Queues, api.ClassQueue{Class: c, Jobs: len(jobsPerClass[c]), Partitions: partsPerClass[c]})
	}
	d.mu.Lock()
	rep.SynthesisRunning = d.synthBusy
	d.mu.Unlock()
	for _, de := range d.devices {
		rep.Devices = append(rep.Devices, d.deviceStatus(de, now))
	}
	st := d.budget.Stats()
	rep.Budget = api.BudgetStatus{UsedBytes: st.Used, TotalBytes: st.Total, CriticalReserveBytes: st.CriticalReserve}
	jh := d.journal.Health()
	rep.Journal = api.JournalStatus{
		Dir: jh.Dir, Writable: jh.Writable, ShortSince: jh.Since, LastError: jh.LastError, WriteRetries: jh.Retries,
		FreeBytes: jh.FreeBytes, ReserveBytes: jh.ReserveBytes, ReserveHeld: jh.ReserveHeld,
	}
	return rep, nil
}

// deviceStatus is one device's row of Status.
func (d *Daemon) deviceStatus(de *deviceEntry, now time.Time) api.DeviceStatus {
	info := de.dev.Info()
	ds := api.DeviceStatus{
		Name: info.Name, Backend: de.backend, Model: info.Description.Device.Model, Kind: info.Description.Device.Kind,
		InFlight: info.InFlight, MaxInFlight: info.MaxInFlight, BusyPercent: de.busy.percent(now, d.started),
		KeysResident: info.Keys, Restarts: info.Restarts,
		Healthy: info.State != device.StateUnhealthy && info.State != device.StateDown && info.Description.Device.Available,
	}
	if pct, source, note := de.util.percent(now); source != "" {
		ds.UtilizationPercent, ds.UtilizationSource = pct, source
	} else {
		ds.UtilizationNote = note
	}
	switch {
	case info.State == device.StateUnhealthy:
		ds.Error = fmt.Sprintf("unhealthy: %d crashes within the window; last: %s (zkhost enable %s puts it back)", info.Crashes, info.LastError, info.Name)
	case info.State == device.StateDown:
		ds.Error = fmt.Sprintf("down: its backend exited and cannot be started again (%d restarts failed, retried with backoff); last: %s", info.StartFailures, info.LastError)
	case !info.Description.Device.Available:
		ds.Error = "no usable device: " + info.Description.Device.Reason
	case info.State == device.StateRestarting && info.LastError != "":
		// Killed (it did not answer) or exited: say which while it restarts.
		ds.Error = fmt.Sprintf("restarting: %s", info.LastError)
	case info.State != device.StateReady:
		ds.Error = info.State.String()
	case de.isCPU() && d.hasGPU():
		// A CPU device next to GPUs is the CPU fallback (placement.go); the
		// API has no field for notes, so the healthy device says it here.
		if d.gpuServing() {
			ds.Error = "CPU fallback on standby: takes work only when no GPU is healthy"
		} else {
			ds.Error = "CPU fallback: no healthy GPU remains, work goes on here"
		}
	}
	return ds
}

// EnableDevice implements api.Service: an operator puts a device that crashed too
// often back into service; its backend restarts.
func (d *Daemon) EnableDevice(ctx context.Context, name string) (api.DeviceStatus, error) {
	if err := d.stopping(); err != nil {
		return api.DeviceStatus{}, err
	}
	for _, de := range d.selectDevices(name) {
		if name != "" {
			de.dev.Enable()
			d.log.Info("device enabled by an operator", "device", name)
			return d.deviceStatus(de, time.Now()), nil
		}
	}
	return api.DeviceStatus{}, api.NotFoundf("no device %q", name)
}

// PreloadKey implements api.Service.
func (d *Daemon) PreloadKey(ctx context.Context, circuitName, deviceName string) ([]string, error) {
	return d.onDevices(circuitName, deviceName, func(de *deviceEntry, ce *circuitEntry) error {
		_, err := de.dev.LoadKey(ctx, ce.key)
		return err
	})
}

// EvictKey implements api.Service.
func (d *Daemon) EvictKey(ctx context.Context, circuitName, deviceName string) ([]string, error) {
	return d.onDevices(circuitName, deviceName, func(de *deviceEntry, ce *circuitEntry) error {
		return de.dev.UnloadKey(ctx, ce.key.ID)
	})
}

// onDevices runs f for a circuit on one device, or every device when deviceName is
// empty, and returns the devices it acted on.
func (d *Daemon) onDevices(circuitName, deviceName string, f func(*deviceEntry, *circuitEntry) error) ([]string, error) {
	if err := d.stopping(); err != nil {
		return nil, err
	}
	ce, ok := d.circuits[circuitName]
	if !ok {
		return nil, api.NotFoundf("unknown circuit %q", circuitName)
	}
	var done []string
	for _, de := range d.selectDevices(deviceName) {
		if !de.provesOn(ce.c.Curve) {
			if deviceName != "" {
				return nil, api.InvalidArgumentf("device %s does not prove on %s, the curve of circuit %q", deviceName, ce.c.Curve, circuitName)
			}
			continue // every device: those that prove on the circuit's curve
		}
		if err := f(de, ce); err != nil {
			return done, fmt.Errorf("device %s: %w", de.dev.Name(), err)
		}
		done = append(done, de.dev.Name())
	}
	if len(done) == 0 {
		return nil, api.NotFoundf("no device %q", deviceName)
	}
	return done, nil
}

func (d *Daemon) selectDevices(name string) []*deviceEntry {
	if name == "" {
		return d.devices
	}
	for _, de := range d.devices {
		if de.dev.Name() == name {
			return []*deviceEntry{de}
		}
	}
	return nil
}

// Metrics returns the daemon's Prometheus metrics (host/metrics), which it feeds as it runs.
func (d *Daemon) Metrics() *metrics.Metrics { return d.metrics }

var _ api.Service = (*Daemon)(nil)

// Devices returns each device's state and its backend's description, in
// config order, for a caller that runs the daemon in its own process (zkhost
// prove names the backend that proved in its summary).
func (d *Daemon) Devices() []device.Info {
	out := make([]device.Info, 0, len(d.devices))
	for _, de := range d.devices {
		out = append(out, de.dev.Info())
	}
	return out
}

// Circuit returns the loaded circuit the daemon serves under name (constraint
// system, verifying key, proving key digest), for a caller that runs the daemon
// in its own process and must not load the circuit a second time.
func (d *Daemon) Circuit(name string) (*circuit.Circuit, bool) {
	ce, ok := d.circuits[name]
	if !ok {
		return nil, false
	}
	return ce.c, true
}
