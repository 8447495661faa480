// Package device runs one backend process and the device it owns.
//
// A Device launches its backend through go-plugin (package sdk/plugins),
// describes it, loads proving keys on demand and forwards Prove calls. The
// process is kept running by package supervise, as a synthesizer's is: a
// backend that exits (crash, kill -9, CUDA abort) is noticed within a poll
// interval, every call in flight fails with ErrCrashed, which is retryable, and
// the process is restarted with capped exponential backoff. Crashes are counted
// over a window so the scheduler can take a device that keeps crashing out of
// service: a device crash is an event the host recovers from, not an outage.
//
// The package knows nothing of jobs or queues; the one-shot prover and the daemon
// both drive devices through it.
package device
