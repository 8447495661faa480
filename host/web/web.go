package web

import (
	"context"
	_ "embed"
	"encoding/json"
	"net/http"
	"sort"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/metrics"
)

// RecentJobs is how many jobs StatusJSON lists.
const RecentJobs = 20

// MetricsProvider is implemented by a Service that keeps host/metrics (the
// daemon does); the status page then draws each device's busy history from it.
type MetricsProvider interface {
	Metrics() *metrics.Metrics
}

//go:embed index.html
var indexHTML []byte

// Handler returns the status page, /api/status.json over svc, and /metrics
// over reg (404 when reg is nil). It does no authentication: Listen adds it.
func Handler(svc api.Service, reg *prometheus.Registry) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Cache-Control", "no-cache")
		w.Header().Set("Content-Security-Policy", "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; connect-src 'self'")
		w.Write(indexHTML)
	})
	mux.HandleFunc("GET /api/status.json", func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
		defer cancel()
		st, err := StatusJSON(ctx, svc, time.Now())
		if err != nil {
			writeJSON(w, http.StatusServiceUnavailable, map[string]string{"error": err.Error()})
			return
		}
		writeJSON(w, http.StatusOK, st)
	})
	if reg != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	}
	return mux
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	enc.Encode(v)
}

// Status is the document /api/status.json serves.
type Status struct {
	Time          time.Time      `json:"time"`
	Version       string         `json:"version"`
	UptimeSeconds float64        `json:"uptime_seconds"`
	Pipeline      map[string]int `json:"pipeline"` // partitions of unfinished jobs per phase (metrics.Phases)
	Phases        []string       `json:"phases"`   // the phases in pipeline order
	Queues        []Queue        `json:"queues"`
	Synthesis     Synthesis      `json:"synthesis"`
	Budget        Budget         `json:"budget"`
	Devices       []Device       `json:"devices"`
	// BusyHistory is absent when the service keeps no metrics.
	BusyHistory *BusyHistory `json:"busy_history,omitempty"`
	Jobs        []Job        `json:"jobs"`
	// Cluster is the proving cluster as this host sees it; absent without
	// [cluster].
	Cluster *Cluster `json:"cluster,omitempty"`
}

// Cluster is the proving cluster: this host's NATS connection, every host
// heard, the cluster's queue.
type Cluster struct {
	Host       string            `json:"host"`
	Connection ClusterConnection `json:"connection"`
	Hosts      []api.ClusterHost `json:"hosts"`
	Queues     []ClusterQueue    `json:"queues"`
	QueueError string            `json:"queue_error,omitempty"`
	// OldestSeconds is the age of the oldest partition not yet done; 0 when none.
	OldestSeconds float64 `json:"oldest_seconds"`
}

// ClusterConnection is the host's NATS connection.
type ClusterConnection struct {
	State      string `json:"state"`
	Server     string `json:"server"`
	LastError  string `json:"last_error,omitempty"`
	Reconnects int    `json:"reconnects"`
}

// ClusterQueue is one class's partitions in the cluster's queue.
type ClusterQueue struct {
	Class       string `json:"class"`
	Waiting     uint64 `json:"waiting"`
	Held        uint64 `json:"held"`
	Redelivered uint64 `json:"redelivered"`
	Synthesized uint64 `json:"synthesized"`
}

// Queue is one priority class's waiting work.
type Queue struct {
	Class      string `json:"class"`
	Jobs       int    `json:"jobs"`
	Partitions int    `json:"partitions"`
}

// Synthesis is the synthesis pool.
type Synthesis struct {
	Running  int `json:"running"`
	Capacity int `json:"capacity"`
}

// Budget is the host memory budget.
type Budget struct {
	UsedBytes            uint64 `json:"used_bytes"`
	TotalBytes           uint64 `json:"total_bytes"`
	CriticalReserveBytes uint64 `json:"critical_reserve_bytes"`
}

// Device is one device and its backend.
type Device struct {
	Name        string   `json:"name"`
	Backend     string   `json:"backend"`
	Model       string   `json:"model"`
	Kind        string   `json:"kind"`
	InFlight    int      `json:"in_flight"`
	MaxInFlight int      `json:"max_in_flight"`
	BusyPercent float64  `json:"busy_percent"` // over the last minute, device-measured
	Keys        []string `json:"keys"`
	Restarts    int      `json:"restarts"`
	Healthy     bool     `json:"healthy"`
	Error       string   `json:"error,omitempty"`
	// Utilization is the driver's measure (NVML on a GPU) over the last
	// minute, beside the backend-measured busy share; source empty and note
	// saying why when the device reports none.
	UtilizationPercent float64 `json:"utilization_percent"`
	UtilizationSource  string  `json:"utilization_source"`
	UtilizationNote    string  `json:"utilization_note,omitempty"`
}

