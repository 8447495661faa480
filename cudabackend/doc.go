// Package cudabackend proves Groth16 (BLS12-381) on an NVIDIA GPU, as a zkhost
// backend process (binary zkhost-backend-cuda).
//
// The kernels (cudabackend/csrc: Fr/Fq Montgomery arithmetic, NTT, Pippenger
// MSM for G1 and G2, the per-proof pipeline in groth16.cu) sit behind a C ABI,
// called from Go through cgo in package cudabackend/gpu. That package builds
// with the `cuda` tag and nvcc; without it every call answers "unavailable", so
// this package and every other builds and tests anywhere. On a machine without a
// GPU (or with a driver too old) the backend answers Describe with no device and
// refuses Prove with a typed ErrUnavailable; it never crashes.
//
// LoadKey uploads the key's point sets to device memory once. Prove maps the
// partition from shared memory, pins it for DMA, uploads W, A and B, computes H
// and the five MSMs on the device, and assembles the proof on the host with
// fresh r and s (refprover.Assemble: a few scalar multiplications). Several
// proofs run at once, each on its own stream, so one's upload overlaps
// another's compute. Device memory is admitted before a proof starts: a proof
// that does not fit gets a retryable ErrResourceExhausted, never an
// out-of-memory crash. Phase times come from CUDA events.
package cudabackend
