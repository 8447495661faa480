#!/usr/bin/env bash
# gpu-circom.sh: scripts/bench-circom.sh on the GPU machine (no Go, node or network there):
# a circomlib Poseidon chain over BN254 of at least 2^20 constraints (HASHES=2030 with --O1:
# 1.05 M), proved through `zkhost prove` and the CUDA backend against `snarkjs groth16 prove` on
# the same cores, every zkhost proof verified by zkhost and by `snarkjs groth16 verify`, then the
# daemon under a backlog of BACKLOG jobs of such partitions (device busy, ratio). Here,
# where Go and npm are: scripts/gpu-build.sh (bin/gpu) and scripts/circom-pack.sh (bin/circom);
# carry both. There, from the repository root:
#   HASHES=2030 POWER=21 ROUNDS=2 scripts/gpu-circom.sh
# Its output goes to $OUT/circom.txt (default ./gpu-circom-out). BACKEND=PATH proves with another
# backend (a dry run where there is no GPU: the CPU backend).
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-$PWD/gpu-circom-out}
T=$(mktemp -d /tmp/zkhost-gpu-circom.XXXXXX)
trap 'rm -rf "$T"' EXIT
mkdir -p "$OUT" "$T/bin" "$T/tools"
for f in bin/gpu/zkhost.gz bin/gpu/zkhost-backend-cuda.gz bin/circom/node.xz bin/circom/writeptau.xz bin/circom/tools.tar.xz; do
	[ -f "$f" ] || { echo "gpu-circom: $f missing: run scripts/gpu-build.sh and scripts/circom-pack.sh where Go and npm are, and carry bin/gpu and bin/circom" >&2; exit 2; }
done
# unxz FILE: FILE decompressed to stdout, by xz or else by Python's lzma.
unxz() { if command -v xz >/dev/null; then xz -dc "$1"; else python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), sys.stdout.buffer)' "$1"; fi; }
gunzip -c bin/gpu/zkhost.gz >"$T/bin/zkhost"
gunzip -c bin/gpu/zkhost-backend-cuda.gz >"$T/bin/zkhost-backend-cuda"
unxz bin/circom/node.xz >"$T/bin/node"
unxz bin/circom/writeptau.xz >"$T/bin/writeptau"
unxz bin/circom/tools.tar.xz | tar -C "$T/tools" -xf -
chmod +x "$T"/bin/*
export PATH="$T/bin:$PATH"
{ date -u; nproc; grep -m1 'model name' /proc/cpuinfo; echo "node $(node --version)"
  if command -v nvidia-smi >/dev/null; then nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv; else echo "no nvidia-smi"; fi
} | tee "$OUT/machine.txt"
BIN=$T/bin TOOLS=$T/tools BACKEND=${BACKEND:-$T/bin/zkhost-backend-cuda} THREADS=0 PRIME=${PRIME:-bn128} CONTRIBUTE=${CONTRIBUTE:-0} \
	HASHES=${HASHES:-2030} POWER=${POWER:-21} OPT=${OPT:-1} ROUNDS=${ROUNDS:-2} BACKLOG=${BACKLOG:-30} \
	scripts/bench-circom.sh 2>&1 | tee "$OUT/circom.txt"
