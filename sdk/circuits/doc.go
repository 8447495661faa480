// Package circuits holds zkhost's example circuits, gnark v0.14.0 circuits over BLS12-381
// without commitments, and a registry that finds them by name.
//
//   - chain: 2^k R1CS constraints, a chain of squarings x ← x² + 7 with one public output.
//     It is the size knob for benchmarks: its constraint count is exactly 2^k.
//   - merkle: a storage-proof-like circuit. K challenged leaves are proven to belong to a
//     depth-D Merkle tree with a public root, hashed with Poseidon2 over BLS12-381's
//     scalar field (width 2, 6 full and 50 partial rounds, 2-to-1 compression).
//   - sha256: SHA-256 of a secret message of b blocks with a public digest, computed on
//     bit wires: a bit-heavy witness (nearly every wire 0 or 1), as hash circuits give.
//
// A Spec couples a circuit definition (for compiling and key generation) with a
// deterministic witness generator: Spec.Witness(partition, seed) returns a different
// valid witness for every partition index, the same one every time.
//
// The registry is part of the SDK, not of examples/, because the SDK's conformance
// suites (sdktest, synthtest) prove these circuits; the host (keygen, demo, benchmarks)
// imports them from here too.
package circuits
