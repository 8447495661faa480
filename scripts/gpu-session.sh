#!/usr/bin/env bash
# One device call's worth of the GPU checks and measurements, on the GPU machine from the
# repository root (bin/gpu built by scripts/gpu-build.sh): the kernel and slot tests, fresh
# development keys (keygen timing), the conformance suite against the CUDA backend,
# then scripts/gpu-feed.sh (the daemon's feed) for $CIRCUITS. Everything is packed into
# $OUT/session.tgz (the device tool returns few files).
#   CIRCUITS="chain20 chain22" KGKS="20 22" scripts/gpu-session.sh
# RUN_STEPS picks gpu-run.sh's steps (kernels keygen conformance prove stream binsplit msmpre msmpreprove peers isoprove hostmem evaluate pipes variants);
# CIRCUITS="" skips the daemon feed. Keys larger than device memory, in one call:
#   RUN_STEPS="kernels stream" GPU_RUN=TestGroth16 CIRCUITS= STREAM_K=24 STREAM_CAPS="24GiB 16GiB" scripts/gpu-session.sh
# The witness-aware MSM alone (its GPU tests, sha256 and chain 2^22 proved with the split on
# and off, BenchmarkMSMSplitG1; ~3 minutes; FEED_BUDGET=0 skips the feed):
#   RUN_STEPS=binsplit RUN_BUDGET=200 FEED_BUDGET=0 scripts/gpu-session.sh
# The precomputed MSM bases alone (tests and BenchmarkMSMPrecompute, ~5 minutes):
#   RUN_STEPS=msmpre RUN_BUDGET=560 FEED_BUDGET=0 scripts/gpu-session.sh
set -uo pipefail
ROOT=$PWD
DEST=${OUT:-$ROOT/gpu-session-out}
WORK=/tmp/gpu-session
rm -rf "$WORK"; mkdir -p "$WORK/run" "$WORK/feed" "$DEST"
export KEYS=${KEYS:-/tmp/zkhost-gpu-keys}
if [ -n "${RUN_STEPS-kernels keygen conformance}" ]; then
  OUT="$WORK/run" STEPS="${RUN_STEPS-kernels keygen conformance}" KGKS="${KGKS:-20 22}" KGT="${KGT:-150}" \
    KT="${KT:-70}" KB="${KB:-1}" GPU_RUN="${GPU_RUN:-TestGroth16|TestNVML}" CT="${CT:-90}" \
    BUDGET="${RUN_BUDGET:-280}" bash scripts/gpu-run.sh
fi
if [ -n "${CIRCUITS-chain20 chain22}" ] && [ "${FEED_BUDGET:-290}" != 0 ]; then
  OUT="$WORK/feed" CIRCUITS="${CIRCUITS-chain20 chain22}" BUDGET="${FEED_BUDGET:-290}" bash scripts/gpu-feed.sh
fi
# Then, when asked, a larger size: fresh keys and proofs through the CUDA backend.
if [ -n "${LARGE_KS:-}" ]; then
  OUT="$WORK/large" STEPS="keygen prove" KGKS="$LARGE_KS" KS="$LARGE_KS" PARTS="${LARGE_PARTS:-2}" PEER_PARTS="${LARGE_PEER_PARTS:-1}" \
    KGT="${LARGE_KGT:-200}" BUDGET="${LARGE_BUDGET:-260}" bash scripts/gpu-run.sh
fi
tar czf "$DEST/session.tgz" -C "$WORK" .
ls -l "$DEST"
