package metrics

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/sdk"
)

// fakeService answers Status and List from fixed values.
type fakeService struct {
	api.Service
	status api.StatusReport
	jobs   []api.Job
	err    error
}

func (f *fakeService) Status(context.Context) (api.StatusReport, error) { return f.status, f.err }

func (f *fakeService) List(_ context.Context, filter api.ListFilter) ([]api.Job, error) {
	var out []api.Job
	for _, j := range f.jobs {
		if filter.State == api.JobStateUnspecified || j.State == filter.State {
			out = append(out, j)
		}
	}
	return out, nil
}

var t0 = time.Unix(1_800_000_000, 0)

func sampleService() *fakeService {
	parts := func(states ...api.PartitionState) []api.Partition {
		var ps []api.Partition
		for i, s := range states {
			ps = append(ps, api.Partition{Index: i, State: s})
		}
		return ps
	}
	running := parts(api.PartitionVerified, api.PartitionProving, api.PartitionProving, api.PartitionSynthesizing, api.PartitionSynthesizing, api.PartitionQueued)
	running[2].ProveStart, running[2].ProveEnd = t0, t0.Add(time.Second) // returned, being verified
	running[4].SynthEnd = t0                                             // staged
	return &fakeService{
		status: api.StatusReport{
			Queues: []api.ClassQueue{
				{Class: api.ClassCritical}, {Class: api.ClassHigh},
				{Class: api.ClassNormal, Jobs: 2, Partitions: 5}, {Class: api.ClassLow, Jobs: 1, Partitions: 3},
			},
			SynthesisRunning: 1, SynthesisCapacity: 4,
			Devices: []api.DeviceStatus{
				{Name: "dev0", Backend: "zkhost-backend-cpu", Model: "AMD EPYC", Kind: "cpu", InFlight: 2, MaxInFlight: 2, KeysResident: []string{"chain-k12"}, Restarts: 3, Healthy: true},
				{Name: "dev1", Backend: "zkhost-backend-cuda", Model: "NVIDIA H200", Kind: "gpu", MaxInFlight: 2, Healthy: false, Error: "unhealthy"},
			},
			Budget:  api.BudgetStatus{UsedBytes: 1 << 30, TotalBytes: 8 << 30, CriticalReserveBytes: 1 << 29},
			Journal: api.JournalStatus{Dir: "/state", Writable: false, WriteRetries: 12, FreeBytes: 4096, ReserveBytes: 1 << 20},
			Version: "0.1.0-test",
		},
		jobs: []api.Job{
			{ID: "a", State: api.JobRunning, Class: api.ClassNormal, Partitions: running},
			{ID: "b", State: api.JobQueued, Class: api.ClassLow, Partitions: parts(api.PartitionQueued, api.PartitionQueued, api.PartitionQueued)},
			{ID: "c", State: api.JobDone, Class: api.ClassNormal, Partitions: parts(api.PartitionVerified)},
		},
	}
}

func TestLint(t *testing.T) {
	m := New()
	// Observe something in every vector, so every metric is exposed.
	m.ObserveSynthesis("normal", 300*time.Millisecond)
	m.ObserveProve("dev0", t0, t0.Add(2*time.Second), sdk.ProveResult{Wall: time.Second, DeviceBusy: 800 * time.Millisecond})
	m.Retry("normal")
	m.VerifyFailure("dev0")
	for name, c := range map[string]prometheus.Collector{"Metrics": m, "StatusCollector": NewStatusCollector(sampleService())} {
		problems, err := testutil.CollectAndLint(c)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, p := range problems {
			t.Errorf("%s: %s: %s", name, p.Metric, p.Text)
		}
	}
}

