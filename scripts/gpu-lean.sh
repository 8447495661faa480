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
#   PART=ab scripts/gpu-lean.sh        # ~2 minutes
#     The streamed MSM against its kernels before the two-launch merge and short segments, built
#     as a variant (below), same call: tests and benchmarks of each.
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
ab)
  # The streamed merge and short segments against the kernels before them, same call, one
  # machine: build the old ones as a variant first (scripts/gpu-build.sh, then
  #   scripts/gpu-variants-build.sh 'levels=-DZK_STREAM_RUN_MERGE=0 -DZK_MSM_SHORT_SEG=32'
  # and carry bin/gpu/variants and bin/gpu/gpu.test.gz). Each variant's streamed MSM tests
  # against gnark-crypto, then BenchmarkMSMStream and BenchmarkMSMStreamBits (2^22, chunks of
  # 2^16, windows of at most 15 bits), the variants in turns.
  STEPS=variants VAR_MAIN=1 VAR_RUN='MSMStream' VAR_TT=90 VAR_BENCH='MSMStream' VAR_BENCHTIME=2x \
    VAR_BT=60 VAR_ROUNDS=1 ZK_BENCH_STREAM_CHUNKS=16 ZK_BENCH_STREAM_CS=15 BUDGET=180 \
    scripts/gpu-run.sh ;;
*)
  echo "gpu-lean.sh: PART is kernels, memcap or ab, not ${PART}" >&2
  exit 2 ;;
esac
cat "$OUT/summary.txt"
