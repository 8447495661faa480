#!/usr/bin/env bash
# make bench-cpu: gnark's groth16.Prove against zkhost's CPU path (synthesis + shared memory +
# CPU backend process through go-plugin + verification) on the same circuits and cores, in one
# run. Keys are generated once into .keys/ (chain 2^16 and 2^18: a few minutes on 2 cores).
# Benchmarks alternate (-count) so machine noise hits both sides alike.
set -euo pipefail
cd "$(dirname "$0")/.."
KEYS=${KEYS:-$PWD/.keys}
KS=${KS:-"16 18"}
COUNT=${COUNT:-3}
BENCHTIME=${BENCHTIME:-2x}

names=()
for k in $KS; do
  if [ ! -f "$KEYS/chain-k$k.pk" ]; then
    echo "== keygen chain k=$k (development setup, cached in $KEYS)"
    ./bin/zkhost keygen --circuit chain --k "$k" --out "$KEYS"
  fi
  names+=("chain-k$k")
done
circuits=$(IFS=:; echo "${names[*]}")

echo "== $(date -u +%F) $(nproc) cores: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
export ZKHOST_BENCH_KEYS="$KEYS" ZKHOST_BENCH_BACKEND="$PWD/bin/zkhost-backend-cpu" ZKHOST_BENCH_CIRCUITS="$circuits"
go test -c -o bin/oneshot.test ./host/oneshot
for i in $(seq 1 "$COUNT"); do
  ./bin/oneshot.test -test.run '^$' -test.bench 'BenchmarkGnarkProve|BenchmarkZkhostCPU' -test.benchtime "$BENCHTIME" -test.timeout 60m
done
