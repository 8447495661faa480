#!/usr/bin/env bash
# gpu-compact.sh: compact partitions on the GPU machine, in one device call, from the
# repository root with bin/gpu/ built by scripts/gpu-build.sh (carry bin/gpu):
#   1. the kernel tests of compact partitions and the Groth16 prove (gpu.test, against
#      gnark-crypto's results and gnark's verifier), and the conformance suite against
#      zkhost-backend-cuda (its Compact check included), via scripts/gpu-run.sh;
#   2. the daemon with its default config on CIRCUITS (scripts/gpu-feed.sh: keygen, gnark's
#      Solve against zkhost's solver on one core and on every core, `zkhost bench` under a
#      backlog with NVML sampled, the isolated device time per proof, the waterfall).
# Both tarred into $OUT (run1.tgz, feed.tgz) with their logs.
#   CIRCUITS="sha256b134" scripts/gpu-compact.sh
#   TESTS=0 CIRCUITS="sha256b540 merkle1024d21" FEED_BUDGET=540 scripts/gpu-compact.sh
#   TESTS=0 CLUSTER=1 CIRCUITS=chain22 scripts/gpu-compact.sh   # synthesis hosts first
set -uo pipefail
ROOT=${ROOT:-$PWD}
OUT=${OUT:-$ROOT/gpu-compact-out}
CIRCUITS=${CIRCUITS-sha256b134}
TESTS=${TESTS:-1}
mkdir -p "$OUT"
if [ "$TESTS" = 1 ]; then
  STEPS="kernels conformance" GPU_RUN=${GPU_RUN:-'Compact|TestGroth16|TestOpenNVML'} KT=${KT:-150} KB=1 CT=${CT:-150} \
    BUDGET=${TEST_BUDGET:-200} OUT=/tmp/gpu-compact-run scripts/gpu-run.sh > "$OUT/run.log" 2>&1
  tar czf "$OUT/run1.tgz" -C /tmp gpu-compact-run
fi
if [ "${CLUSTER:-0}" = 1 ]; then
  # What synthesis hosts add (scripts/gpu-cluster.sh), on sha256 b=134's keys.
  OUT=/tmp/gpu-compact-cluster scripts/gpu-cluster.sh > "$OUT/cluster.log" 2>&1
  tar czf "$OUT/cluster.tgz" -C /tmp gpu-compact-cluster
fi
[ -n "$CIRCUITS" ] || { ls -la "$OUT"; exit 0; }
CIRCUITS="$CIRCUITS" SOLVE=${SOLVE:-1} PEER=${PEER:-0} ISOPROVE=0 BUDGET=${FEED_BUDGET:-330} \
  OUT=/tmp/gpu-compact-feed scripts/gpu-feed.sh > "$OUT/feed.log" 2>&1
tar czf "$OUT/feed.tgz" -C /tmp gpu-compact-feed
ls -la "$OUT"
