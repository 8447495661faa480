package metrics

import (
	"context"
	"fmt"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/zkhost/zkhost/host/api"
)

// Partition phases as the zkhost_partitions gauge labels them: where each
// partition of an unfinished job stands.
const (
	PhaseQueued       = "queued"       // waiting for budget and a synthesis worker
	PhaseSynthesizing = "synthesizing" // being solved and staged
	PhaseStaged       = "staged"       // synthesized, waiting for a device slot
	PhaseProving      = "proving"      // with a device
	PhaseFinalizing   = "finalizing"   // proved, being verified
	PhaseVerified     = "verified"     // verified; its job waits for other partitions
)

// Phases lists the partition phases in pipeline order.
var Phases = []string{PhaseQueued, PhaseSynthesizing, PhaseStaged, PhaseProving, PhaseFinalizing, PhaseVerified}

// PartitionPhase returns where p stands, one of Phases, or "" for a partition
// that failed or was cancelled.
func PartitionPhase(p api.Partition) string {
	switch p.State {
	case api.PartitionQueued:
		return PhaseQueued
	case api.PartitionSynthesizing:
		if !p.SynthEnd.IsZero() {
			return PhaseStaged
		}
		return PhaseSynthesizing
	case api.PartitionProving:
		if !p.ProveEnd.IsZero() && !p.ProveEnd.Before(p.ProveStart) {
			return PhaseFinalizing
		}
		return PhaseProving
	case api.PartitionVerified:
		return PhaseVerified
	}
	return ""
}

// PhaseCounts counts the partitions of unfinished jobs per class and phase.
// Every class and phase is present, zeros included.
func PhaseCounts(jobs []api.Job) map[api.Class]map[string]int {
	out := map[api.Class]map[string]int{}
	for _, c := range api.Classes {
		out[c] = map[string]int{}
		for _, p := range Phases {
			out[c][p] = 0
		}
	}
	for _, j := range jobs {
		if j.State.Terminal() {
			continue
		}
		c := j.Class.OrNormal()
		if out[c] == nil {
			continue
		}
		for _, p := range j.Partitions {
			if ph := PartitionPhase(p); ph != "" {
				out[c][ph]++
			}
		}
	}
	return out
}

// maxActiveJobs bounds the jobs a scrape reads to count partitions.
const maxActiveJobs = 10000

// ActiveJobs returns the queued and running jobs of svc.
func ActiveJobs(ctx context.Context, svc api.Service) ([]api.Job, error) {
	var jobs []api.Job
	for _, s := range []api.JobState{api.JobQueued, api.JobRunning} {
		js, err := svc.List(ctx, api.ListFilter{State: s, Limit: maxActiveJobs})
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, js...)
	}
	return jobs, nil
}

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(Namespace, "", name), help, labels, nil)
}

// StatusCollector collects the daemon's state at scrape time from an
// api.Service: its Status, and the partitions of its unfinished jobs.
type StatusCollector struct {
	svc     api.Service
	timeout time.Duration

	queueJobs, queuePartitions, partitions   *prometheus.Desc
	synthRunning, synthCapacity              *prometheus.Desc
	budgetUsed, budgetTotal, budgetReserve   *prometheus.Desc
	devInFlight, devMaxInFlight, devHealthy  *prometheus.Desc
	devKeys, devRestarts, devInfo, buildInfo *prometheus.Desc
	journalWritable, journalRetries          *prometheus.Desc
	journalFree, journalReserve              *prometheus.Desc
	// the cluster, on a host with [cluster]
	clConnected, clReconnects, clHostAlive, clHostFree *prometheus.Desc
	clHostDevices, clWaiting, clHeld, clRedelivered    *prometheus.Desc
	clSynthesized                                      *prometheus.Desc
	clOldest                                           *prometheus.Desc
}

