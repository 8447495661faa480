#!/usr/bin/env bash
# Runs on the GPU machine (no Go there) from the repository root, with bin/gpu/ built by
# scripts/gpu-build.sh: GPU kernel tests (results against gnark-crypto) and benchmarks, the
# sdktest conformance suite against zkhost-backend-cuda, and the full-prove benchmark against
# gnark's groth16.Prove on the same machine's cores, in one run. Each step is time-boxed so the
# whole run fits one device call; logs go to $OUT (default ./gpu-out).
#   STEPS="kernels conformance prove" KS="20" BUDGET=520 scripts/gpu-run.sh
# Which issue pipes share a multiprocessor (IMAD.WIDE, DFMA, ALU), ~1 s:
#   STEPS=pipes scripts/gpu-run.sh
# Development keygen at size, fresh keys, time per phase and peak memory, then
# proofs with those keys through the CUDA backend, each verified by the host with gnark:
#   STEPS="keygen prove" KGKS="22 24" KS="22 24" PARTS=2 PEER_PARTS=1 BUDGET=560 scripts/gpu-run.sh
# Keys larger than device memory: chain 2^$STREAM_K proved one-shot through the CUDA
# backend resident, then with its device memory capped at each of $STREAM_CAPS (the backend
# streams the key's points from pinned host memory); each proof verified; peak device memory
# sampled by nvidia-smi beside each run:
#   STEPS=stream STREAM_K=24 STREAM_CAPS="24GiB 16GiB" scripts/gpu-run.sh
# Where a streamed MSM's chunks spend their time: BenchmarkMSMStream (2^22 points and scalars in
# pinned host memory) in chunks of 2^TR_CHUNKS under window caps TR_CS, G1 and G2, once each, with
# ZKHOST_MSM_TRACE=1 (msm.cu's trace_chunks: each chunk's copy, sort, level 0 and merge levels on
# the device's clock, then their sums; the whole log in msmtrace.txt), ~1 minute:
#   STEPS=msmtrace TR_CHUNKS="16 18" TR_CS="15" scripts/gpu-run.sh
# The witness-aware MSM with and without (sha256 b=BS_B, chain 2^BS_K, ~3 minutes):
#   STEPS=binsplit BUDGET=200 scripts/gpu-run.sh
# sppark beside our kernels in one step (the kernels' peers): BenchmarkNTT then sppark's nttbench at
# PEER_NTT_LOGS, BenchmarkMSMG1 then sppark's msmbench at PEER_MSM_LOGS (empty: none). The peers are
# prebuilt: `mkdir -p bin/peers && cp ../shared/peers/{msmbench,nttbench,points16.bin,msmbench-bn254,nttbench-bn254,points16-bn254.bin} bin/peers/` (not its .go file: bin/ is inside the module) here, and carry bin/peers:
#   STEPS=peers PEER_NTT_LOGS="20 22 24 25 26" PEER_MSM_LOGS="20 22 24" BUDGET=200 scripts/gpu-run.sh
# BN254 beside sppark's: the NTT (BenchmarkBN254NTT, nttbench-bn254, both at PEER_NTT_LOGS) and
# the G1 MSM (BenchmarkBN254MSMG1, msmbench-bn254, 2^16 to 2^26):
#   STEPS=peers PEER_CURVE=bn254 PEER_NTT_LOGS="20 22 24 25 26" PEER_MSM_LOGS="16 18 20 22 24 26" BUDGET=300 scripts/gpu-run.sh
# Isolated device time per proof (ns per constraint) with a resident key's precomputed
# copies (the default) and without (-msm-precompute=0), chain 2^k for k in ISO_KS:
# `zkhost bench` proves two partitions, then ISO_N single proofs one at a time on the warm daemon,
# every proof verified:
#   STEPS=isoprove ISO_KS="20 22 24" ISO_N=5 BUDGET=300 scripts/gpu-run.sh
# Host memory per partition in flight: chain 2^$HM_K through the daemon and the CUDA
# backend at HM_DEPTHS partitions in flight (each depth d: d synthesis workers, d in flight on the
# device, jobs of d partitions), memory sampled every 100 ms by `zkhost bench` (this process, the
# backend, the machine, the budget); the difference between depths is the cost of one more:
#   STEPS=hostmem HM_K=24 HM_DEPTHS="1 4" BUDGET=300 scripts/gpu-run.sh
# The MSM over precomputed bases (tests, then d=1 against the best depth,
# pageable and pinned scalars, G1 and G2 at 2^20/22/24; ~5 minutes):
#   STEPS=msmpre BUDGET=560 scripts/gpu-run.sh
# The G1 MSM's upload in pieces against whole (ZK_BENCH_MSM_PIECES: piece counts; the test binary
# reads it):
#   STEPS=msmpre MP_RUN='^$' MP_BENCH='MSMPrecompute/G1/.*/best/pinned/' ZK_BENCH_MSM_LOGS="22 24 26" \
#     ZK_BENCH_MSM_PIECES="1 2 4" scripts/gpu-run.sh
# The full prove with and without a key's precomputed copies (chain 2^22, ~4 minutes with keygen):
#   STEPS=msmpreprove BUDGET=560 scripts/gpu-run.sh
set -uo pipefail
ROOT=${ROOT:-$PWD}  # the repository root (run from there)
OUT=${OUT:-$ROOT/gpu-out}
STEPS=${STEPS:-"kernels conformance prove"}
KS=${KS:-"20"}
BUDGET=${BUDGET:-520}   # seconds for the whole run
BIN=${BIN:-/tmp/zkhost-gpu}   # where the binaries are unpacked
KEYS=${KEYS:-/tmp/zkhost-gpu-keys}
START=$SECONDS
mkdir -p "$OUT" "$BIN" "$KEYS"
for f in "$ROOT"/bin/gpu/*.gz; do gunzip -c "$f" > "$BIN/$(basename "${f%.gz}")"; done
chmod +x "$BIN"/*
# The arithmetic probes (the G1 mixed addition and the Fq product with no memory
# traffic, checked against gnark-crypto: the ceiling of the MSM's accumulation, ~15 s):
#   STEPS=kernels GPU_RUN=Probe GPU_BENCH=Probe GPU_BENCHTIME=5x KB=60 scripts/gpu-run.sh
# Kernel variants side by side (built by scripts/gpu-variants-build.sh into
# bin/gpu/variants): each variant's correctness tests (VAR_RUN) once, then VAR_ROUNDS rounds of
# the benchmark VAR_BENCH over every variant in turn (ABAB, so drift hits all alike):
#   STEPS=variants VAR_BENCH='MSMPrecompute/G1/n=2\^2[24]/best/pinned$' VAR_ROUNDS=2 scripts/gpu-run.sh
# VAR_MAIN=1 adds bin/gpu/gpu.test as variant "main" (build only the other variants then).
log() { echo "== $(date -u +%T) +$((SECONDS-START))s $*" | tee -a "$OUT/summary.txt"; }
left() { echo $((BUDGET - (SECONDS - START))); }
# box SECONDS CMD...: run CMD with at most SECONDS (and never past the budget).
box() { local t=$1; shift; local l; l=$(left); [ "$l" -lt "$t" ] && t=$l; [ "$t" -le 5 ] && { log "skipped (budget): $*"; return 124; }; timeout "$t" "$@"; }
# chain_key K LOG: the chain 2^K development key, made (output appended to LOG) unless it is there.
# backend_with FLAG...: prints the path of a wrapper running zkhost-backend-cuda with FLAGs
# before the host's own (zkhost prove and bench start a backend with flags of their own only).
backend_with() {
  local w; w="$BIN/zkhost-backend-cuda$(printf '%s' "$*" | tr -c 'A-Za-z0-9' '_')"
  printf '#!/bin/sh\nexec %s %s "$@"\n' "$BIN/zkhost-backend-cuda" "$*" > "$w" && chmod +x "$w" && echo "$w"
}
chain_key() {
  [ -f "$KEYS/chain-k$1.pk" ] && return 0
  log "keygen chain k=$1"
  box "${KG:-150}" "$BIN/zkhost" keygen --circuit chain --k "$1" --out "$KEYS" >> "$2" 2>&1
  log "keygen exit $?"
}
# prove_pair ID LOG SUMMARY: circuit ID's partitions through `zkhost prove` and the CUDA backend
# (its summary.json copied to SUMMARY), then through gnark's groth16.Prove peer on this
# machine's cores, each verified; output appended to LOG.
prove_pair() {
  log "prove $1: zkhost-backend-cuda, ${PARTS:-4} partitions"
  box "${PROVE_T:-90}" "$BIN/zkhost" prove --keys "$KEYS" --circuit "$1" --partitions "${PARTS:-4}" --out "/tmp/p-$1" --backend "$BIN/zkhost-backend-cuda" --log-level info >> "$2" 2>&1
  log "cuda exit $?"
  cp "/tmp/p-$1/summary.json" "$3" 2>/dev/null
  log "prove $1: gnark groth16.Prove peer, ${PEER_PARTS:-2} partitions"
  box "${PEER_T:-60}" "$BIN/zkhost" prove --keys "$KEYS" --circuit "$1" --partitions "${PEER_PARTS:-2}" --out "/tmp/g-$1" --gnark-peer >> "$2" 2>&1
  log "gnark exit $?"
}
# id_key ID LOG: the development key of circuit ID (chain-kK or sha256-bB), made unless it is there.
id_key() {
  [ -f "$KEYS/$1.pk" ] && return 0
  local args
  case $1 in
    chain-k*) args="--circuit chain --k ${1#chain-k}" ;;
    sha256-b*) args="--circuit sha256 --param b=${1#sha256-b}" ;;
    *) log "id_key: no keygen for $1"; return 1 ;;
  esac
  log "keygen $1"
  # shellcheck disable=SC2086
  box "${KG:-300}" "$BIN/zkhost" keygen $args --out "$KEYS" >> "$2" 2>&1
  log "keygen exit $?"
}
{ date -u; nproc; grep -m1 'model name' /proc/cpuinfo; nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv; } > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"
export ZK_REQUIRE_GPU=1

for step in $STEPS; do
  case $step in
  kernels)
    log "kernel tests (gpu.test, against gnark-crypto)"
    (cd "$ROOT/cudabackend/gpu" && box "${KT:-150}" "$BIN/gpu.test" -test.v -test.run "${GPU_RUN:-.}" -test.timeout 300s) > "$OUT/kernels.txt" 2>&1
    log "kernel tests exit $?"
    grep -E "^(--- FAIL|FAIL|ok|PASS)" "$OUT/kernels.txt" | head -30
    log "kernel benchmarks"
    (cd "$ROOT/cudabackend/gpu" && box "${KB:-100}" "$BIN/gpu.test" -test.run '^$' -test.bench "${GPU_BENCH:-.}" -test.benchtime "${GPU_BENCHTIME:-3x}" -test.timeout 300s) >> "$OUT/kernels.txt" 2>&1
    log "kernel benchmarks exit $?"
    grep -E "^Benchmark" "$OUT/kernels.txt" | head -40 ;;
  msmtrace)
    log "msm trace: streamed MSMs, chunks of 2^(${TR_CHUNKS:-16 18}), windows of at most ${TR_CS:-15} bits"
    (cd "$ROOT/cudabackend/gpu" && ZKHOST_MSM_TRACE=1 ZK_BENCH_STREAM_CHUNKS="${TR_CHUNKS:-16 18}" ZK_BENCH_STREAM_CS="${TR_CS:-15}" \
      box "${TRT:-150}" "$BIN/gpu.test" -test.run '^$' -test.bench 'MSMStream' -test.benchtime 1x -test.timeout 300s) > "$OUT/msmtrace.txt" 2>&1
    log "msm trace exit $?"
    grep -E "^Benchmark|msm trace: (group|sums)" "$OUT/msmtrace.txt" | tee -a "$OUT/summary.txt" ;;
  pipes)
    # Which issue pipes share a multiprocessor (cudabackend/csrc/bench/pipes.cu; the FP64
    # products): IMAD.WIDE, DFMA and ALU chains alone and mixed, ~1 s.
    log "pipes"; box 60 "$BIN/pipes" > "$OUT/pipes.txt" 2>&1; log "pipes exit $?"; tee -a "$OUT/summary.txt" < "$OUT/pipes.txt" ;;
  conformance)
    # The backend proves both curves by default: the suite's BN254 check proves through the device.
    log "sdktest conformance against zkhost-backend-cuda"
    ZKHOST_SDKTEST_BACKEND="$BIN/zkhost-backend-cuda" ZKHOST_SDKTEST_KEYDIR="$KEYS" ZKHOST_SDKTEST_CANCEL_K="${CANCEL_K:-16}" \
      box "${CT:-100}" "$BIN/sdktest.test" -test.run TestExternalBackendConforms -test.v -test.timeout 300s > "$OUT/conformance.txt" 2>&1
    log "conformance exit $?"; grep -E "^\s*(--- |ok|FAIL|PASS)" "$OUT/conformance.txt" | tail -30 ;;
  keygen)
    # The key file (9.7 GB at 2^24) is synced before keygen ends: the disk's speed bounds
    # the write phase, so measure it beside keygen.
    log "disk: 2 GiB written and synced into $KEYS"
    dd if=/dev/zero of="$KEYS/.ddtest" bs=1M count=2048 conv=fsync 2>&1 | tail -1 | tee -a "$OUT/summary.txt"
    rm -f "$KEYS/.ddtest"
    for k in ${KGKS:-"22 24"}; do
      rm -f "$KEYS/chain-k$k".{ccs,vk,pk,json}   # time a fresh keygen, not the cache
      log "keygen chain k=$k (fresh; prints compile, setup, write, total and peak memory)"
      box "${KGT:-300}" "$BIN/zkhost" keygen --circuit chain --k "$k" --out "$KEYS" > "$OUT/keygen-k$k.txt" 2>&1
      log "keygen exit $?"
      ls -l "$KEYS"/chain-k"$k".* >> "$OUT/keygen-k$k.txt" 2>&1
      grep -v " INF " "$OUT/keygen-k$k.txt"
    done ;;
  bn254)
    # BN254 through the daemon and the CUDA backend, chain 2^k for
    # k in BN_KS (development keygen), beside gnark's BN254 groth16.Prove on the same cores;
    # the host verifies every proof with gnark:
    #   STEPS=bn254 BN_KS="20 22" BUDGET=560 scripts/gpu-run.sh
    for k in ${BN_KS:-20}; do
      id="chain-k$k-bn254"
      if [ ! -f "$KEYS/$id.pk" ]; then
        log "keygen $id"
        box "${KG:-300}" "$BIN/zkhost" keygen --circuit chain --k "$k" --curve bn254 --out "$KEYS" >> "$OUT/bn254.txt" 2>&1
        log "keygen exit $?"
      fi
      prove_pair "$id" "$OUT/bn254.txt" "$OUT/summary-cuda-bn254-k$k.json"
    done
    tail -40 "$OUT/bn254.txt" ;;
  prove)
    for k in $KS; do
      chain_key "$k" "$OUT/prove.txt"
      prove_pair "chain-k$k" "$OUT/prove.txt" "$OUT/summary-cuda-k$k.json"
    done
    tail -40 "$OUT/prove.txt" ;;
  stream)
    k=${STREAM_K:-24}
    chain_key "$k" "$OUT/stream-keygen.txt"
    for cap in resident ${STREAM_CAPS:-24GiB 16GiB}; do
      c=$cap; [ "$cap" = resident ] && c=
      log "prove chain-k$k, device memory cap: $cap, ${STREAM_PARTS:-2} partitions"
      nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 200 > "$OUT/stream-mem-$cap.txt" 2>/dev/null &
      smi=$!
      ZKHOST_CUDA_DEVICE_MEMORY_CAP="$c" box "${STREAM_T:-80}" "$BIN/zkhost" prove --keys "$KEYS" --circuit "chain-k$k" \
        --partitions "${STREAM_PARTS:-2}" --out "/tmp/s$k-$cap" --backend "$BIN/zkhost-backend-cuda" --log-level info > "$OUT/stream-$cap.txt" 2>&1
      log "cuda exit $? (cap $cap)"
      kill "$smi" 2>/dev/null; wait "$smi" 2>/dev/null
      cp "/tmp/s$k-$cap/summary.json" "$OUT/stream-summary-$cap.json" 2>/dev/null
      grep -o '"key loaded".*\|key loaded.*' "$OUT/stream-$cap.txt" | head -2 | tee -a "$OUT/summary.txt"
      grep -E "^\s*\|?\s*[0-9]+ |verified|proven" "$OUT/stream-$cap.txt" | tail -4 | tee -a "$OUT/summary.txt"
      echo "peak device memory used (MiB, nvidia-smi): $(sort -n "$OUT/stream-mem-$cap.txt" | tail -1)" | tee -a "$OUT/summary.txt"
      rm -rf "/tmp/s$k-$cap"
    done ;;
  memcap)
    # Device memory as a budget: each ID:CAP of MC_CASES proved one-shot through the CUDA
    # backend, MC_PARTS partitions one at a time (-max-in-flight=1: device-busy is per proof,
    # isolated), with the whole device and then under CAP (ZKHOST_CUDA_DEVICE_MEMORY_CAP); the
    # plan the backend chose, device-busy per partition, every proof verified by the host with
    # gnark, peak device memory by nvidia-smi beside each run:
    #   STEPS=memcap MC_CASES="chain-k22:512MiB sha256-b134:512MiB" MC_PARTS=3 scripts/gpu-run.sh
    # MC_FLAGS adds backend flags to every run (MC_FLAGS=-lean-split=true: the lean MSMs over W
    # classified on the host), named in the logs' tags.
    # Its logs go into one archive, $OUT/memcap-HHMMSS.tgz (the device machine returns few files).
    MC=$(mktemp -d)
    for c in ${MC_CASES:-chain-k22:512MiB}; do
      id=${c%%:*}; cap=${c#*:}
      id_key "$id" "$MC/keygen.txt" || continue
      for m in ${MC_MODES:-resident $cap}; do
        cv=$m; [ "$m" = resident ] && cv=
        tag="$id-$m$(printf '%s' "${MC_FLAGS:-}" | tr -c 'A-Za-z0-9' '_')"
        log "memcap: prove $id, device memory: $m, ${MC_PARTS:-3} partitions one at a time"
        nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits -lms 100 > "$MC/mem-$tag.txt" 2>/dev/null &
        smi=$!
        rm -rf "/tmp/mc-$tag"
        ZKHOST_CUDA_DEVICE_MEMORY_CAP="$cv" box "${MC_T:-200}" "$BIN/zkhost" prove --keys "$KEYS" --circuit "$id" \
          --partitions "${MC_PARTS:-3}" --out "/tmp/mc-$tag" --backend "$(backend_with -max-in-flight=1 ${MC_FLAGS:-})" \
          --log-level info > "$MC/$tag.txt" 2>&1
        rc=$?
        kill "$smi" 2>/dev/null; wait "$smi" 2>/dev/null
        # A partition's device_busy_ns follows its backend_wall_ns (its phases' come later).
        busy=$(grep -A1 '"backend_wall_ns"' "/tmp/mc-$tag/summary.json" 2>/dev/null | grep -o '"device_busy_ns": *[0-9]*' | grep -o '[0-9]*$' | awk '{printf "%s%.1f", sep, $1/1e6; sep=" "}')
        ok=$(grep -c '"verified": *true' "/tmp/mc-$tag/summary.json" 2>/dev/null)
        plan=$(grep -o 'plan="[^"]*"\|plan=[^ ]*' "$MC/$tag.txt" | head -1)
        # nvidia-smi counts the CUDA context too: its first level (before any allocation) is told apart.
        log "memcap $id $m ${MC_FLAGS:-}: exit $rc, $plan, device-busy ms per partition: ${busy:-none}, verified ${ok:-0}, peak device memory $(sort -n "$MC/mem-$tag.txt" | tail -1) MiB (context alone $(awk '$1>100{print; exit}' "$MC/mem-$tag.txt") MiB)"
        cp "/tmp/mc-$tag/summary.json" "$MC/summary-$tag.json" 2>/dev/null
        rm -rf "/tmp/mc-$tag"
      done
    done
    tar -czf "$OUT/memcap-$(date -u +%H%M%S).tgz" -C "$MC" . ;;
  binsplit)
    # The witness-aware MSM (W's 0s and 1s kept out of Pippenger), in ~3 minutes: its GPU
    # tests, then one-shot proofs of sha256 (bit-heavy: 99.7% of W is 0 or 1) and chain 2^22
    # (0%: the split's overhead) with the split on and off (-binary-split=false),
    # alternating, then BenchmarkMSMSplitG1 (90%-binary scalars, split against dense).
    BS_B=${BS_B:-33}; BS_K=${BS_K:-22}; BS_PARTS=${BS_PARTS:-3}
    log "binsplit: split MSM and Groth16 tests (gpu.test -run Split)"
    (cd "$ROOT/cudabackend/gpu" && box "${BS_TT:-60}" "$BIN/gpu.test" -test.v -test.run 'Split' -test.timeout 300s) > "$OUT/binsplit-tests.txt" 2>&1
    log "binsplit tests exit $?"; grep -E "^(--- FAIL|FAIL|ok|PASS)|^\s+.*(differs|want)" "$OUT/binsplit-tests.txt" | head -30
    # Keys: reused when there (chain 2^22 from a keygen step, KGKS=22), else made here.
    for c in "sha256 --param b=$BS_B sha256-b$BS_B" "chain --k $BS_K chain-k$BS_K"; do
      read -r name flag val id <<< "$c"
      if [ ! -f "$KEYS/$id.pk" ]; then
        log "binsplit: keygen $id"
        box "${BS_KGT:-120}" "$BIN/zkhost" keygen --circuit "$name" "$flag" "$val" --out "$KEYS" >> "$OUT/binsplit.txt" 2>&1
        log "keygen exit $?"; grep -E "^wrote|took" "$OUT/binsplit.txt" | tail -2
      fi
    done
    for round in 1 2; do
      modes="1 0"; [ "$round" = 2 ] && modes="0 1"
      for id in "sha256-b$BS_B" "chain-k$BS_K"; do
        for split in $modes; do
          on=true; [ "$split" = 0 ] && on=false
          log "binsplit round $round: prove $id, -binary-split=$on, $BS_PARTS partitions"
          rm -rf "/tmp/bs-$id-$split-$round"
          box "${BS_PT:-40}" "$BIN/zkhost" prove --keys "$KEYS" --circuit "$id" --partitions "$BS_PARTS" \
            --out "/tmp/bs-$id-$split-$round" --backend "$(backend_with "-binary-split=$on")" > "$OUT/binsplit-$id-split$split-r$round.txt" 2>&1
          log "exit $?"
          grep -E "^│ +[0-9]+ │|proven" "$OUT/binsplit-$id-split$split-r$round.txt" | tee -a "$OUT/summary.txt"
          cp "/tmp/bs-$id-$split-$round/summary.json" "$OUT/binsplit-$id-split$split-r$round.json" 2>/dev/null
        done
      done
    done
    log "binsplit: BenchmarkMSMSplitG1 (2^20, 2^22; 90% binary; dense against split)"
    (cd "$ROOT/cudabackend/gpu" && box "${BS_BT:-45}" "$BIN/gpu.test" -test.run '^$' -test.bench 'MSMSplitG1' -test.benchtime "${BS_BENCHTIME:-5x}" -test.timeout 300s) > "$OUT/binsplit-bench.txt" 2>&1
    log "bench exit $?"; grep -E "^Benchmark|FAIL" "$OUT/binsplit-bench.txt" | tee -a "$OUT/summary.txt" ;;
  peers)
    # PEER_CURVE=bn254: BN254's NTT and MSM (our BenchmarkBN254NTT and BenchmarkBN254MSMG1 beside
    # sppark's nttbench-bn254 and msmbench-bn254).
    P=$ROOT/bin/peers
    # PEER_NTT_LOGS sizes sppark's NTT runs and BenchmarkBN254NTT (ZK_BENCH_NTT_LOGS); PEER_MSM_LOGS
    # sizes sppark's MSM runs and BenchmarkBN254MSMG1 (ZK_BENCH_MSM_LOGS). BenchmarkNTT and
    # BenchmarkMSMG1 keep their own sizes (2^16 to 2^26, 2^16 to 2^24).
    sfx=; ours='^BenchmarkMSMG1$'; ntt=BenchmarkNTT
    case "${PEER_CURVE:-bls12-381}" in
      bls12-381) ;;
      bn254) sfx=-bn254; ours='^BenchmarkBN254MSMG1$'; ntt=BenchmarkBN254NTT ;;
      *) log "peers: PEER_CURVE=$PEER_CURVE: want bls12-381 or bn254"; continue ;;
    esac
    need="$P/msmbench$sfx $P/points16$sfx.bin $P/nttbench$sfx"
    missing=; for f in $need; do [ -e "$f" ] || missing="$missing $f"; done
    [ -z "$missing" ] || { log "peers: missing$missing (copy ../shared/peers into bin/peers and carry it)"; continue; }
    if [ -n "${PEER_NTT_LOGS-20 22 24 25 26}" ]; then
      log "peers: zkhost $ntt (forward DIF, inverse coset DIF; CUDA events)"
      (cd "$ROOT/cudabackend/gpu" && export ZK_BENCH_NTT_LOGS="${PEER_NTT_LOGS-20 22 24 25 26}" && box "${PN_T:-90}" "$BIN/gpu.test" -test.run '^$' -test.bench "^$ntt\$" -test.benchtime "${PN_BENCHTIME:-20x}" -test.timeout 300s) > "$OUT/peers-ntt$sfx.txt" 2>&1
      log "exit $?"; grep -E "^Benchmark" "$OUT/peers-ntt$sfx.txt" | tee -a "$OUT/summary.txt"
      log "peers: sppark nttbench$sfx ${PEER_NTT_LOGS-20 22 24 25 26}"
      box "${PN_T:-90}" "$P/nttbench$sfx" ${PEER_NTT_LOGS-20 22 24 25 26} >> "$OUT/peers-ntt$sfx.txt" 2>&1
      log "exit $?"; grep -i "sppark" "$OUT/peers-ntt$sfx.txt" | tee -a "$OUT/summary.txt"
    fi
    if [ -n "${PEER_MSM_LOGS-20 22 24}" ]; then
      log "peers: zkhost ${PEER_MSM_BENCH:-$ours}"
      (cd "$ROOT/cudabackend/gpu" && export ZK_BENCH_MSM_LOGS="${PEER_MSM_LOGS-20 22 24}" && box "${PM_T:-120}" "$BIN/gpu.test" -test.run '^$' -test.bench "${PEER_MSM_BENCH:-$ours}" -test.benchtime "${PM_BENCHTIME:-5x}" -test.timeout 300s) > "$OUT/peers-msm$sfx.txt" 2>&1
      log "exit $?"; grep -E "^Benchmark" "$OUT/peers-msm$sfx.txt" | tee -a "$OUT/summary.txt"
      log "peers: sppark msmbench$sfx ${PEER_MSM_LOGS-20 22 24}"
      box "${PM_T:-120}" "$P/msmbench$sfx" "$P/points16$sfx.bin" ${PEER_MSM_LOGS-20 22 24} >> "$OUT/peers-msm$sfx.txt" 2>&1
      log "exit $?"; grep -i "sppark" "$OUT/peers-msm$sfx.txt" | tee -a "$OUT/summary.txt"
    fi ;;
  isoprove)
    for k in ${ISO_KS:-20 22 24}; do
      chain_key "$k" "$OUT/isoprove-keygen.txt"
      for pre in ${ISO_PRE:-on 0}; do
        be="$BIN/zkhost-backend-cuda"; [ "$pre" = on ] || be=$(backend_with -msm-precompute=0)
        log "isoprove: chain-k$k, -msm-precompute=${pre/on/(default)}, ${ISO_N:-5} isolated proofs"
        box "${ISO_T:-90}" "$BIN/zkhost" bench --circuit chain --k "$k" --jobs 1 --partitions 2 --concurrency 1 \
          --isolated "${ISO_N:-5}" --backend "$be" --keys "$KEYS" --log-level info \
          --timeline "$OUT/isoprove-k$k-$pre.jsonl" --json "$OUT/isoprove-k$k-$pre.json" > "$OUT/isoprove-k$k-$pre.txt" 2>&1
        log "bench exit $?"
        grep -o 'key loaded.*' "$OUT/isoprove-k$k-$pre.txt" | head -1 | cut -c1-240 | tee -a "$OUT/summary.txt"
        grep -E "proofs \(verified\)|isolated device time|msm_g1 |msm_g2 |ntt " "$OUT/isoprove-k$k-$pre.txt" | tee -a "$OUT/summary.txt"
      done
    done ;;
  hostmem)
    k=${HM_K:-24}
    chain_key "$k" "$OUT/hostmem-keygen.txt"
    for d in ${HM_DEPTHS:-1 4}; do
      log "hostmem: chain-k$k, $d partition(s) in flight ($d workers, in flight $d, ${HM_JOBS:-2} jobs of $d)"
      box "${HM_T:-100}" "$BIN/zkhost" bench --circuit chain --k "$k" --jobs "${HM_JOBS:-2}" --partitions "$d" --concurrency 1 \
        --workers "$d" --in-flight "$d" --isolated 0 --memory-every 100ms --backend "$BIN/zkhost-backend-cuda" --keys "$KEYS" \
        --timeline "$OUT/hostmem-d$d.jsonl" --json "$OUT/hostmem-d$d.json" > "$OUT/hostmem-d$d.txt" 2>&1
      log "bench exit $?"
      grep -E "proofs \(verified\)|memory|seconds per proof|synthesis|prove " "$OUT/hostmem-d$d.txt" | tee -a "$OUT/summary.txt"
    done ;;
  variants)
    mkdir -p "$BIN/variants"
    vs=()
    for f in "$ROOT"/bin/gpu/variants/gpu-*.test.gz; do
      v=$(basename "${f%.test.gz}"); v=${v#gpu-}; vs+=("$v")
      gunzip -c "$f" > "$BIN/variants/$v.test"; chmod +x "$BIN/variants/$v.test"
    done
    # VAR_MAIN=1: the build's own gpu.test is variant "main" (so a call carries one variant less).
    if [ "${VAR_MAIN:-0}" = 1 ]; then cp "$BIN/gpu.test" "$BIN/variants/main.test"; vs+=(main); fi
    for v in "${vs[@]}"; do
      log "variant $v: tests (${VAR_RUN:-MSM(G1|G2)EdgeCases|MSMPrecompute(G1|G2)EdgeCases})"
      (cd "$ROOT/cudabackend/gpu" && box "${VAR_TT:-60}" "$BIN/variants/$v.test" -test.run "${VAR_RUN:-MSM(G1|G2)EdgeCases|MSMPrecompute(G1|G2)EdgeCases}" -test.timeout 300s) > "$OUT/variant-$v-tests.txt" 2>&1
      log "variant $v tests exit $?"; grep -E "^(--- FAIL|FAIL|ok|PASS)|differs" "$OUT/variant-$v-tests.txt" | head -10 | tee -a "$OUT/summary.txt"
    done
    for r in $(seq 1 "${VAR_ROUNDS:-2}"); do
      for v in "${vs[@]}"; do
        # VAR_BENCH2: a second pattern each round (go's -test.bench splits a pattern at '/', so
        # benchmarks of different depths cannot share one), e.g. VAR_BENCH2=Probe.
        n=0
        for pat in "${VAR_BENCH:-MSMPrecompute/G1}" ${VAR_BENCH2:+"$VAR_BENCH2"}; do
          n=$((n+1)); f="$OUT/variant-$v-bench-$r.txt"; [ $n = 2 ] && f="$OUT/variant-$v-bench2-$r.txt"
          log "variant $v round $r: $pat"
          (cd "$ROOT/cudabackend/gpu" && box "${VAR_BT:-90}" "$BIN/variants/$v.test" -test.run '^$' -test.bench "$pat" -test.benchtime "${VAR_BENCHTIME:-3x}" -test.timeout 300s) > "$f" 2>&1
          log "variant $v bench exit $?"; grep -E "^Benchmark|FAIL" "$f" | sed "s/^/$v: /" | tee -a "$OUT/summary.txt"
        done
      done
    done ;;
  msmpre)
    # The precomputed bases (zk_msm_precompute): their GPU tests against gnark-crypto
    # (edge cases, sizes, the split, G1 and G2), then BenchmarkMSMPrecompute: G1 and G2 at 2^20,
    # 2^22, 2^24 over the bases alone (d=1) and with the copies the cost model picks (best), from
    # pageable and pinned scalars; wall-ms/op is the call's wall time with the upload (~5 minutes).
    log "msmpre: precomputed-bases tests (gpu.test -run 'Precompute|Groth16BinarySplit|Groth16ProofDeviceMemory')"
    (cd "$ROOT/cudabackend/gpu" && box "${MP_TT:-200}" "$BIN/gpu.test" -test.v -test.run "${MP_RUN:-Precompute|Groth16BinarySplit|Groth16ProofDeviceMemory}" -test.timeout 600s) > "$OUT/msmpre-tests.txt" 2>&1
    log "msmpre tests exit $?"; grep -E "^(--- FAIL|FAIL|ok|PASS)|differs|precomputed in|proof device memory" "$OUT/msmpre-tests.txt" | head -40 | tee -a "$OUT/summary.txt"
    log "msmpre: BenchmarkMSMPrecompute (${MP_BENCH:-MSMPrecompute})"
    (cd "$ROOT/cudabackend/gpu" && box "${MP_BT:-360}" "$BIN/gpu.test" -test.run '^$' -test.bench "${MP_BENCH:-MSMPrecompute}" -test.benchtime "${MP_BENCHTIME:-5x}" -test.timeout 600s) > "$OUT/msmpre-bench.txt" 2>&1
    log "bench exit $?"; grep -E "^Benchmark|FAIL|differs" "$OUT/msmpre-bench.txt" | tee -a "$OUT/summary.txt" ;;
  msmpreprove)
    # The full prove with a resident key's precomputed copies (the default) and without
    # (-msm-precompute=0), chain 2^MP_K, two rounds in alternating order; each proof
    # verified by the host with gnark. Keys reused when there (KEYS), else made here.
    k=${MP_K:-22}
    KG=${MP_KGT:-150} chain_key "$k" "$OUT/msmpreprove-keygen.txt"
    for round in 1 2; do
      modes="on 0"; [ "$round" = 2 ] && modes="0 on"
      for pre in $modes; do
        log "msmpreprove round $round: prove chain-k$k, -msm-precompute=${pre/on/(default)}, ${MP_PARTS:-3} partitions"
        rm -rf "/tmp/mp-$k-$pre-$round"
        be="$BIN/zkhost-backend-cuda"; [ "$pre" = on ] || be=$(backend_with -msm-precompute=0)
        box "${MP_PT:-90}" "$BIN/zkhost" prove --keys "$KEYS" --circuit "chain-k$k" --partitions "${MP_PARTS:-3}" \
          --out "/tmp/mp-$k-$pre-$round" --backend "$be" --log-level info > "$OUT/msmpreprove-$pre-r$round.txt" 2>&1
        log "exit $?"
        grep -o 'key loaded.*plan[^,]*' "$OUT/msmpreprove-$pre-r$round.txt" | head -1 | cut -c1-200 | tee -a "$OUT/summary.txt"
        grep -E "^│ +[0-9]+ │|proven|verified" "$OUT/msmpreprove-$pre-r$round.txt" | tail -5 | tee -a "$OUT/summary.txt"
        cp "/tmp/mp-$k-$pre-$round/summary.json" "$OUT/msmpreprove-$pre-r$round.json" 2>/dev/null
      done
    done ;;
  evaluate)
    # CPU only: A and B from a wire assignment (circuit.Evaluate) against gnark's Solve, 2^16
    # and 2^20, one thread and every core. Not in the default STEPS: STEPS=evaluate.
    log "wire assignment evaluation against gnark's Solve (circuit.test)"
    box "${ET:-120}" "$BIN/circuit.test" -test.run '^$' -test.bench BenchmarkEvaluate -test.benchtime "${EVAL_BENCHTIME:-5x}" -test.benchmem > "$OUT/evaluate.txt" 2>&1
    log "evaluate exit $?"; grep -E "^Benchmark" "$OUT/evaluate.txt" ;;
  esac
done
log "done"
