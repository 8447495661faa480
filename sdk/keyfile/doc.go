// Package keyfile defines zkhost's on-disk Groth16 proving key format, for BLS12-381 and
// BN254 keys (the header's curve id), and the in-memory ProvingKey view backends prove
// with (ProvingKey[G1, G2]: BLS12381Key, BN254Key).
//
// A key file is a 4096-byte header followed by page-aligned sections holding points in
// gnark-crypto's in-memory layout (little-endian Montgomery limbs), so that Open can map
// the file read-only and hand out slices that alias the mapping: one copy of a key in RAM
// serves every backend process on the machine, and opening a multi-gigabyte key costs no
// parsing. The format is defined for little-endian hosts only (amd64, arm64). See
// docs/keyfile.md for the byte layout.
package keyfile
