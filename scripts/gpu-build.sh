#!/usr/bin/env bash
# Builds, on a machine with Go and nvcc (no GPU needed), everything scripts/gpu-run.sh and
# scripts/gpu-feed.sh run on the GPU machine (which has no Go): the zkhost CLI, the CUDA backend,
# the conformance suite and the kernel tests, stripped and gzipped into bin/gpu/ (git-ignored;
# carry it to the device). CPU_TESTS=0 leaves out the CPU-only benchmark binaries
# (circuit.test, solve.test: gpu-run.sh's synthesis steps), about 15 MB, to carry the peers
# (../shared/peers, about 17 MB) beside it within the device's 64 MiB.
set -euo pipefail
cd "$(dirname "$0")/.."
OUTDIR=bin/gpu
rm -rf "$OUTDIR"; mkdir -p "$OUTDIR"
# The H200 needs sm_90 only; CI and `make cuda` build every architecture (cuda.mk rebuilds
# the objects whenever the flags change, so neither links the other's).
make cuda-lib cuda-tools CUDA_ARCH_FLAGS="-gencode arch=compute_90,code=[sm_90,compute_90]"
cp build/cuda/bench/pipes "$OUTDIR/pipes"   # gpu-run.sh's step pipes
LD='-s -w'
go build -ldflags "$LD" -o "$OUTDIR/zkhost" ./cmd/zkhost
go build -ldflags "$LD" -tags cuda -o "$OUTDIR/zkhost-backend-cuda" ./cmd/zkhost-backend-cuda
# The SDK is a module of its own: its tests build from inside it.
(cd sdk && go test -c -ldflags "$LD" -o "../$OUTDIR/sdktest.test" ./sdktest)
go test -c -ldflags "$LD" -tags cuda -o "$OUTDIR/gpu.test" ./cudabackend/gpu
if [ "${CPU_TESTS:-1}" != 0 ]; then
  (cd sdk && go test -c -ldflags "$LD" -o "../$OUTDIR/circuit.test" ./circuit)   # BenchmarkEvaluate (CPU only)
  (cd sdk && go test -c -ldflags "$LD" -o "../$OUTDIR/solve.test" ./solve)       # BenchmarkSolveKeySet (CPU only)
fi
gzip -9 "$OUTDIR"/zkhost "$OUTDIR"/zkhost-backend-cuda "$OUTDIR"/pipes "$OUTDIR"/*.test
du -sh "$OUTDIR"
