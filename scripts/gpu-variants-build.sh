#!/usr/bin/env bash
# Builds kernel variants for an A/B comparison on the GPU machine in one device call: for each
# NAME=DEFINES argument, msm.cu and probe.cu compiled with those preprocessor defines (sm_90),
# linked with the other objects of the current build into a gpu.test at
# bin/gpu/variants/gpu-NAME.test.gz (so a variant's probes run its arithmetic too).
# scripts/gpu-run.sh's step `variants` runs the same benchmark on each, in turns.
#
#   scripts/gpu-build.sh     # first: the objects the variants share, and the usual binaries
#   scripts/gpu-variants-build.sh base= nolazy=-DZK_FQ_LAZY=0 'blocks3=-DZK_ACC_MAX_BLOCKS=0'
#
# Variants compile two at a time (msm.cu takes 1-3 minutes each). KEEP=1 keeps the variants
# built before (else the folder starts empty).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=bin/gpu/variants
VB=build/variants
[ "${KEEP:-0}" = 1 ] || rm -rf "$OUT"
mkdir -p "$OUT" "$VB"
ARCH='-gencode arch=compute_90,code=[sm_90,compute_90]'
FLAGS="-O3 -std=c++17 $ARCH -Xcompiler -fPIC,-Wall,-Wno-unknown-pragmas -Icudabackend/csrc"
VARIED="msm probe"   # the sources each variant compiles with its defines
others=$(ls build/cuda/*.o | grep -Ev "/(${VARIED// /|})\.o\$")
names=()
pids=()
for spec in "$@"; do
  name=${spec%%=*}; defs=${spec#*=}
  names+=("$name")
  mkdir -p "$VB/$name"
  for src in $VARIED; do
    rm -f "$VB/$name/$src.o"  # a failed compile must not leave an older object to link
    echo "== $name: nvcc $src.cu $defs"
    # shellcheck disable=SC2086
    nvcc $FLAGS $defs -c "cudabackend/csrc/$src.cu" -o "$VB/$name/$src.o" &
    pids+=($!)
    # two compiles at a time
    while [ "$(jobs -rp | wc -l)" -ge 2 ]; do wait -n || true; done
  done
done
for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
for name in "${names[@]}"; do
  for src in $VARIED; do
    [ -s "$VB/$name/$src.o" ] || { echo "variant $name: $src.cu did not compile" >&2; exit 1; }
  done
done
cp build/cuda/libzkcuda.a "$VB/libzkcuda.a.keep"
# The build's own library comes back however this ends.
trap 'cp "$VB/libzkcuda.a.keep" build/cuda/libzkcuda.a' EXIT
for name in "${names[@]}"; do
  rm -f build/cuda/libzkcuda.a
  # shellcheck disable=SC2086
  ar rcs build/cuda/libzkcuda.a $others $(for src in $VARIED; do echo "$VB/$name/$src.o"; done)
  # The -X makes every variant's link action distinct, so go relinks with this library.
  go test -c -ldflags "-s -w -X github.com/zkhost/zkhost/cudabackend/gpu.kernelVariant=$name" -tags cuda \
    -o "$OUT/gpu-$name.test" ./cudabackend/gpu
  md5sum "$OUT/gpu-$name.test"
  gzip -9f "$OUT/gpu-$name.test"
done
du -sh "$OUT"