// NewStatusCollector returns a collector over svc. A scrape waits at most 5
// seconds for the service.
func NewStatusCollector(svc api.Service) *StatusCollector {
	return &StatusCollector{
		svc: svc, timeout: 5 * time.Second,
		queueJobs:       desc("queue_jobs", "Jobs with partitions not yet dispatched to a device, by priority class.", "class"),
		queuePartitions: desc("queue_partitions", "Partitions not yet dispatched to a device (the queue depth), by priority class.", "class"),
		partitions:      desc("partitions", "Partitions of unfinished jobs, by priority class and phase (queued, synthesizing, staged, proving, finalizing, verified).", "class", "phase"),
		synthRunning:    desc("synthesis_workers_busy", "Synthesis workers solving a partition now."),
		synthCapacity:   desc("synthesis_workers", "Synthesis workers configured."),
		budgetUsed:      desc("budget_used_bytes", "Host memory reserved from the budget now."),
		budgetTotal:     desc("budget_bytes", "The whole host memory budget."),
		budgetReserve:   desc("budget_critical_reserve_bytes", "The part of the budget only critical jobs may use."),
		devInFlight:     desc("device_in_flight_partitions", "Partitions with the device's backend now.", "device"),
		devMaxInFlight:  desc("device_max_in_flight_partitions", "Partitions the device holds at once.", "device"),
		devHealthy:      desc("device_healthy", "1 when the device takes work, 0 when it is unhealthy or has no usable hardware.", "device"),
		devKeys:         desc("device_keys_resident", "Proving keys loaded on the device.", "device"),
		devRestarts:     desc("backend_restarts_total", "Restarts of the device's backend process after it crashed.", "device"),
		devInfo:         desc("device_info", "The device's backend and hardware; always 1.", "device", "backend", "kind", "model"),
		buildInfo:       desc("build_info", "The daemon's version; always 1.", "version"),
		journalWritable: desc("journal_writable", "1 when the journal records writes; 0 while its disk is full (new jobs refused, accepted ones wait).", "dir"),
		journalRetries:  desc("journal_write_retries_total", "Journal writes retried after a space error (full disk, quota, file-size limit)."),
		journalFree:     desc("journal_free_bytes", "Space free to the daemon's user in the journal's directory.", "dir"),
		journalReserve:  desc("journal_reserve_held_bytes", "Space the journal's reserve file holds now (released when the disk fills)."),
		clConnected:     desc("cluster_nats_connected", "1 while this host's NATS connection is up, 0 while it reconnects or after it closed."),
		clReconnects:    desc("cluster_nats_reconnects_total", "Reconnections of this host's NATS connection since it started."),
		clHostAlive:     desc("cluster_host_alive", "1 for a host of the cluster heard within the last seconds, 0 for one heard before.", "host"),
		clHostFree:      desc("cluster_host_free_partitions", "Partitions the host would take now.", "host"),
		clHostDevices:   desc("cluster_host_devices", "The host's devices.", "host"),
		clWaiting:       desc("cluster_queue_waiting_partitions", "Partitions in the cluster's queue held by no host, by priority class.", "class"),
		clHeld:          desc("cluster_queue_held_partitions", "Partitions held by hosts of the cluster, not yet done, by priority class.", "class"),
		clRedelivered:   desc("cluster_queue_redelivered_partitions", "Partitions held after a redelivery (a host died, failed or handed one back), by priority class.", "class"),
		clSynthesized:   desc("cluster_queue_synthesized_partitions", "Partitions a synthesis host solved that wait for a proving host, by priority class.", "class"),
		clOldest:        desc("cluster_oldest_partition_age_seconds", "Age of the oldest partition of the cluster not yet done; 0 when none."),
	}
}

