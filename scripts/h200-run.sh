#!/usr/bin/env bash
# Runs on the GPU machine (no Go there) from the repository root, with bin/h200/ built by
# scripts/h200-build.sh: GPU kernel tests (results against gnark-crypto), the sdktest conformance
# suite against zkhost-backend-cuda, and the full-prove benchmark against gnark's groth16.Prove
# on the same machine's cores, in one run. Logs go to $OUT (default ./h200-out).
#   STEPS="kernels conformance prove" KS="20 22" scripts/h200-run.sh
set -uo pipefail
ROOT=${ROOT:-$PWD}  # the repository root (run from there)
OUT=${OUT:-$ROOT/h200-out}
STEPS=${STEPS:-"kernels conformance prove"}
KS=${KS:-"20 22"}
BIN=/tmp/zkhost-h200
KEYS=${KEYS:-/tmp/zkhost-h200-keys}
mkdir -p "$OUT" "$BIN" "$KEYS"
for f in "$ROOT"/bin/h200/*.gz; do gunzip -c "$f" > "$BIN/$(basename "${f%.gz}")"; done
chmod +x "$BIN"/*
log() { echo "== $(date -u +%T) $*" | tee -a "$OUT/summary.txt"; }
{ date -u; nproc; grep -m1 'model name' /proc/cpuinfo; nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm --format=csv; } > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

for step in $STEPS; do
  case $step in
  kernels)
    log "kernel tests and benchmarks (gpu.test)"
    (cd "$ROOT/cudabackend/gpu" && "$BIN/gpu.test" -test.v -test.run "${GPU_RUN:-.}" -test.bench "${GPU_BENCH:-.}" -test.benchtime "${GPU_BENCHTIME:-5x}" -test.timeout 400s) > "$OUT/kernels.txt" 2>&1
    log "kernels exit $?"; grep -E "^(--- |ok|FAIL|PASS|Benchmark)" "$OUT/kernels.txt" | tail -60 ;;
  conformance)
    log "sdktest conformance against zkhost-backend-cuda"
    ZKHOST_SDKTEST_BACKEND="$BIN/zkhost-backend-cuda" ZKHOST_SDKTEST_KEYDIR="$KEYS" ZKHOST_SDKTEST_CANCEL_K="${CANCEL_K:-18}" \
      "$BIN/sdktest.test" -test.run TestExternalBackendConforms -test.v -test.timeout 300s > "$OUT/conformance.txt" 2>&1
    log "conformance exit $?"; grep -E "^\s*(--- |ok|FAIL|PASS)" "$OUT/conformance.txt" | tail -30 ;;
  prove)
    for k in $KS; do
      [ -f "$KEYS/chain-k$k.pk" ] || { log "keygen chain k=$k"; /usr/bin/time -f "keygen %e s" "$BIN/zkhost" keygen --circuit chain --k "$k" --out "$KEYS" >> "$OUT/prove.txt" 2>&1; }
      log "prove chain-k$k: zkhost-backend-cuda, ${PARTS:-4} partitions"
      "$BIN/zkhost" prove --keys "$KEYS" --circuit "chain-k$k" --partitions "${PARTS:-4}" --out "/tmp/p$k" --backend "$BIN/zkhost-backend-cuda" --state-dir /tmp/zkstate >> "$OUT/prove.txt" 2>&1
      log "cuda exit $?"
      log "prove chain-k$k: gnark groth16.Prove peer, ${PEER_PARTS:-2} partitions"
      "$BIN/zkhost" prove --keys "$KEYS" --circuit "chain-k$k" --partitions "${PEER_PARTS:-2}" --out "/tmp/g$k" --gnark-peer >> "$OUT/prove.txt" 2>&1
      log "gnark exit $?"
      cp "/tmp/p$k/summary.json" "$OUT/summary-cuda-k$k.json" 2>/dev/null
    done
    tail -60 "$OUT/prove.txt" ;;
  esac
done
