// Package gpu is zkhost's driver interface to NVIDIA GPUs: a thin Go layer
// over the CUDA kernels of cudabackend/csrc (built into
// build/cuda/libzkcuda.a by `make cuda-lib`) and their C ABI.
//
// Two builds share this API. With the build tag `cuda` the functions call
// the kernels through cgo (the library, nvcc and the static CUDA runtime are
// needed at build time; only the NVIDIA driver at run time). Without it
// (the default) every function returns an error wrapping ErrUnavailable
// ("built without CUDA"), so every package that imports gpu builds and tests
// on machines without nvcc or a GPU. Both need cgo and a C compiler: the
// device-memory plan is C (package cudabackend/csrc), with no CUDA in it.
//
// What it offers:
//   - devices: DeviceCount, DeviceInfo (model, memory, compute capability);
//     a missing GPU or a too-old driver is ErrUnavailable, never a crash;
//   - device memory, streams and CUDA events (Buffer, Stream, Event), so
//     callers keep data resident and time device work with events;
//   - the scalar-field NTT of BLS12-381 and BN254 (NTT, NTTDevice, generic
//     over the curve's fr.Element: Fr), matching gnark-crypto v0.19.0's
//     fr/fft Domain of the curve bit for bit, and Groth16's quotient H
//     (ComputeH, ComputeHDevice over BLS12-381; ComputeHForm over either
//     curve), matching gnark v0.14.0's computeH bit for bit, bit-reversed
//     output included, or, for keys imported from snarkjs, snarkjs's H
//     (A·B − C on its odd coset, refprover.ComputeHSnarkjs); each pass runs
//     its stages two at a time (radix 4) unless the call's NTTRadix says 2;
//   - G1 and G2 MSMs against resident bases (UploadG1, MSM, MSMDevice), and
//     the witness-aware MSM (ClassifyScalars, MSMSplit): a device scalar
//     vector classified once into 0s, 1s and the rest, so MSMs over it drop
//     the 0s, sum the 1s' points and run Pippenger on the rest only. Groth16
//     proofs (Groth16Key.Prove) use it for the MSMs over W unless the key's
//     ProveOptions say DenseMSM. Host scalars are copied in pieces that
//     overlap the work (the bases' SetPieces).
//   - Groth16 proofs on either curve (LoadGroth16Key of any curve's key;
//     ProveCurve, StageCurve with the curve's binding, sdk/curve; the
//     methods with gnark-crypto types are BLS12-381's), each key's H in its
//     own form (keyfile.HForm).
//   - precomputed copies of MSM bases (Precompute; copy g = P·2^(c·G·g)):
//     an MSM then reduces G bucket sets instead of one per window, so its
//     window grows. A resident Groth16 key gets them at load as far as the
//     device-memory plan allows, at most PlanDevice's limit per set
//     (PlanDevice's Depth, LoadGroth16KeyPlan).
//   - the device-memory plan (PlanDevice, ProofWorkBytes, SlotDeviceBytes):
//     admission's estimates, from the C headers the kernels allocate from
//     (package cudabackend/csrc), so the two cannot drift apart.
//   - compact partitions (Groth16Key.SetConstraints, StageCompactWith,
//     ProveCompact): a key holding its circuit's constraint matrices proves
//     from W as two bitmaps (0s and 1s) and the few other values; the device
//     expands W, evaluates A, B and C and checks every constraint
//     (ErrUnsatisfied, UnsatisfiedError naming the first it finds).
//   - arithmetic throughput probes (ProbeMadd, ProbeFmul): the MSM's G1
//     mixed addition and the Fq product with no memory traffic, results
//     returned for checking against gnark-crypto; their rates bound the
//     accumulation's (BenchmarkMaddProbe, BenchmarkFmulProbe).
//
// Every setting reaches the kernels as an argument (an NTT's radix, a key's
// ProveOptions, a point set's pieces, PlanDevice's limit of copies): none is
// read from the environment, and none is process-wide.
//
// Field elements cross as gnark-crypto fr.Element values (32 bytes,
// Montgomery form); device buffers are raw copies of Go slices. Every call
// names its device ordinal and makes it current itself, so goroutines may
// call from any OS thread.
//
// Other GPU modules (the MSM) add their files to this package: C headers in
// cudabackend/csrc, cgo calls in <module>_cuda.go, the stub in
// <module>_stub.go, errors through check (cgo_cuda.go).
package gpu
