#!/usr/bin/env bash
# Lean proofs on the GPU machine, in two device calls (bin/gpu built by scripts/gpu-build.sh,
# carried): what a streamed chunk costs and whether the host-classified split pays.
#   PART=kernels scripts/gpu-lean.sh   # ~5 minutes
#     The GPU tests of the compact partitions, the streamed MSM (dense and split against
#     gnark-crypto) and the lean and split Groth16 keys (against the CPU reference and gnark's
#     verifier); BenchmarkMSMStream and BenchmarkMSMStreamBits (2^22 random and bit-heavy
#     scalars, chunks of 2^16 and 2^18, windows of at most 15 bits, beside the resident MSM;
#     bit-heavy ones dense against split); then the chunk timeline of a streamed MSM
#     (ZKHOST_MSM_TRACE, gpu-run.sh's msmtrace step).
#   PART=memcap scripts/gpu-lean.sh    # ~8 minutes, most of it the two keygens
#     sha256 b=134 and chain 2^22 through `zkhost prove`, resident and under 512 MiB (the ratio of
#     2^27 on 16 GiB), then under 512 MiB with -lean-split: device-busy per proof, every proof
#     verified by the host.
# Everything goes under $OUT (default ./gpu-out), summary.txt first.
set -uo pipefail
cd "$(dirname "$0")/.."
export OUT=${OUT:-$PWD/gpu-out}
mkdir -p "$OUT"
case ${PART:-kernels} in
kernels)
  STEPS=kernels GPU_RUN='Compact|MSMStream|Groth16Lean|Groth16BinarySplit' KT=200 \
    GPU_BENCH='MSMStream' GPU_BENCHTIME=2x KB=200 \
    ZK_BENCH_STREAM_CHUNKS="16 18" ZK_BENCH_STREAM_CS=15 BUDGET=380 scripts/gpu-run.sh
  STEPS=msmtrace TR_CHUNKS=16 TR_CS=15 BUDGET=150 scripts/gpu-run.sh ;;
memcap)
  # One circuit at a time, all three runs of it, so a call cut short keeps whole comparisons.
  for c in ${LEAN_CASES:-sha256-b134:512MiB chain-k22:512MiB}; do
    STEPS=memcap MC_CASES="$c" MC_PARTS=2 KG=200 BUDGET=300 scripts/gpu-run.sh
    STEPS=memcap MC_CASES="$c" MC_MODES="${c#*:}" MC_FLAGS=-lean-split=true MC_PARTS=2 \
      BUDGET=100 scripts/gpu-run.sh
  done ;;
*)
  echo "gpu-lean.sh: PART is kernels or memcap, not ${PART}" >&2
  exit 2 ;;
esac
cat "$OUT/summary.txt"
