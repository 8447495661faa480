// Package devsetup is a development Groth16 setup for BLS12-381 that makes the same key
// as gnark's groth16.Setup, fast enough for circuits of 2^24 constraints and more.
//
// The key is gnark's in every respect but speed: the same toxic-waste elements (τ, α, β,
// γ, δ), the same scalars (Lagrange evaluations at τ accumulated per wire, K, Z), the
// same point order (Z bit-reversed, infinity points of A and B filtered out), and a
// verifying key built the same way, so gnark's groth16.Verify accepts proofs made with it.
// Three things make it fast:
//
//   - fixed-base multiplication with one precomputed table per window (fixedbase.go):
//     gnark-crypto's BatchScalarMultiplicationG1/G2 keep one table and double 255 times
//     per point, which was most of groth16.Setup's time (BENCHMARKS.md, "Development
//     keygen"); a table per
//     window needs no doubling, only one mixed addition per window;
//   - the points are computed chunk by chunk straight into the key's slices and turned
//     affine per chunk, never a Jacobian copy of the whole key;
//   - the scalars (Lagrange evaluations, K, Z) are computed in parallel;
//   - a wire whose B scalar equals its A scalar (a squared wire: every constraint of the
//     chain circuit) gets its [B]₁ point copied from [A]₁ instead of multiplied again.
//
// Like gnark's Setup, its toxic waste exists in this process: keys from it are for
// development only. Circuits with commitments are refused.
//
// sdk/internal/devsetupbn254 is this setup on BN254, generated from this package's
// code by gen.sh.
package devsetup

//go:generate ./gen.sh
