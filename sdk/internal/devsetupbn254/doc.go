// Package devsetupbn254 is sdk/internal/devsetup on BN254: the same development Groth16
// setup (gnark's key in every respect but speed, from toxic waste that exists in this
// process: keys for development only), on BN254's gnark and gnark-crypto packages.
//
// Its setup, fixed-base and Lagrange code is generated from devsetup's by
// sdk/internal/devsetup/gen.sh (go generate ./internal/devsetup); devsetup's doc says
// how it is fast, and its tests check every point against the definitions. This
// package's own tests check what the curve could change: the key's shape against
// gnark's BN254 Setup, and proofs with it accepted by gnark's BN254 verifier.
package devsetupbn254
