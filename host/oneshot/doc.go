// Package oneshot proves one job without a daemon: it is `zkhost prove`.
//
// It loads a circuit's key files, starts one backend process through go-plugin,
// loads the proving key into it, then for each partition synthesizes the witness on
// the CPU (gnark's solver), writes W, A and B to a sealed memfd (sdk/shm), asks the
// backend for a proof, verifies the proof with gnark's groth16.Verify against the
// circuit's verifying key and writes it out. Synthesis of the next partitions runs
// while the backend proves, up to the number of partitions the backend declared it
// can hold in flight. The memfds are closed on every path: success, error,
// cancellation (Ctrl-C).
package oneshot
