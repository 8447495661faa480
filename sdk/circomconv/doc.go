// Package circomconv turns circom's and snarkjs's files, read by sdk/circom, into what
// zkhost proves with, and zkhost's proofs into snarkjs's JSON:
//
//   - ProvingKey: a snarkjs .zkey's points as a zkhost key file's ProvingKey, in
//     snarkjs's H form (keyfile.HFormSnarkjs), which the CPU prover (sdk/refprover)
//     honours;
//   - VerifyingKey: the .zkey's verifying key as gnark's, for groth16.Verify;
//   - ConstraintSystem: the .r1cs as a gnark constraint system whose rows are the
//     QAP's rows as snarkjs lays them out (the constraints, then one row per public
//     wire), so that the host's evaluation of A and B from a full assignment gives
//     snarkjs's A and B, row for row, and checks every constraint on the way;
//   - Assignment: a .wtns witness as the wire vector, which is already a full
//     assignment in gnark's wire order (the constant one, the public values, the rest);
//   - ProofJSON and PublicJSON: a proof and its public values as snarkjs's proof.json
//     and public.json, which `snarkjs groth16 verify` reads.
//
// Only BLS12-381 is converted: zkhost's pipeline is BLS12-381 only for now, and a
// BN254 key or witness is refused with ErrBN254. sdk/circom reads both curves.
//
// The points need no arithmetic to convert: snarkjs stores a coordinate
// little-endian in Montgomery form with R = 2^384, which is gnark-crypto's fp.Element
// in memory. Every point is checked to be on the curve and in the prime-order
// subgroup, since the rest of zkhost trusts a key file's points.
package circomconv
