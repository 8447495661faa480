// Package cudabackend proves Groth16 (BLS12-381 and BN254, keys in gnark's or
// snarkjs's H form) on an NVIDIA GPU, as a zkhost backend process (binary
// zkhost-backend-cuda).
//
// One code path serves both curves: a key's curve picks the kernels' field
// and group instantiations and its points' sizes (groth16.h), and its H form
// the NTT domain and the last steps of H (ntt.h's zk_h_form). BN254 keys are
// resident or streamed, their MSMs witness-aware as BLS12-381's; their proofs
// neither stream (H out of core) nor take compact partitions, which are
// BLS12-381's.
//
// The kernels (cudabackend/csrc: Fr/Fq Montgomery arithmetic, NTT, Pippenger
// MSM for G1 and G2, the per-proof pipeline in groth16.cu) sit behind a C ABI,
// called from Go through cgo in package cudabackend/gpu. That package builds
// with the `cuda` tag and nvcc; without it every call answers "unavailable", so
// this package and every other builds and tests anywhere. On a machine without a
// GPU (or with a driver too old) the backend answers Describe with no device and
// refuses Prove with a typed ErrUnavailable; it never crashes.
//
// LoadKey uploads the key's point sets to device memory once, and allocates
// MaxInFlight slots for its proofs (gpu.Groth16Slot: device buffers for W, A, B
// and C, two streams, events, and a pinned host staging buffer), so that nothing
// between two proofs' device work allocates, frees or pins: cudaFree and
// cudaHostUnregister synchronize the whole device, and pinning a partition's
// mapping per proof cost time in proportion to its size. Prove takes a free
// slot, reads the sealed partition straight into the slot's staging
// (sdk.ReadPartition: no hashing, no mapping) on a few CPU threads while the
// other slots keep the GPU busy, then enqueues on the slot's streams: the DMA
// from pinned memory, H and the four G1 MSMs, the G2 MSM beside them. The slot is free again as soon
// as the sums are on the host, so the next proof's upload and H overlap this
// one's assembly (refprover.Assemble with fresh r and s: a few scalar
// multiplications) and the other slot's MSMs. Device memory is admitted before a
// key loads and before a proof starts: what does not fit gets a retryable
// ErrResourceExhausted, never an out-of-memory crash. A proof's share is its
// MSMs' working memory (the G1 and the G2 MSM run at once, each with its own),
// as msm.cu sizes it (csrc/msm_plan.h, which gpu.ProofWorkBytes calls), each
// stream's share in the MSM pool's 32 MiB reservation blocks. Phase times come
// from CUDA events.
//
// A key whose point sets, slots and proofs do not fit in the device memory
// left (or under Options.DeviceMemoryCap, which the backend treats as the
// card's size) is not refused but streamed (gpu.PlanDevice): its points stay
// in host memory, registered in place read-only (the key file's shared
// mapping: one copy in the page cache for every backend of the machine, which
// the host's budget counts once) or, where the device cannot read it there,
// copied into pinned memory; each proof copies them to the device chunk by
// chunk, double-buffered, every copy beside the MSM of the chunk before, and
// adds up the chunks' sums.
package cudabackend