func TestEventMetrics(t *testing.T) {
	m := New()
	m.ObserveSynthesis("normal", 300*time.Millisecond)
	m.ObserveSynthesis("normal", 100*time.Millisecond)
	m.ObserveSynthesis("critical", 50*time.Millisecond)
	res := sdk.ProveResult{Wall: 1500 * time.Millisecond, DeviceBusy: 1200 * time.Millisecond}
	m.ObserveProve("dev0", t0, t0.Add(2*time.Second), res)
	m.ObserveProve("dev0", t0, t0.Add(3*time.Second), res)
	m.ObserveProve("dev1", t0, t0.Add(time.Second), sdk.ProveResult{Wall: time.Second, DeviceBusy: 250 * time.Millisecond})
	m.Retry("low")
	m.Retry("low")
	m.VerifyFailure("dev1")

	want := `
# HELP zkhost_device_busy_seconds_total Time the device was busy proving, as its backend measured it on the device (not the wall time of calls).
# TYPE zkhost_device_busy_seconds_total counter
zkhost_device_busy_seconds_total{device="dev0"} 2.4
zkhost_device_busy_seconds_total{device="dev1"} 0.25
# HELP zkhost_partition_retries_total Partition attempts that failed and were queued again, by priority class.
# TYPE zkhost_partition_retries_total counter
zkhost_partition_retries_total{class="low"} 2
# HELP zkhost_verification_failures_total Proofs a device returned that did not verify.
# TYPE zkhost_verification_failures_total counter
zkhost_verification_failures_total{device="dev1"} 1
`
	if err := testutil.CollectAndCompare(m, strings.NewReader(want), "zkhost_device_busy_seconds_total", "zkhost_partition_retries_total", "zkhost_verification_failures_total"); err != nil {
		t.Error(err)
	}
	if n := testutil.CollectAndCount(m, "zkhost_synthesis_duration_seconds"); n != 2 {
		t.Errorf("%d synthesis series, want 2 (normal, critical)", n)
	}
	// Histogram sums: 0.4 s of normal synthesis, 5 s of dev0 proving.
	reg := prometheus.NewRegistry()
	reg.MustRegister(m)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		for _, mt := range mf.GetMetric() {
			h := mt.GetHistogram()
			if h == nil {
				continue
			}
			label := mt.GetLabel()[0].GetValue()
			switch mf.GetName() + "/" + label {
			case "zkhost_synthesis_duration_seconds/normal":
				if h.GetSampleCount() != 2 || math.Abs(h.GetSampleSum()-0.4) > 1e-9 {
					t.Errorf("normal synthesis: count %d sum %v", h.GetSampleCount(), h.GetSampleSum())
				}
			case "zkhost_prove_duration_seconds/dev0":
				if h.GetSampleCount() != 2 || math.Abs(h.GetSampleSum()-5) > 1e-9 {
					t.Errorf("dev0 prove: count %d sum %v", h.GetSampleCount(), h.GetSampleSum())
				}
			}
		}
	}
}

func TestNilMetrics(t *testing.T) {
	var m *Metrics
	m.ObserveSynthesis("normal", time.Second)
	m.ObserveProve("dev0", t0, t0, sdk.ProveResult{})
	m.Retry("normal")
	m.VerifyFailure("dev0")
	if h := m.BusyHistory(t0); len(h.Devices) != 0 {
		t.Errorf("nil metrics have a history: %+v", h)
	}
}

func TestBusyHistory(t *testing.T) {
	m := New()
	step := HistoryStep
	base := time.Unix(0, (t0.UnixNano()/int64(step))*int64(step)) // a step boundary
	// A call received at base+1s and answered at base+9s: its one phase ran
	// base+2s..base+8s with 3 s of device-busy time, spread over steps 0 and 1
	// (3 s of 5 in step 0, 3 s of 5 in step 1: 1.5 s busy each).
	res := sdk.ProveResult{Wall: 8 * time.Second, DeviceBusy: 3 * time.Second,
		Phases: []sdk.Phase{{Name: "msm_g1", Start: time.Second, Wall: 6 * time.Second, DeviceBusy: 3 * time.Second}}}
	m.ObserveProve("dev0", base, base.Add(9*time.Second), res)
	// Without phases, the busy time spreads over the backend's wall time.
	m.ObserveProve("dev1", base, base.Add(5*time.Second), sdk.ProveResult{Wall: 5 * time.Second, DeviceBusy: 10 * time.Second})

	h := m.BusyHistory(base.Add(2 * step)) // steps 0 and 1 are complete
	if h.Step != step || len(h.Devices) != 2 || h.Devices[0].Device != "dev0" || h.Devices[1].Device != "dev1" {
		t.Fatalf("history %+v", h)
	}
	n := len(h.Devices[0].Busy)
	if n != HistoryLength || !h.Start.Add(time.Duration(n)*step).Equal(base.Add(2*step)) {
		t.Fatalf("history of %d steps from %v", n, h.Start)
	}
	dev0 := h.Devices[0].Busy
	if math.Abs(dev0[n-2]-0.3) > 1e-9 || math.Abs(dev0[n-1]-0.3) > 1e-9 || dev0[n-3] != 0 {
		t.Errorf("dev0 last steps %v, want 0.3 0.3", dev0[n-3:])
	}
	// Overlapping busy time is capped at 1.
	if dev1 := h.Devices[1].Busy; dev1[n-2] != 1 || dev1[n-1] != 0 {
		t.Errorf("dev1 last steps %v, want 1 0", dev1[n-2:])
	}
	// The current step is incomplete and left out.
	if h2 := m.BusyHistory(base.Add(step + time.Second)); h2.Devices[0].Busy[n-1] != 0.3 {
		t.Errorf("last complete step %v", h2.Devices[0].Busy[n-2:])
	}
	// Old steps age out.
	m.ObserveProve("dev0", base.Add(time.Hour), base.Add(time.Hour+time.Second), sdk.ProveResult{Wall: time.Second, DeviceBusy: time.Second})
	m.history.mu.Lock()
	kept := len(m.history.devices["dev0"])
	m.history.mu.Unlock()
	if kept != 1 {
		t.Errorf("%d steps kept after an hour, want 1", kept)
	}
}