// BusyHistory is every device's busy share per step, oldest first.
type BusyHistory struct {
	Start       time.Time            `json:"start"`
	StepSeconds float64              `json:"step_seconds"`
	Devices     map[string][]float64 `json:"devices"`
}

// Job is one recent job.
type Job struct {
	ID         string    `json:"id"`
	Circuit    string    `json:"circuit"`
	Class      string    `json:"class"`
	State      string    `json:"state"`
	Partitions int       `json:"partitions"`
	Verified   int       `json:"verified"`
	Created    time.Time `json:"created"`
	// Seconds is the job's run time: from creation to its end, or to now.
	Seconds float64 `json:"seconds"`
	Error   string  `json:"error,omitempty"`
}

// StatusJSON gathers the page's document from svc at now.
func StatusJSON(ctx context.Context, svc api.Service, now time.Time) (*Status, error) {
	st, err := svc.Status(ctx)
	if err != nil {
		return nil, err
	}
	active, err := metrics.ActiveJobs(ctx, svc)
	if err != nil {
		return nil, err
	}
	recent, err := svc.List(ctx, api.ListFilter{Limit: RecentJobs})
	if err != nil {
		return nil, err
	}
	out := &Status{
		Time: now, Version: st.Version, UptimeSeconds: st.Uptime.Seconds(),
		Pipeline: map[string]int{}, Phases: metrics.Phases,
		Synthesis: Synthesis{Running: st.SynthesisRunning, Capacity: st.SynthesisCapacity},
		Budget:    Budget{UsedBytes: st.Budget.UsedBytes, TotalBytes: st.Budget.TotalBytes, CriticalReserveBytes: st.Budget.CriticalReserveBytes},
		Queues:    []Queue{}, Devices: []Device{}, Jobs: []Job{},
	}
	for _, byPhase := range metrics.PhaseCounts(active) {
		for p, n := range byPhase {
			out.Pipeline[p] += n
		}
	}
	for _, q := range st.Queues {
		out.Queues = append(out.Queues, Queue{Class: q.Class.String(), Jobs: q.Jobs, Partitions: q.Partitions})
	}
	for _, d := range st.Devices {
		keys := d.KeysResident
		if keys == nil {
			keys = []string{}
		}
		out.Devices = append(out.Devices, Device{
			Name: d.Name, Backend: d.Backend, Model: d.Model, Kind: d.Kind, InFlight: d.InFlight, MaxInFlight: d.MaxInFlight,
			BusyPercent: d.BusyPercent, Keys: keys, Restarts: d.Restarts, Healthy: d.Healthy, Error: d.Error,
			UtilizationPercent: d.UtilizationPercent, UtilizationSource: d.UtilizationSource, UtilizationNote: d.UtilizationNote,
		})
	}
	if cl := st.Cluster; cl != nil {
		out.Cluster = &Cluster{Host: cl.Host, Hosts: cl.Hosts, Queues: []ClusterQueue{}, QueueError: cl.QueueError,
			Connection: ClusterConnection{State: cl.Connection.State, Server: cl.Connection.Server, LastError: cl.Connection.LastError, Reconnects: cl.Connection.Reconnects}}
		for _, q := range cl.Queues {
			out.Cluster.Queues = append(out.Cluster.Queues, ClusterQueue{Class: q.Class.String(), Waiting: q.Waiting, Held: q.Held, Redelivered: q.Redelivered, Synthesized: q.Synthesized})
		}
		if !cl.Oldest.IsZero() {
			out.Cluster.OldestSeconds = now.Sub(cl.Oldest).Seconds()
		}
	}
	if mp, ok := svc.(MetricsProvider); ok && mp.Metrics() != nil {
		h := mp.Metrics().BusyHistory(now)
		bh := &BusyHistory{Start: h.Start, StepSeconds: h.Step.Seconds(), Devices: map[string][]float64{}}
		for _, d := range h.Devices {
			bh.Devices[d.Device] = d.Busy
		}
		out.BusyHistory = bh
	}
	// Newest first, whatever order the service lists them in.
	sort.SliceStable(recent, func(a, b int) bool { return recent[a].CreatedAt.After(recent[b].CreatedAt) })
	for _, j := range recent {
		end := j.FinishedAt
		if end.IsZero() {
			end = now
		}
		out.Jobs = append(out.Jobs, Job{
			ID: j.ID, Circuit: j.Circuit, Class: j.Class.OrNormal().String(), State: j.State.String(),
			Partitions: len(j.Partitions), Verified: j.Count(api.PartitionVerified), Created: j.CreatedAt,
			Seconds: end.Sub(j.CreatedAt).Seconds(), Error: j.Error,
		})
	}
	return out, nil
}
