// Package curve binds zkhost's curve-generic Go code to gnark-crypto's per-curve packages, as
// sppark's ff/ headers bind its kernels: one algorithm (the reference prover, the key file, a
// proof's encoding) is written once over type parameters, and a curve is a binding, not a copy.
//
// A curve is five gnark-crypto types, the scalar field's element S (fr.Element) and the affine and
// Jacobian points of G1 and G2, and a Curve: a zero-size value whose methods are the few group and
// FFT operations the generic code needs (gnark-crypto's types share no interface, so the binding
// spells the calls out once per curve). Field arithmetic goes through the Scalar constraint on *S,
// whose methods both curves' fr.Element have, so generic code writes x.Mul(&a, &b) as it would for
// one curve.
//
// Generic functions take the Curve as an interface-typed argument; Go infers the five types from
// the binding's methods, so a caller writes refprover.Prove(ctx, curve.BN254{}, ...) and nothing
// more. BLS12381 and BN254 are the bindings; IDOf names the curve of a G1 point type, for code
// that holds points but no binding (the key file's header).
//
// Both scalar fields have 32-byte elements (four 64-bit limbs, Montgomery form), so a vector of
// scalars has the same layout on either curve; the points differ: 96 and 192 bytes (affine G1 and
// G2) on BLS12-381, 64 and 128 on BN254.
package curve