// Describe implements prometheus.Collector.
func (c *StatusCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{
		c.queueJobs, c.queuePartitions, c.partitions, c.synthRunning, c.synthCapacity,
		c.budgetUsed, c.budgetTotal, c.budgetReserve, c.devInFlight, c.devMaxInFlight,
		c.devHealthy, c.devKeys, c.devRestarts, c.devInfo, c.buildInfo,
		c.journalWritable, c.journalRetries, c.journalFree, c.journalReserve,
		c.clConnected, c.clReconnects, c.clHostAlive, c.clHostFree, c.clHostDevices,
		c.clWaiting, c.clHeld, c.clRedelivered, c.clSynthesized, c.clOldest,
	} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. When the service fails, the scrape
// carries the error (promhttp reports it) instead of stale values.
func (c *StatusCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), c.timeout)
	defer cancel()
	st, err := c.svc.Status(ctx)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.queueJobs, fmt.Errorf("daemon status: %w", err))
		return
	}
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	for _, q := range st.Queues {
		gauge(c.queueJobs, float64(q.Jobs), q.Class.String())
		gauge(c.queuePartitions, float64(q.Partitions), q.Class.String())
	}
	gauge(c.synthRunning, float64(st.SynthesisRunning))
	gauge(c.synthCapacity, float64(st.SynthesisCapacity))
	gauge(c.budgetUsed, float64(st.Budget.UsedBytes))
	gauge(c.budgetTotal, float64(st.Budget.TotalBytes))
	gauge(c.budgetReserve, float64(st.Budget.CriticalReserveBytes))
	for _, d := range st.Devices {
		gauge(c.devInFlight, float64(d.InFlight), d.Name)
		gauge(c.devMaxInFlight, float64(d.MaxInFlight), d.Name)
		healthy := 0.0
		if d.Healthy {
			healthy = 1
		}
		gauge(c.devHealthy, healthy, d.Name)
		gauge(c.devKeys, float64(len(d.KeysResident)), d.Name)
		ch <- prometheus.MustNewConstMetric(c.devRestarts, prometheus.CounterValue, float64(d.Restarts), d.Name)
		gauge(c.devInfo, 1, d.Name, d.Backend, d.Kind, d.Model)
	}
	gauge(c.buildInfo, 1, st.Version)
	writable, held := 0.0, 0.0
	if st.Journal.Writable {
		writable = 1
	}
	if st.Journal.ReserveHeld {
		held = float64(st.Journal.ReserveBytes)
	}
	gauge(c.journalWritable, writable, st.Journal.Dir)
	ch <- prometheus.MustNewConstMetric(c.journalRetries, prometheus.CounterValue, float64(st.Journal.WriteRetries))
	gauge(c.journalFree, float64(st.Journal.FreeBytes), st.Journal.Dir)
	gauge(c.journalReserve, held)
	if cl := st.Cluster; cl != nil {
		c.collectCluster(ch, cl, gauge)
	}

	jobs, err := ActiveJobs(ctx, c.svc)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.partitions, fmt.Errorf("daemon jobs: %w", err))
		return
	}
	for class, phases := range PhaseCounts(jobs) {
		for phase, n := range phases {
			gauge(c.partitions, float64(n), class.String(), phase)
		}
	}
}

// NewRegistry returns a registry holding m (when not nil), a StatusCollector
// over svc (when not nil), and the Go runtime and process collectors.
func NewRegistry(m *Metrics, svc api.Service) (*prometheus.Registry, error) {
	reg := prometheus.NewRegistry()
	cs := []prometheus.Collector{
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
	}
	if m != nil {
		cs = append(cs, m)
	}
	if svc != nil {
		cs = append(cs, NewStatusCollector(svc))
	}
	for _, c := range cs {
		if err := reg.Register(c); err != nil {
			return nil, fmt.Errorf("metrics: %w", err)
		}
	}
	return reg, nil
}

// collectCluster adds the cluster's state as this host sees it.
func (c *StatusCollector) collectCluster(ch chan<- prometheus.Metric, cl *api.ClusterStatus, gauge func(*prometheus.Desc, float64, ...string)) {
	connected := 0.0
	if cl.Connection.State == "connected" {
		connected = 1
	}
	gauge(c.clConnected, connected)
	ch <- prometheus.MustNewConstMetric(c.clReconnects, prometheus.CounterValue, float64(cl.Connection.Reconnects))
	for _, h := range cl.Hosts {
		alive := 0.0
		if h.Alive {
			alive = 1
		}
		gauge(c.clHostAlive, alive, h.Name)
		gauge(c.clHostFree, float64(h.Free), h.Name)
		gauge(c.clHostDevices, float64(len(h.Devices)), h.Name)
	}
	if cl.QueueError != "" {
		ch <- prometheus.NewInvalidMetric(c.clWaiting, fmt.Errorf("cluster queue: %s", cl.QueueError))
		return
	}
	for _, q := range cl.Queues {
		gauge(c.clWaiting, float64(q.Waiting), q.Class.String())
		gauge(c.clHeld, float64(q.Held), q.Class.String())
		gauge(c.clRedelivered, float64(q.Redelivered), q.Class.String())
		gauge(c.clSynthesized, float64(q.Synthesized), q.Class.String())
	}
	age := 0.0
	if !cl.Oldest.IsZero() {
		age = time.Since(cl.Oldest).Seconds()
	}
	gauge(c.clOldest, age)
}
