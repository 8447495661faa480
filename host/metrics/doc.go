// Package metrics exposes the daemon to Prometheus.
//
// Two halves. Metrics counts what happens as it happens: the daemon calls a few
// methods (ObserveSynthesis, ObserveProve, Retry, VerifyFailure) from its
// pipeline, and Metrics keeps latency histograms, device-busy seconds, retries
// and verification failures, plus a short per-device history of busy time for
// the status page. Every method is a no-op on a nil *Metrics, so the daemon
// needs no checks. StatusCollector reads the state that already exists at
// scrape time (queues per class, partitions per phase, devices, the memory
// budget, backend restarts) from the api.Service, so no gauge can drift from
// the truth.
//
// Names follow Prometheus conventions (base units, _total on counters) and
// pass client_golang's linter (testutil.CollectAndLint):
//
//	zkhost_synthesis_duration_seconds{class}          histogram
//	zkhost_prove_duration_seconds{device}             histogram (wall time of a prove call)
//	zkhost_device_busy_seconds_total{device}          counter (device-measured busy time)
//	zkhost_partition_retries_total{class}             counter
//	zkhost_verification_failures_total{device}        counter
//	zkhost_queue_jobs{class}, zkhost_queue_partitions{class}
//	zkhost_partitions{class,phase}                    queued, synthesizing, staged, proving, finalizing, verified
//	zkhost_synthesis_workers_busy, zkhost_synthesis_workers
//	zkhost_budget_used_bytes, zkhost_budget_bytes, zkhost_budget_critical_reserve_bytes
//	zkhost_device_in_flight_partitions{device}, zkhost_device_max_in_flight_partitions{device}
//	zkhost_device_healthy{device}, zkhost_device_keys_resident{device}
//	zkhost_backend_restarts_total{device}             counter
//	zkhost_device_info{device,backend,kind,model}, zkhost_build_info{version}
//	zkhost_journal_writable{dir}, zkhost_journal_free_bytes{dir}  0 while the disk is full
//	zkhost_journal_write_retries_total                counter
//	zkhost_journal_reserve_held_bytes
//
// NewRegistry adds the Go runtime and process collectors (go_*, process_*).
// Device utilization is rate(zkhost_device_busy_seconds_total[1m]).
package metrics
