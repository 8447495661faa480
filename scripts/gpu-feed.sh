#!/usr/bin/env bash
# gpu-feed.sh: how well the daemon feeds the GPU, in one command on the GPU machine (no Go
# there), from the repository root, with bin/gpu/ built here by scripts/gpu-build.sh. For each
# of chain 2^20, chain 2^22 and merkle it runs, time-boxed:
#   1. keygen (reused when the keys are in $KEYS already),
#   2. the isolated prove: one-shot `zkhost prove` of a few partitions with the CUDA backend,
#   3. `zkhost bench` under a backlog with the CUDA backend: steady-state proofs/min, NVML
#      utilization sampled by zkhost (10 Hz), timeline busy %, the isolated device time per proof
#      (single proofs after the run) and the ratio to the rate it allows; its timeline and JSON,
#   4. nvidia-smi sampling utilization.gpu every 100 ms beside the bench, as a cross-check,
#   5. gnark's groth16.Prove on the same machine's cores, per proof (`zkhost prove --gnark-peer`),
#   6. the waterfall page of the bench's timeline (`zkhost timeline`).
# Everything goes to $OUT (default ./gpu-feed-out): summary.txt (the figures, one block per
# circuit), machine.txt, and per circuit bench-*.txt/json, timeline-*.jsonl, waterfall-*.html,
# smi-*.csv, prove-*.txt, peer-*.txt. The whole run fits BUDGET seconds (default 530); each
# step has its own box and a step that no longer fits is skipped and logged.
#
# With SOLVE=1, before each bench: gnark's Solve against zkhost's solver (sdk/solve) on the
# circuit's constraint system, one solve on one thread and 16 at once (bin/gpu/solve.test,
# BenchmarkSolveKeySet), in solve-*.txt. Synthesis settings are the daemon's defaults unless
# WORKERS, SYNTH_CORES or SOLVER_THREADS say otherwise: measure what users get.
#
#   scripts/gpu-feed.sh                       # everything
#   CIRCUITS="chain20 chain22" scripts/gpu-feed.sh
#   CIRCUITS="sha256b134 merkle1024d21" SOLVE=1 PEER=0 ISOPROVE=0 scripts/gpu-feed.sh
#   CIRCUITS="chain22-bn254 sha256b134-bn254" PEER=0 scripts/gpu-feed.sh   # the same over BN254
#   WORKERS=12 SYNTH_CORES=12 BUDGET=520 OUT=/tmp/o scripts/gpu-feed.sh
set -uo pipefail
ROOT=${ROOT:-$PWD}
OUT=${OUT:-$ROOT/gpu-feed-out}
BUDGET=${BUDGET:-530}
CIRCUITS=${CIRCUITS:-"chain20 chain22 merkle"}
WORKERS=${WORKERS:-}                # synthesis workers (empty: the daemon's default)
SYNTH_CORES=${SYNTH_CORES:-}        # cores synthesis may use (empty: the daemon's default, 12 of 16)
SOLVER_THREADS=${SOLVER_THREADS:-}  # solver threads per partition (empty: sized by the daemon)
SOLVE=${SOLVE:-0}                   # 1: gnark's Solve against zkhost's solver first (solve.test)
SOLVE_ONLY=${SOLVE_ONLY:-}          # with SOLVE=1: only for these circuits (empty: every one)
BENCH=${BENCH:-1}                   # 0: keys (and with SOLVE=1 the solvers) only, no prove or bench
SYNTH_FLAGS=()
[ -n "$WORKERS" ] && SYNTH_FLAGS+=(--workers "$WORKERS")
[ -n "$SYNTH_CORES" ] && SYNTH_FLAGS+=(--synth-cores "$SYNTH_CORES")
[ -n "$SOLVER_THREADS" ] && SYNTH_FLAGS+=(--solver-threads "$SOLVER_THREADS")
ISOLATED=${ISOLATED:-3}         # single proofs after each bench run
INFLIGHT=${INFLIGHT:-0}         # proofs in flight per device (0: the backend's default)
DEVICES=${DEVICES:-1}           # device counts to bench in turn, e.g. "1 2" (the scaling)
KILL_AFTER=${KILL_AFTER:-}      # seconds: also a bench on every device with the last one's backend killed
PEER=${PEER:-1}                 # 0: no gnark peer (a scaling run compares GPU counts)
ISOPROVE=${ISOPROVE:-1}         # 0: no one-shot isolated prove (the bench measures isolated proofs too)
BIN=/tmp/zkhost-gpu
KEYS=${KEYS:-/tmp/zkhost-gpu-keys}
START=$SECONDS
mkdir -p "$OUT" "$BIN" "$KEYS"
log() { echo "== $(date -u +%T) +$((SECONDS-START))s $*" | tee -a "$OUT/summary.txt"; }
left() { echo $((BUDGET - (SECONDS - START))); }
# box SECONDS CMD...: run CMD with at most SECONDS (and never past the budget); 124 when skipped.
box() {
  local t=$1; shift; local l; l=$(left)
  [ "$l" -lt "$t" ] && t=$l
  [ "$t" -le 5 ] && { log "skipped (budget): $*"; return 124; }
  timeout -k 5 "$t" "$@"
}
for f in "$ROOT"/bin/gpu/zkhost.gz "$ROOT"/bin/gpu/zkhost-backend-cuda.gz; do
  [ -f "$f" ] || { echo "gpu-feed: $f missing: run scripts/gpu-build.sh where Go is and carry bin/gpu" >&2; exit 2; }
  gunzip -c "$f" > "$BIN/$(basename "${f%.gz}")"
