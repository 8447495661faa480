// Package csrc holds the CUDA kernels' C sources, which nvcc builds into
// build/cuda/libzkcuda.a (cudabackend/cuda.mk), and, in Go, the part of their
// headers that needs no CUDA: the plan of an MSM and its device memory
// (msm_plan.h) and the sizes of a Groth16 slot, streamed key, compact W and
// constraint system (groth16.h), called through cgo. The kernels allocate
// from these functions and cudabackend/gpu's admission estimates call them,
// so the two cannot differ.
//
// It is a Go package, rather than headers that cudabackend/gpu includes by a
// relative path, so that the go command hashes the headers: the build cache
// sees a header change here, and rebuilds this package and every package
// importing it. A header included from outside a package's directory is not
// hashed, and the Go side would keep the plan it was first built with.
//
// The headers are plain C: cgo compiles them with the system's C compiler on
// any machine, with no CUDA. The package needs cgo (CGO_ENABLED=1).
package csrc
