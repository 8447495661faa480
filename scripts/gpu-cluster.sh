#!/usr/bin/env bash
# gpu-cluster.sh: what synthesis hosts add to a GPU's proving host, on the GPU machine (no Go
# there), from the repository root with bin/gpu/ built by scripts/gpu-build.sh (carry bin/gpu).
# One proving host (`zkhost serve` with the CUDA backend, its cluster's NATS server embedded,
# its own synthesis held to PROVE_CORES cores and the process pinned to them), then the same
# with one and with two synthesis hosts (cluster.role = "synthesize", SYNTH_CORES cores each,
# pinned to cores of their own): processes on one machine, each on its own cores. For each,
# `zkhost bench --config` of the proving host under a backlog of CIRCUIT (proofs/min over the
# run: through the cluster the bench sees no steady window), nvidia-smi sampling utilization.gpu
# every 100 ms beside it, and the synthesis hosts' own count of what they solved.
#   scripts/gpu-cluster.sh                                  # sha256 b=134, keys in $KEYS
#   CIRCUIT=sha256 PARAMS="b=134" KEY=sha256-b134 HOSTS="0 2" scripts/gpu-cluster.sh
# Keys: reused from $KEYS (scripts/gpu-feed.sh's), else made by `zkhost keygen`. Output in $OUT
# (default ./gpu-cluster-out): summary.txt and per run bench-N.txt, smi-N.csv, the hosts' logs.
set -uo pipefail
ROOT=${ROOT:-$PWD}
OUT=${OUT:-$ROOT/gpu-cluster-out}
CIRCUIT=${CIRCUIT:-sha256}
PARAMS=${PARAMS:-b=134}
KEY=${KEY:-sha256-b134}
HOSTS=${HOSTS:-"0 1 2"}      # synthesis hosts per run
PROVE_CORES=${PROVE_CORES:-4}
SYNTH_CORES=${SYNTH_CORES:-6}
JOBS=${JOBS:-30}
PARTS=${PARTS:-8}
CONC=${CONC:-16}
BT=${BT:-150}               # seconds at most per bench
BIN=/tmp/zkhost-gpu
KEYS=${KEYS:-/tmp/zkhost-gpu-keys}
WORK=/tmp/zkhost-cluster
START=$SECONDS
mkdir -p "$OUT" "$BIN" "$KEYS"
log() { echo "== $(date -u +%T) +$((SECONDS-START))s $*" | tee -a "$OUT/summary.txt"; }
for f in "$ROOT"/bin/gpu/zkhost.gz "$ROOT"/bin/gpu/zkhost-backend-cuda.gz; do
  [ -f "$f" ] || { echo "gpu-cluster: $f missing: run scripts/gpu-build.sh where Go is and carry bin/gpu" >&2; exit 2; }
  [ -x "$BIN/$(basename "${f%.gz}")" ] || gunzip -c "$f" > "$BIN/$(basename "${f%.gz}")"
