// Package timeline records where every partition's time goes, on one clock.
//
// The production prover this project learns from mistook the wall time of a GPU
// call for GPU time and chased the wrong causes for days. Here every phase of every
// partition (budget wait, synthesis, staging, dispatch, the backend's own upload and
// compute phases with the device-busy time it measured, finalization) is one Event
// with absolute start and end times on the host's clock. Backends report their
// phases relative to the moment they received a request; the host places them.
//
// The file is JSON lines, one event per line, appended through a buffer in
// whole lines; its overhead on the daemon's throughput is measured in
// BENCHMARKS.md. A full disk costs events, never the file: a write the disk
// took only part of is cut back to the last whole line, the failure is logged
// once, and recording resumes at the first flush that succeeds. ReadAll and
// Read parse a file back for the waterfall and tests, skipping a torn last
// line (one a writer was cut off in) and naming it.
package timeline
