// Package timeline records where every partition's time goes, on one clock.
//
// The production prover this project learns from mistook the wall time of a GPU
// call for GPU time and chased the wrong causes for days. Here every phase of every
// partition (budget wait, synthesis, staging, dispatch, the backend's own upload and
// compute phases with the device-busy time it measured, finalization) is one Event
// with absolute start and end times on the host's clock. Backends report their
// phases relative to the moment they received a request; the host places them.
//
// The file is JSON lines, one event per line, appended through a buffer; its
// overhead on the daemon's throughput is measured in BENCHMARKS.md. Read parses a file back for the waterfall and tests.
package timeline
