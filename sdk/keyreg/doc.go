// Package keyreg is the loaded-key bookkeeping every backend needs: LoadKey is
// idempotent per (ID, digest), the same ID with another digest is refused,
// concurrent loads of one key share a single load, a key in use by running proofs
// is released only when the last one returns, and Prove calls are admitted up to
// the backend's in-flight limit.
//
// The value a backend keeps per key (a mapped file, device buffers) is its own
// type K; the registry calls its close function when the key goes away.
package keyreg