done
chmod +x "$BIN"/*
ZK=$BIN/zkhost
CUDA=${BACKEND:-$BIN/zkhost-backend-cuda}
if [ ! -f "$KEYS/$KEY.pk" ]; then
  args=(); for p in $PARAMS; do args+=(--param "$p"); done
  log "keygen $KEY"
  timeout 400 "$ZK" keygen --circuit "$CIRCUIT" "${args[@]}" --out "$KEYS" > "$OUT/keygen.txt" 2>&1 || { log "keygen failed"; exit 1; }
fi
NCPU=$(nproc)
last=$((PROVE_CORES - 1))
for n in $HOSTS; do
  rm -rf "$WORK"; mkdir -p "$WORK"
  port=$((14222 + n))
  cat > "$WORK/prove.toml" <<EOF
state_dir = "$WORK/p"
[synthesis]
cores = $PROVE_CORES
[[circuit]]
name = "$KEY"
keys = "$KEYS"
[[device]]
backend = "$CUDA"
[cluster]
name = "p0"
embedded = true
listen = "127.0.0.1:$port"
EOF
  mkdir -p "$WORK/p"
  taskset -c "0-$last" "$ZK" serve --config "$WORK/prove.toml" > "$OUT/prove-$n.log" 2>&1 &
  pids=($!)
  for _ in $(seq 1 240); do [ -S "$WORK/p/zkhost.sock" ] && "$ZK" status --config "$WORK/prove.toml" > /dev/null 2>&1 && break; sleep 0.5; done
  for i in $(seq 1 "$n"); do
    lo=$((PROVE_CORES + (i - 1) * SYNTH_CORES)); hi=$((lo + SYNTH_CORES - 1))
    [ "$hi" -ge "$NCPU" ] && { log "not enough cores for synthesis host $i ($lo-$hi of $NCPU)"; break; }
    cat > "$WORK/synth$i.toml" <<EOF
state_dir = "$WORK/s$i"
[[circuit]]
name = "$KEY"
keys = "$KEYS"
[cluster]
name = "s$i"
urls = ["nats://127.0.0.1:$port"]
replicas = 1
role = "synthesize"
EOF
    mkdir -p "$WORK/s$i"
    taskset -c "$lo-$hi" "$ZK" serve --config "$WORK/synth$i.toml" > "$OUT/synth$i-$n.log" 2>&1 &
    pids+=($!)
  done
  # A synthesis host solves on every core it may run on (its taskset), one partition each.
  for i in $(seq 1 "$n"); do
    for _ in $(seq 1 240); do
      grep -q "synthesizing partitions for the proving hosts" "$OUT/synth$i-$n.log" 2>/dev/null && break
      kill -0 "${pids[$i]}" 2>/dev/null || { log "synthesis host $i exited: $(tail -1 "$OUT/synth$i-$n.log")"; break; }
      sleep 0.5
    done
  done
  nvidia-smi --query-gpu=timestamp,index,utilization.gpu --format=csv,noheader,nounits -lms 100 > "$OUT/smi-$n.csv" 2>&1 &
  smi=$!
  log "run with $n synthesis host(s): proving host on cores 0-$last (synthesis cores $PROVE_CORES), synthesis hosts $SYNTH_CORES cores each; $JOBS jobs x $PARTS partitions of $KEY, concurrency $CONC"
  timeout -k 5 "$BT" "$ZK" bench --config "$WORK/prove.toml" --circuit "$CIRCUIT" $(for p in $PARAMS; do echo --param "$p"; done) --name "$KEY" \
    --jobs "$JOBS" --partitions "$PARTS" --concurrency "$CONC" --isolated 0 > "$OUT/bench-$n.txt" 2>&1
  log "bench exit $?"
  kill "$smi" 2>/dev/null; wait "$smi" 2>/dev/null
  grep -E "proofs \(verified\)|wall time|proofs per minute" "$OUT/bench-$n.txt" | tee -a "$OUT/summary.txt"
  awk -F', *' 'NF>=3 && $3 ~ /^[0-9]+$/ { v[n++] = $3 } END { lo=int(n*0.2); hi=int(n*0.8); s=0; k=0
      for (i=lo; i<hi; i++) { s+=v[i]; k++ } if (k == 0) k=1
      printf "nvidia-smi utilization.gpu, 100 ms samples, middle 60%%: %.1f%% (%d of %d samples)\n", s/k, k, n }' \
    "$OUT/smi-$n.csv" | tee -a "$OUT/summary.txt"
  for i in $(seq 1 "$n"); do
    awk -v h="s$i" '/partition synthesized/ { n++; for (f = 1; f <= NF; f++) { if ($f ~ /^constraints=/) { split($f, a, "="); c += a[2] }
        if ($f ~ /^took=/) { split($f, a, "="); t = a[2]; ms = t ~ /ms$/ ? t + 0 : (t ~ /s$/ ? t * 1000 : t); took += ms } } }
      END { if (n) printf "synthesis host %s: %d partitions, %d constraints, solve p-mean %.0f ms each\n", h, n, c, took / n; else printf "synthesis host %s: nothing\n", h }' \
      "$OUT/synth$i-$n.log" | tee -a "$OUT/summary.txt"
  done
  kill "${pids[@]}" 2>/dev/null; wait "${pids[@]}" 2>/dev/null
  pkill -f zkhost-backend-cuda 2>/dev/null; sleep 1
done
log "done"
