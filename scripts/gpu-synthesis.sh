#!/usr/bin/env bash
# gpu-synthesis.sh: the figures of "Synthesis at the GPU's pace" in BENCHMARKS.md, from one run on
# one GPU machine: the five circuits under the daemon's default config (sha256 b=134 and b=540,
# merkle k=1024 d=21, chain 2^22 and 2^24), gnark's Solve against zkhost's solver on the same
# cores, the kernel tests and the conformance suite against zkhost-backend-cuda. The run is too
# long for one device call, so it comes in four parts, each one call on the same warm machine
# (issue the next as soon as one returns: keys and results stay in $RUN between them). From the
# repository root, with bin/gpu/ built by scripts/gpu-build.sh (carry bin/gpu):
#
#   scripts/gpu-synthesis.sh 1   # the tests beside the keygens of four circuits; the solvers
#   scripts/gpu-synthesis.sh 2   # the daemon on sha256 b=134, merkle and chain 2^22
#   scripts/gpu-synthesis.sh 3   # sha256 b=540's keygen
#   scripts/gpu-synthesis.sh 4   # the daemon on sha256 b=540 (its waterfall) and chain 2^24
#
# Each part copies everything so far into $OUT/synthesis.tgz (summary.txt per step inside).
set -uo pipefail
ROOT=${ROOT:-$PWD}
OUT=${OUT:-$ROOT/gpu-synthesis-out}
RUN=${RUN:-/tmp/gpu-synthesis}
export KEYS=${KEYS:-/tmp/zkhost-gpu-keys}
mkdir -p "$OUT" "$RUN" "$KEYS"
part=${1:?usage: gpu-synthesis.sh 1|2|3|4}
echo "== $(date -u +%T) part $part" | tee -a "$RUN/parts.txt"

# feed NAME CIRCUITS BUDGET [VAR=VALUE...]: scripts/gpu-feed.sh on CIRCUITS into $RUN/NAME, with
# the daemon's default synthesis settings (gpu-feed.sh sets none unless asked).
feed() {
  local name=$1 circuits=$2 budget=$3; shift 3
  env CIRCUITS="$circuits" BUDGET="$budget" OUT="$RUN/$name" PEER=0 ISOPROVE=0 SOLVE=0 "$@" \
    scripts/gpu-feed.sh > "$RUN/$name.log" 2>&1
  echo "== $(date -u +%T) $name: exit $?" | tee -a "$RUN/parts.txt"
}

case $part in
1)
  # The kernel tests of compact partitions and the Groth16 prove (against gnark-crypto and
  # gnark's verifier) and the conformance suite, on the GPU, beside the keygens on the CPU.
  # Its own copy of the binaries: gpu-feed.sh unpacks into /tmp/zkhost-gpu at the same time.
  ( STEPS="kernels conformance" GPU_RUN='Compact|TestGroth16|TestOpenNVML' KT=160 KB=1 CT=160 \
      BUDGET=330 OUT="$RUN/tests" BIN=/tmp/zkhost-gpu-tests KEYS=/tmp/zkhost-gpu-tests-keys scripts/gpu-run.sh > "$RUN/tests.log" 2>&1
    echo "== $(date -u +%T) tests: exit $?" | tee -a "$RUN/parts.txt" ) &
  tests=$!
  feed keys "sha256b134 chain22 merkle1024d21 chain24" 400 BENCH=0 KGS=150 KGM=150
  wait "$tests"
  # gnark's Solve against zkhost's solver, one thread and 16 at once, on each circuit.
  feed solve "sha256b134 chain22 merkle1024d21" 150 BENCH=0 SOLVE=1 SOLVE_N=1 SOLVE_T=50
  ;;
2)
  feed bench-a "sha256b134 merkle1024d21 chain22" 560 JOBSS=100 BENCH_TS=150 JOBSM=40 BENCH_TM=170 JOBS22=40
  ;;
3)
  # sha256 b=540's keygen alone: it took about five minutes on this machine kind.
  feed keys-b540 sha256b540 560 BENCH=0 KGS=550
  ;;
4)
  feed bench-b540 sha256b540 300 JOBSS=40 BENCH_TS=240
  feed bench-chain24 chain24 260 JOBS20=24 BENCH_T=200
  ;;
*) echo "gpu-synthesis: no part $part (1, 2, 3 or 4)" >&2; exit 2 ;;
esac
tar czf "$OUT/synthesis.tgz" -C "$(dirname "$RUN")" "$(basename "$RUN")"
ls -la "$OUT"
