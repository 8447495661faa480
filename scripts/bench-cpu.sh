#!/usr/bin/env bash
# make bench-cpu: gnark's groth16.Prove against zkhost's CPU path (synthesis + shared memory +
# CPU backend process through go-plugin + verification) on the same circuits and cores, in one
# run. Keys are generated once into .keys/ (chain 2^16, 2^18 and 2^20: under a minute on 2 cores).
#
# Each round runs, for each size, gnark's benchmark and then zkhost's (and then OLD_BACKEND's,
# when set: another zkhost-backend-cpu binary, for an A/B of a backend change), so machine
# noise hits all sides alike; the summary gives, per size, the median of each side over the
# rounds and the median of the rounds' ratios to gnark, with the load average (uptime) before
# each round and at the end. Knobs: KS (sizes), COUNT (rounds), COUNT_LARGE (rounds for sizes
# of 2^20 and up, whose proofs take half a minute each on 2 cores), BENCHTIME (proofs per
# benchmark after Go's one-proof warm-up; zkhost's whole path includes starting the backend and
# loading the key once per benchmark), OLD_BACKEND and OLD_KS (the sizes it runs at; all by default).
set -euo pipefail
cd "$(dirname "$0")/.."
KEYS=${KEYS:-$PWD/.keys}
KS=${KS:-"16 18 20"}
COUNT=${COUNT:-5}
COUNT_LARGE=${COUNT_LARGE:-3}
BENCHTIME=${BENCHTIME:-2x}
OLD_BACKEND=${OLD_BACKEND:-}
OLD_KS=${OLD_KS:-$KS}

for k in $KS; do
  if [ ! -f "$KEYS/chain-k$k.pk" ]; then
    echo "== keygen chain k=$k (development setup, cached in $KEYS)"
    ./bin/zkhost keygen --circuit chain --k "$k" --out "$KEYS"
  fi
done

echo "== $(date -u +%F) $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
go test -c -o bin/oneshot.test ./host/oneshot
# Every result line, tagged with its side, size and round, is kept for the summary and the record.
log=${BENCH_LOG:-$PWD/bin/bench-cpu.log}
: >"$log"

# bench SIDE BENCHMARK BACKEND K ROUND: one benchmark run, its result lines tagged for the summary.
bench() {
  local side=$1 name=$2 backend=$3 k=$4 round=$5
  ZKHOST_BENCH_KEYS="$KEYS" ZKHOST_BENCH_BACKEND="$backend" ZKHOST_BENCH_CIRCUITS="chain-k$k" \
    ./bin/oneshot.test -test.run '^$' -test.bench "^$name\$" -test.benchtime "$BENCHTIME" -test.timeout 60m |
    grep '^Benchmark' | while IFS= read -r line; do
      echo "$line"
      echo "RESULT $side $k $round $line" >>"$log"
    done
}

# rounds K: how many rounds size K gets.
rounds() { if [ "$1" -ge 20 ]; then echo "$COUNT_LARGE"; else echo "$COUNT"; fi; }
maxcount=0
for k in $KS; do
  [ "$(rounds "$k")" -gt "$maxcount" ] && maxcount=$(rounds "$k")
done
for round in $(seq 1 "$maxcount"); do
  echo "== round $round, load average$(uptime | sed 's/.*load average//')" | tee -a "$log"
  for k in $KS; do
    [ "$round" -gt "$(rounds "$k")" ] && continue
    bench gnark BenchmarkGnarkProve "$PWD/bin/zkhost-backend-cpu" "$k" "$round"
    bench zkhost BenchmarkZkhostCPU "$PWD/bin/zkhost-backend-cpu" "$k" "$round"
    if [ -n "$OLD_BACKEND" ] && [[ " $OLD_KS " == *" $k "* ]]; then
      bench old BenchmarkZkhostCPU "$OLD_BACKEND" "$k" "$round"
    fi
  done
done
echo "== end, load average$(uptime | sed 's/.*load average//')" | tee -a "$log"

# Summary: per size, medians over the rounds (ms per proof) and the median of the rounds' ratios.
# zkhost's "whole path" is the benchmark's ns/op, its "prove call" the backend's prove-ms/op.
awk '
function median(list,   a, n, i, j, t) {
  n = split(list, a, " ")
  for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j-1]; a[j-1] = t }
  return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
function add(key, v) { vals[key] = vals[key] " " v }
$1 == "RESULT" {
  side = $2; k = $3; r = $4; ks[k] = 1
  for (i = 5; i <= NF; i++) {
    if ($(i) == "ns/op") whole[side, k, r] = $(i-1) / 1e6
    if ($(i) == "prove-ms/op") call[side, k, r] = $(i-1)
    if ($(i) == "cpu-ms/op") cpu[side, k, r] = $(i-1)
  }
  rounds[k] = r > rounds[k] ? r : rounds[k]
}
END {
  n = split("zkhost old", sides, " ")
  printf "| chain | rounds | gnark groth16.Prove (ms) | side | whole path (ms) | prove call (ms) | ratio whole path | ratio prove call | CPU ms gnark / side | ratio CPU |\n"
  printf "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n"
  for (k = 10; k <= 30; k++) {
    if (!(k in ks)) continue
    for (s = 1; s <= n; s++) {
      side = sides[s]; g = w = c = rw = rc = gc = sc = rcpu = ""
      for (r = 1; r <= rounds[k]; r++) {
        if (!((side, k, r) in whole) || !(("gnark", k, r) in whole)) continue
        g = g " " whole["gnark", k, r]; w = w " " whole[side, k, r]; c = c " " call[side, k, r]
        rw = rw " " whole[side, k, r] / whole["gnark", k, r]; rc = rc " " call[side, k, r] / whole["gnark", k, r]
        gc = gc " " cpu["gnark", k, r]; sc = sc " " cpu[side, k, r]; rcpu = rcpu " " cpu[side, k, r] / cpu["gnark", k, r]
      }
      if (w == "") continue
      printf "| 2^%d | %d | %.0f | %s | %.0f | %.0f | %.3f | %.3f | %.0f / %.0f | %.3f |\n", k, split(w, tmp, " "), median(g), side, median(w), median(c), median(rw), median(rc), median(gc), median(sc), median(rcpu)
    }
  }
}' "$log"
echo "per-round figures above and in $log; ratios are the medians of each round's ratio to the gnark run just before it;"
echo "CPU: user+system time per proof, gnark's process (solve included) and zkhost's whole path (host, backend, workers)"
