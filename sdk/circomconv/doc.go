// Package circomconv turns circom's and snarkjs's files, read by sdk/circom, into what
// zkhost proves with, and zkhost's proofs into snarkjs's JSON, on BLS12-381 and on
// BN254 (circom's and snarkjs's bls12381 and bn128):
//
//   - ProvingKey: a snarkjs .zkey's points as a zkhost key file's ProvingKey of the
//     curve asked for (keyfile.BLS12381Key, keyfile.BN254Key), in snarkjs's H form
//     (keyfile.HFormSnarkjs), which the CPU prover (sdk/refprover) honours;
//   - VerifyingKey: the .zkey's verifying key as gnark's of the zkey's curve, for
//     groth16.Verify;
//   - ConstraintSystem: the .r1cs as a gnark constraint system whose rows are the
//     QAP's rows as snarkjs lays them out (the constraints, then one row per public
//     wire), so that the host's evaluation of A and B from a full assignment gives
//     snarkjs's A and B, row for row, and checks every constraint on the way;
//   - Assignment: a .wtns witness as the wire vector, which is already a full
//     assignment in gnark's wire order (the constant one, the public values, the rest);
//   - ProofJSON and PublicJSON: a proof and its public values as snarkjs's proof.json
//     and public.json, which `snarkjs groth16 verify` reads; ParseProofJSON and
//     ParsePublicJSON read them back, and SnarkjsFiles makes them from zkhost's
//     binary proof and public witness.
//
// The functions are generic over the curve: over its affine point types (G1, G2) or
// its scalar type (S, with sdk/curve's Scalar constraint), or, where the input names
// its curve (a zkey, an r1cs, SnarkjsFiles's id), returning gnark's interface with
// that curve's type behind it. A zkey, witness or proof.json of another curve than
// the one asked for is refused with an error that names both and wraps
// ErrWrongCurve. Where gnark-crypto's or gnark's per-curve types force a per-curve
// step, it is one small table or type switch (layout for points; the gnark type to
// fill in VerifyingKey, ConstraintSystem and SnarkjsFiles).
//
// The points need no arithmetic to convert: snarkjs (ffjavascript) stores a
// coordinate little-endian in Montgomery form with R = 2^(64·n), n the base field's
// size in 64-bit words: 2^256 on BN254, 2^384 on BLS12-381, which is gnark-crypto's
// fp.Element in memory on either curve. Every point is checked to be on the curve
// and in the prime-order subgroup, since the rest of zkhost trusts a key file's
// points.
package circomconv
