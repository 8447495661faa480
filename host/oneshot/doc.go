// Package oneshot proves one job without a running daemon: it is `zkhost prove`.
//
// It reads the job's inputs (gnark witness files, wire assignment files, or example
// witnesses it generates), starts a daemon in this process (host/inprocess: a
// temporary state directory, the circuit's key set, one device running the given
// backend binary, pinned by its SHA-256 when asked), submits the job and waits for
// it. So a one-shot proof takes the daemon's one pipeline: synthesis, the sealed
// shared-memory file, the backend's Prove, gnark's groth16.Verify before a proof
// counts. It then writes each proof and public witness to the output directory, and
// summary.json with each partition's figures, taken from the daemon's timeline.
// Stopping the daemon stops the backend and removes every shared-memory file, on
// every path: success, error, cancellation (Ctrl-C).
//
// With GnarkPeer it proves with gnark's own groth16.Prove in this process instead,
// the peer the benchmarks compare zkhost with: no daemon and no backend.
package oneshot
