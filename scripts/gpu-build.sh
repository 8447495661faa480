#!/usr/bin/env bash
# gpu-build.sh: builds, here, what scripts/gpu-run.sh runs on a GPU machine
# that has no Go: the CUDA library (make cuda-lib) and one test binary of
# package cudabackend/gpu built with -tags cuda (its tests and benchmarks:
# NTT, H, field, MSM...), at bin/gpu/gpu.test. It first runs the CPU checks
# that need no GPU (the NTT emulation, the package's tests in both builds).
# Carry bin/gpu to the GPU machine and run scripts/gpu-run.sh there.
#
# Environment: CUDA_LIBDIR (folder of libcudart_static.a, default
# /usr/lib/x86_64-linux-gnu), NVCC, CUDA_ARCH_FLAGS (e.g.
# "-gencode arch=compute_90,code=sm_90" for an H100/H200-only build, much
# faster to compile than the default sm_80/sm_89/sm_90+PTX set),
# SKIP_CPU_CHECKS=1 to skip the checks.
set -euo pipefail
cd "$(dirname "$0")/.."

CUDA_LIBDIR=${CUDA_LIBDIR:-/usr/lib/x86_64-linux-gnu}
make cuda-lib CUDA_LIBDIR="$CUDA_LIBDIR"

if [[ "${SKIP_CPU_CHECKS:-0}" != 1 ]]; then
    make cuda-hosttest
    go vet ./cudabackend/gpu
    go test -count=1 ./cudabackend/gpu
fi

mkdir -p bin/gpu
export CGO_LDFLAGS="${CGO_LDFLAGS:-} -L$CUDA_LIBDIR"
go vet -tags cuda ./cudabackend/gpu
go test -c -tags cuda -o bin/gpu/gpu.test ./cudabackend/gpu
if [[ "${SKIP_CPU_CHECKS:-0}" != 1 ]]; then
    # Without a GPU the cuda build must answer ErrUnavailable, not crash.
    (cd cudabackend/gpu && ../../bin/gpu/gpu.test -test.count=1 -test.run 'NoDevice|DomainBytes')
fi
echo "built bin/gpu/gpu.test; on the GPU machine run: bash scripts/gpu-run.sh"