done
chmod +x "$BIN"/*
ZK=$BIN/zkhost
MAXDEV=0; for n in $DEVICES; do [ "$n" -gt "$MAXDEV" ] && MAXDEV=$n; done
CUDA=${BACKEND:-$BIN/zkhost-backend-cuda}  # BACKEND=<cpu backend> for a dry run without a GPU
{ date -u; nproc; grep -m1 'model name' /proc/cpuinfo; free -g | head -2
  nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.max.sm --format=csv; } > "$OUT/machine.txt" 2>&1
cat "$OUT/machine.txt"

# NVML first: zkhost's utilization figures depend on it (the kernel tests' TestOpenNVML, when
# bin/gpu has gpu.test).
if [ -f "$ROOT/bin/gpu/gpu.test.gz" ]; then
  gunzip -c "$ROOT/bin/gpu/gpu.test.gz" > "$BIN/gpu.test" && chmod +x "$BIN/gpu.test"
  (cd "$ROOT/cudabackend/gpu" && export ZK_REQUIRE_GPU=1 && box 30 "$BIN/gpu.test" -test.run 'TestOpenNVML|TestNVMLPlaceSamples' -test.v) > "$OUT/nvml-check.txt" 2>&1
  log "NVML check exit $? ($(grep -E '^(ok|PASS|FAIL|--- FAIL)' "$OUT/nvml-check.txt" | tr '\n' ' '))"
  grep -E 'nvml_test.go' "$OUT/nvml-check.txt" | tee -a "$OUT/summary.txt"
fi

# circuit NAME: sets ARGS (zkhost's circuit flags), KEY (the key set's name), the bench's shape
# (JOBS, CONC, PARTS) and the boxes (KG keygen, BT bench) for NAME.
circuit() {
  # NAME-bn254: the same circuit and shape over BN254 (key NAME's key with -bn254).
  if [[ $1 == *-bn254 ]]; then
    circuit "${1%-bn254}" || return 1
    ARGS+=(--curve bn254); KEY=$KEY-bn254; return 0
  fi
  # The shapes of the first feed runs; another chainK (e.g. chain12, for a dry run on a small
  # machine) takes chain20's.
  case $1 in
  chain22) ARGS=(--circuit chain --k 22); KEY=chain-k22; JOBS=${JOBS22:-16}; CONC=6; PARTS=3; KG=200; BT=150 ;;
  chain[0-9]*) local k=${1#chain}
     ARGS=(--circuit chain --k "$k"); KEY=chain-k$k; JOBS=${JOBS20:-40}; CONC=8; PARTS=4; KG=120; BT=${BENCH_T:-120} ;;
  merkle)  ARGS=(--circuit merkle);       KEY=merkle-d16-k4; JOBS=${JOBSM:-40}; CONC=8; PARTS=4; KG=90; BT=100 ;;
  # Bit-heavy: sha256bB, B blocks (134 fill 2^22); the GPU proves one in ~50 ms, so the backlog is long.
  sha256b[0-9]*) local b=${1#sha256b}
     ARGS=(--circuit sha256 --param "b=$b"); KEY=sha256-b$b; JOBS=${JOBSS:-60}; CONC=16; PARTS=8; KG=${KGS:-150}; BT=${BENCH_TS:-150} ;;
  # merkleKdD: K leaves of a depth-D Poseidon2 tree (1024 and 21 fill 2^22).
  merkle[0-9]*d[0-9]*) local k=${1#merkle}; local d=${k#*d}; k=${k%d*}
     ARGS=(--circuit merkle --param "k=$k" --param "d=$d"); KEY=merkle-d$d-k$k; JOBS=${JOBSM:-24}; CONC=12; PARTS=4; KG=${KGM:-150}; BT=${BENCH_TM:-150} ;;
  *) echo "gpu-feed: unknown circuit $1 (chain20, chain22, merkle, chainK, sha256bB, merkleKdD; each also NAME-bn254)" >&2; return 1 ;;
  esac
}

# bench CIRCUIT DEVICES KILL_AFTER: `zkhost bench` of CIRCUIT (circuit() sets its shape) on DEVICES
# GPUs (jobs and concurrency scaled by DEVICES, so that each GPU gets the backlog one gets), with
# nvidia-smi sampling every GPU beside it and the waterfall of its timeline after it; when
# KILL_AFTER is set, the backend of the last device is killed with SIGKILL that many seconds in.
# Files: bench-TAG.{txt,json}, timeline-TAG.jsonl, smi-TAG.csv, waterfall-TAG.html, where TAG is
# CIRCUIT, CIRCUIT-dN on N devices, and CIRCUIT-dN-kill.
bench() {
  local c=$1 n=$2 kill=$3 tag=$1 killer=""
  [ "$n" -gt 1 ] && tag="$tag-d$n"
  [ -n "$kill" ] && tag="$tag-kill"
  nvidia-smi --query-gpu=timestamp,index,utilization.gpu,utilization.memory --format=csv,noheader,nounits -lms 100 \
    > "$OUT/smi-$tag.csv" 2>&1 &
  local smi=$!
  # Host memory in use and each GPU's memory in use, every second (the peaks).
  ( while :; do
      echo "$(date -u +%T) host_used_mib=$(free -m | awk 'NR==2 { print $3 }') gpu_used_mib=$(nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null | paste -sd/)"
      sleep 1
    done ) > "$OUT/mem-$tag.txt" 2>&1 &
  local mem=$!
  log "$tag: bench on $n device(s), in flight ${INFLIGHT/#0/default}, $((JOBS * n)) jobs × $PARTS partitions, concurrency $((CONC * n)), synthesis ${SYNTH_FLAGS[*]:-the daemon defaults}${kill:+, kill -9 of the backend of device $((n - 1)) after ${kill}s}"
  rm -f "$OUT/timeline-$tag.jsonl"
  if [ -n "$kill" ]; then
    ( sleep "$kill"
      for p in $(pgrep -f "$(basename "$CUDA")"); do
        if tr '\0' '\n' < "/proc/$p/environ" 2>/dev/null | grep -qx "ZKHOST_DEVICE_INDEX=$((n - 1))"; then
          kill -9 "$p" && echo "== $(date -u +%T) killed backend pid $p (device $((n - 1)))" >> "$OUT/summary.txt"
        fi
      done ) &
    killer=$!
  fi
  box "$BT" "$ZK" bench "${ARGS[@]}" --jobs "$((JOBS * n))" --concurrency "$((CONC * n))" --partitions "$PARTS" \
    --devices "$n" --in-flight "$INFLIGHT" --backend "$CUDA" --keys "$KEYS" "${SYNTH_FLAGS[@]}" --isolated "$ISOLATED" \
    --timeline "$OUT/timeline-$tag.jsonl" --json "$OUT/bench-$tag.json" --log-level info > "$OUT/bench-$tag.txt" 2>&1
  log "$tag: bench exit $?"
  if [ -n "$killer" ]; then kill "$killer" 2>/dev/null; wait "$killer" 2>/dev/null; fi
  kill "$smi" "$mem" 2>/dev/null; wait "$smi" "$mem" 2>/dev/null
  awk '{ for (i = 2; i <= NF; i++) { split($i, kv, "="); n = split(kv[2], v, "/")
           for (j = 1; j <= n; j++) { k = kv[1]; if (k ~ /^gpu/) k = k "[" j - 1 "]"; if (v[j] + 0 > peak[k]) peak[k] = v[j] + 0 } } }
       END { printf "peak memory in use (1 s samples):"; for (k in peak) printf " %s=%d", k, peak[k]; print "" }' \
    "$OUT/mem-$tag.txt" | tee -a "$OUT/summary.txt"
  grep -E "steady|isolated|ratio|device busy|utilization|proofs per minute|wall time|idle, by cause|proofs, [0-9]+ restarts|synthesis|stage|memory" \
    "$OUT/bench-$tag.txt" | tee -a "$OUT/summary.txt"
  # nvidia-smi's utilization.gpu per GPU over the middle 60% of its samples (the bench's warm-up
  # and drain left out roughly; zkhost's own figure above uses the exact steady window).
  awk -F', *' 'NF>=3 && $3 ~ /^[0-9]+$/ { v[$2, n[$2]++] = $3 } END {
      if (length(n) == 0) print "nvidia-smi: no samples"
      for (g in n) { lo=int(n[g]*0.2); hi=int(n[g]*0.8); s=0; k=0; for (i=lo; i<hi; i++) { s+=v[g, i]; k++ }
        if (k == 0) { k=1 }
        printf "nvidia-smi utilization.gpu, GPU %s, 100 ms samples, middle 60%%: %.1f%% (%d of %d samples)\n", g, s/k, k, n[g] } }' \
    "$OUT/smi-$tag.csv" | tee -a "$OUT/summary.txt"
  if [ -s "$OUT/timeline-$tag.jsonl" ]; then
    box 60 "$ZK" timeline "$OUT/timeline-$tag.jsonl" -o "$OUT/waterfall-$tag.html" --title "zkhost bench $tag (GPU x$n, CUDA backend)" \
      > "$OUT/waterfall-$tag.txt" 2>&1
    log "$tag: waterfall exit $?"
  fi
}

# 1. Keys first, so that the measurements that follow are not cut short by a slow keygen.
for c in $CIRCUITS; do
  circuit "$c" || exit 2
  if [ -f "$KEYS/$KEY.pk" ] && [ -f "$KEYS/$KEY.json" ]; then
    log "$c: keys in $KEYS (reused)"
  else
    log "$c: keygen"
    box "$KG" "$ZK" keygen "${ARGS[@]}" --out "$KEYS" > "$OUT/keygen-$c.txt" 2>&1
    log "$c: keygen exit $?"
  fi
done

for c in $CIRCUITS; do
  circuit "$c"
  [ -f "$KEYS/$KEY.pk" ] || { log "$c: no keys, skipped"; continue; }
  # 1b. The solvers alone on this machine's cores: gnark's Solve and zkhost's.
  # solve.test's BenchmarkSolveKeySet reads BLS12-381 key sets only.
  if [ "$SOLVE" = 1 ] && [[ $c == *-bn254 ]]; then
    log "$c: solver benchmark skipped (BLS12-381 key sets only)"
  elif [ "$SOLVE" = 1 ] && [ -f "$ROOT/bin/gpu/solve.test.gz" ] && { [ -z "$SOLVE_ONLY" ] || [[ " $SOLVE_ONLY " == *" $c "* ]]; }; then
    [ -x "$BIN/solve.test" ] || { gunzip -c "$ROOT/bin/gpu/solve.test.gz" > "$BIN/solve.test" && chmod +x "$BIN/solve.test"; }
    log "$c: gnark Solve against zkhost's solver (one thread; $(nproc) at once)"
    ZKHOST_SOLVE_KEYS="$KEYS/$KEY.ccs" box "${SOLVE_T:-150}" "$BIN/solve.test" -test.run '^$' -test.bench SolveKeySet \
      -test.benchtime "${SOLVE_N:-2}x" -test.v > "$OUT/solve-$c.txt" 2>&1
    log "$c: solve bench exit $?"
    grep -E "^Benchmark|parallel share" "$OUT/solve-$c.txt" | tee -a "$OUT/summary.txt"
  fi
  [ "$BENCH" = 1 ] || continue
  # 2. The isolated prove: one partition at a time through the CUDA backend.
  if [ "$ISOPROVE" = 1 ]; then
  log "$c: isolated prove (zkhost prove, CUDA backend, 3 partitions)"
  rm -rf "/tmp/feed-p-$c"
  box 60 "$ZK" prove --keys "$KEYS" --circuit "$KEY" --partitions 3 --out "/tmp/feed-p-$c" \
    --backend "$CUDA" --log-level info > "$OUT/prove-$c.txt" 2>&1
  log "$c: isolated prove exit $?"
  cp "/tmp/feed-p-$c/summary.json" "$OUT/prove-$c-summary.json" 2>/dev/null
  fi

  # 3, 4 and 6: the bench under a backlog for each device count, nvidia-smi beside it, its waterfall.
  for n in $DEVICES; do bench "$c" "$n" ""; done
  # A GPU lost mid-run. The last device's backend is killed (-9) KILL_AFTER seconds into a
  # bench on every device: its partitions must move to the others, every proof verify, and the
  # backend come back (the bench's "devices (at the end)" row: its restarts and proofs).
  if [ -n "$KILL_AFTER" ]; then bench "$c" "$MAXDEV" "$KILL_AFTER"; fi

  [ "$PEER" = 1 ] || continue
  # 5. The peer: gnark's groth16.Prove on this machine's cores, 2 partitions.
  log "$c: gnark groth16.Prove peer (${PEER_PARTS:-2} partitions)"
  rm -rf "/tmp/feed-g-$c"
  box "${PEER_T:-90}" "$ZK" prove --keys "$KEYS" --circuit "$KEY" --partitions "${PEER_PARTS:-2}" --out "/tmp/feed-g-$c" --gnark-peer \
    > "$OUT/peer-$c.txt" 2>&1
  log "$c: peer exit $?"
  cp "/tmp/feed-g-$c/summary.json" "$OUT/peer-$c-summary.json" 2>/dev/null
  tail -5 "$OUT/peer-$c.txt" | tee -a "$OUT/summary.txt"
done
log "done"
