#!/usr/bin/env bash
# gpu-run.sh: runs on the GPU machine (no Go needed) the test binary that
# scripts/gpu-build.sh built here, bin/gpu/gpu.test: every test of package
# cudabackend/gpu verbosely (a missing GPU fails them: ZK_REQUIRE_GPU=1),
# then its benchmarks (device time from CUDA events, gpu-ms/op).
# Logs go to $OUT (default out/gpu): nvidia-smi.txt, test.log, bench.log,
# summary.txt. Exit status: non-zero when a test failed.
#
# Environment: GPU_TEST_RUN (regexp of tests, default all), GPU_BENCH
# (regexp of benchmarks, default all; "none" skips them), GPU_BENCHTIME
# (default 10x), GPU_TEST_TIMEOUT (default 8m).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$(pwd)
BIN=$ROOT/bin/gpu/gpu.test
OUT=${OUT:-$ROOT/out/gpu}
mkdir -p "$OUT"
if [[ ! -x "$BIN" ]]; then
    echo "gpu-run: $BIN missing: run scripts/gpu-build.sh on a machine with Go and carry bin/gpu" >&2
    exit 2
fi
export ZK_REQUIRE_GPU=1

{ nvidia-smi; nvidia-smi -q | grep -iE 'clocks|MHz' | head -20; } >"$OUT/nvidia-smi.txt" 2>&1 || true
head -n 12 "$OUT/nvidia-smi.txt"

# The package's tests run from its folder, as go test would.
cd "$ROOT/cudabackend/gpu"
"$BIN" -test.v -test.count=1 -test.timeout "${GPU_TEST_TIMEOUT:-8m}" \
    -test.run "${GPU_TEST_RUN:-.}" 2>&1 | tee "$OUT/test.log"
test_rc=${PIPESTATUS[0]}

bench_rc=0
if [[ "${GPU_BENCH:-.}" != none ]]; then
    "$BIN" -test.run '^$' -test.bench "${GPU_BENCH:-.}" -test.benchtime "${GPU_BENCHTIME:-10x}" \
        -test.timeout 8m 2>&1 | tee "$OUT/bench.log"
    bench_rc=${PIPESTATUS[0]}
fi

{
    echo "== tests (exit $test_rc)"
    grep -E '^(--- |FAIL|ok|PASS)' "$OUT/test.log" | grep -v '^    ' || true
    echo "== benchmarks (exit $bench_rc), device time from CUDA events"
    grep -E 'gpu-ms/op|phases:' "$OUT/bench.log" 2>/dev/null || true
} >"$OUT/summary.txt"
cat "$OUT/summary.txt"
[[ $test_rc == 0 && $bench_rc == 0 ]]