func TestStatusCollector(t *testing.T) {
	c := NewStatusCollector(sampleService())
	want := `
# HELP zkhost_queue_partitions Partitions not yet dispatched to a device (the queue depth), by priority class.
# TYPE zkhost_queue_partitions gauge
zkhost_queue_partitions{class="critical"} 0
zkhost_queue_partitions{class="high"} 0
zkhost_queue_partitions{class="low"} 3
zkhost_queue_partitions{class="normal"} 5
# HELP zkhost_budget_used_bytes Host memory reserved from the budget now.
# TYPE zkhost_budget_used_bytes gauge
zkhost_budget_used_bytes 1.073741824e+09
# HELP zkhost_backend_restarts_total Restarts of the device's backend process after it crashed.
# TYPE zkhost_backend_restarts_total counter
zkhost_backend_restarts_total{device="dev0"} 3
zkhost_backend_restarts_total{device="dev1"} 0
# HELP zkhost_device_healthy 1 when the device takes work, 0 when it is unhealthy or has no usable hardware.
# TYPE zkhost_device_healthy gauge
zkhost_device_healthy{device="dev0"} 1
zkhost_device_healthy{device="dev1"} 0
# HELP zkhost_journal_writable 1 when the journal records writes; 0 while its disk is full (new jobs refused, accepted ones wait).
# TYPE zkhost_journal_writable gauge
zkhost_journal_writable{dir="/state"} 0
# HELP zkhost_journal_write_retries_total Journal writes retried after a space error (full disk, quota, file-size limit).
# TYPE zkhost_journal_write_retries_total counter
zkhost_journal_write_retries_total 12
# HELP zkhost_journal_reserve_held_bytes Space the journal's reserve file holds now (released when the disk fills).
# TYPE zkhost_journal_reserve_held_bytes gauge
zkhost_journal_reserve_held_bytes 0
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want), "zkhost_queue_partitions", "zkhost_budget_used_bytes", "zkhost_backend_restarts_total", "zkhost_device_healthy",
		"zkhost_journal_writable", "zkhost_journal_write_retries_total", "zkhost_journal_reserve_held_bytes"); err != nil {
		t.Error(err)
	}
	// Partitions per phase: the running normal job's six partitions in five
	// phases, the queued low job's three; the done job is not counted.
	reg := prometheus.NewRegistry()
	reg.MustRegister(c)
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, mf := range mfs {
		if mf.GetName() != "zkhost_partitions" {
			continue
		}
		for _, mt := range mf.GetMetric() {
			var class, phase string
			for _, l := range mt.GetLabel() {
				switch l.GetName() {
				case "class":
					class = l.GetValue()
				case "phase":
					phase = l.GetValue()
				}
			}
			got[class+"/"+phase] = mt.GetGauge().GetValue()
		}
	}
	if len(got) != len(api.Classes)*len(Phases) {
		t.Errorf("%d partition series, want every class and phase (%d)", len(got), len(api.Classes)*len(Phases))
	}
	want2 := map[string]float64{
		"normal/verified": 1, "normal/proving": 1, "normal/finalizing": 1, "normal/synthesizing": 1, "normal/staged": 1, "normal/queued": 1,
		"low/queued": 3, "critical/queued": 0, "high/proving": 0,
	}
	for k, v := range want2 {
		if got[k] != v {
			t.Errorf("zkhost_partitions %s = %v, want %v", k, got[k], v)
		}
	}
}

func TestStatusCollectorError(t *testing.T) {
	svc := sampleService()
	svc.err = errors.New("daemon is gone")
	reg := prometheus.NewRegistry()
	reg.MustRegister(NewStatusCollector(svc))
	if _, err := reg.Gather(); err == nil || !strings.Contains(err.Error(), "daemon is gone") {
		t.Errorf("gather: %v, want the service's error", err)
	}
}

func TestNewRegistry(t *testing.T) {
	reg, err := NewRegistry(New(), sampleService())
	if err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, mf := range mfs {
		names[mf.GetName()] = true
	}
	for _, n := range []string{"go_goroutines", "process_cpu_seconds_total", "zkhost_budget_bytes", "zkhost_build_info"} {
		if !names[n] {
			t.Errorf("registry lacks %s", n)
		}
	}
}

// TestClusterMetrics: a host of a cluster shows the cluster: its NATS
// connection, every host heard, and the cluster's queue.
func TestClusterMetrics(t *testing.T) {
	svc := sampleService()
	svc.status.Cluster = &api.ClusterStatus{Host: "h0",
		Connection: api.ClusterConnection{State: "reconnecting", Reconnects: 2},
		Hosts: []api.ClusterHost{{Name: "h0", Alive: true, Free: 2, Devices: []string{"gpu0", "gpu1"}},
			{Name: "h1", Alive: false, Devices: []string{"gpu0 (down)"}}},
		Queues: []api.ClusterQueue{{Class: api.ClassCritical, Waiting: 1}, {Class: api.ClassNormal, Waiting: 7, Held: 4, Redelivered: 2, Synthesized: 6}},
	}
	want := `
# HELP zkhost_cluster_nats_connected 1 while this host's NATS connection is up, 0 while it reconnects or after it closed.
# TYPE zkhost_cluster_nats_connected gauge
zkhost_cluster_nats_connected 0
# HELP zkhost_cluster_nats_reconnects_total Reconnections of this host's NATS connection since it started.
# TYPE zkhost_cluster_nats_reconnects_total counter
zkhost_cluster_nats_reconnects_total 2
# HELP zkhost_cluster_host_alive 1 for a host of the cluster heard within the last seconds, 0 for one heard before.
# TYPE zkhost_cluster_host_alive gauge
zkhost_cluster_host_alive{host="h0"} 1
zkhost_cluster_host_alive{host="h1"} 0
# HELP zkhost_cluster_host_devices The host's devices.
# TYPE zkhost_cluster_host_devices gauge
zkhost_cluster_host_devices{host="h0"} 2
zkhost_cluster_host_devices{host="h1"} 1
# HELP zkhost_cluster_queue_waiting_partitions Partitions in the cluster's queue held by no host, by priority class.
# TYPE zkhost_cluster_queue_waiting_partitions gauge
zkhost_cluster_queue_waiting_partitions{class="critical"} 1
zkhost_cluster_queue_waiting_partitions{class="normal"} 7
# HELP zkhost_cluster_queue_redelivered_partitions Partitions held after a redelivery (a host died, failed or handed one back), by priority class.
# TYPE zkhost_cluster_queue_redelivered_partitions gauge
zkhost_cluster_queue_redelivered_partitions{class="critical"} 0
zkhost_cluster_queue_redelivered_partitions{class="normal"} 2
# HELP zkhost_cluster_queue_synthesized_partitions Partitions a synthesis host solved that wait for a proving host, by priority class.
# TYPE zkhost_cluster_queue_synthesized_partitions gauge
zkhost_cluster_queue_synthesized_partitions{class="critical"} 0
zkhost_cluster_queue_synthesized_partitions{class="normal"} 6
`
	if err := testutil.CollectAndCompare(NewStatusCollector(svc), strings.NewReader(want), "zkhost_cluster_nats_connected", "zkhost_cluster_nats_reconnects_total",
		"zkhost_cluster_host_alive", "zkhost_cluster_host_devices", "zkhost_cluster_queue_waiting_partitions", "zkhost_cluster_queue_redelivered_partitions",
		"zkhost_cluster_queue_synthesized_partitions"); err != nil {
		t.Error(err)
	}
}
