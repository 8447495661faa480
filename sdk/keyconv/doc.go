// Package keyconv converts between gnark's Groth16 BLS12-381 types and the SDK's:
// proving keys (FromGnark, ToGnark, and Convert for a gnark key file) and proofs
// (ProofToGnark).
//
// It is the one SDK package that links gnark's backend for the keys: sdk/keyfile,
// sdk/refprover and package sdk use gnark-crypto's points only, so a backend built on
// them links gnark-crypto and not gnark (with gnark's frontend, its GKR code for
// every curve, zerolog and more). The host, the key tools, sdk/circuit and the
// tests import keyconv; a backend never needs to.
package keyconv
