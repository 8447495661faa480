// Package waterfall turns a timeline (host/timeline events) into an answer to
// "where did the time go?": a self-contained HTML page with an SVG waterfall
// (one lane per synthesis worker and per device, a bar per partition phase), a
// device utilization curve computed from the device-busy time backends report,
// and a table of the largest idle gaps on each device with what the host was
// doing meanwhile.
//
// The production prover this project learns from idled its GPUs half the time
// behind a deep queue, and its "GPU time" was the wall time of a call, so nobody
// saw the gaps. Analyze measures them from device-busy time only, and explains
// each gap from the events that overlap it, in this order of precedence: a key
// being loaded onto the device, a partition handed to the device's backend that
// the device is not yet computing (transfers, mapping, the call itself), a
// staged partition nobody took, synthesis still running, partitions waiting for
// the memory budget, and otherwise nothing queued.
//
// Analyze is also what `zkhost bench` uses for its device-busy share and its
// per-phase percentiles; Write renders the page (`zkhost timeline`).
package waterfall
