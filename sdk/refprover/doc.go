// Package refprover is the reference CPU implementation of each Groth16 proving step,
// over a *keyfile.ProvingKey of BLS12-381 or BN254, in the exact math of gnark v0.14.0's
// provers (backend/groth16/bls12-381/prove.go and its BN254 twin). It is written once,
// over type parameters: every function takes the curve's binding (sdk/curve:
// curve.BLS12381{} or curve.BN254{}), from which Go infers the curve's types, and
// KeyProver picks the binding from a key file's curve for code that holds only bytes.
//
// A proof is built in four phases, each a function a backend can call on its own or
// replace with a device implementation:
//
//	ComputeH     ntt     H = (A·B − C)/Z on a coset, C = A∘B (the "ntt" phase); for a
//	                     key in snarkjs's H form (keyfile.HFormSnarkjs) ComputeHSnarkjs,
//	                     A·B − C on the odd coset, as snarkjs's prover computes it
//	ComputeG1    msm_g1  the G1 multi-scalar multiplications A, B, K and Z
//	ComputeG2    msm_g2  the G2 multi-scalar multiplication B
//	Assemble     finish  the randomized proof from the MSM results and fresh r, s
//
// Prove chains them with per-phase timings and checks its context between phases and
// between the chunks of long multi-scalar multiplications, so a cancelled request stops
// its work within one chunk.
//
// Representation: every vector is a slice of the curve's fr.Element (four little-endian
// uint64 limbs in Montgomery form, gnark-crypto's in-memory layout, on either curve). Inputs may alias read-only
// memory mappings (a partition file, a key file): no function here writes to them.
// Points are gnark-crypto affine points from the key; partial results are Jacobian.
//
// A Worker runs whole proofs in a child process that a cancel kills at once, for
// backends that need prompt cancellation: one started per key proves partition after
// partition (Worker.Start), or one per proof (Worker.Prove); worker.go says why.
//
// Every result is exactly gnark's: field and group arithmetic is exact, so H equals
// gnark's computeH element for element and, for the same r and s, the proof equals the
// proof gnark would produce. The correctness oracle is gnark's groth16.Verify (and,
// for keys imported from snarkjs, snarkjs's own verifier too: cmd/zkhost's tests).
package refprover
