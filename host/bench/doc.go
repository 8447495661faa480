// Package bench drives a zkhost daemon with a steady load of example-circuit
// jobs and reports what it sustained: proofs per minute, seconds per proof, the
// share of time the devices were busy as the devices themselves measured it
// (from the timeline, never from the wall time of calls), and p50/p99 of every
// phase.
//
// Run submits Jobs jobs of Partitions partitions each, Concurrency at a time,
// to a Target: a daemon reached over its API (ClientTarget) or one started in
// this process (Standalone, with a temporary state directory, keys generated
// into a cache directory on first use, and a timeline). Every proof is verified
// by the daemon before it counts.
package bench
