// Package cpubackend proves Groth16 on BLS12-381 and BN254 on the CPU with gnark-crypto,
// behind the sdk.Backend contract.
//
// It runs as the zkhost-backend-cpu plugin process (cmd/zkhost-backend-cpu) and, since
// it is a plain sdk.Backend value, inside tests without any process. Keys are mapped
// read-only from zkhost key files (sdk/keyfile); partitions are mapped read-only from
// the host's shared-memory files (sdk.OpenPartition). The proving math is
// sdk/refprover's.
//
// With Options.WorkerPath (as zkhost-backend-cpu runs) each loaded key has a prove
// worker, a child process started with the key that proves its partitions one after
// another and that a cancel kills (worker.go).
//
// Proofs compute one at a time, each on all the configured threads: the CPU is the
// device, and two proofs at once would only split it. With MaxInFlight above one the
// next partition is mapped and checked (its "map" phase, a SHA-256 pass over the file)
// while the current one computes, which is the staging the host's in-flight window is
// for.
package cpubackend
