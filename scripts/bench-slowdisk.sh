#!/usr/bin/env bash
# The daemon on a disk with slow syncs: `zkhost bench` with strace delaying every fsync and
# fdatasync by DELAY_US microseconds (what a network volume or a busy disk costs), against the
# same bench with no delay, in alternating rounds. BINS lists directories holding zkhost and
# zkhost-backend-cpu, so two builds (say, before and after a change) are compared in one run.
#   BINS="/tmp/old-bin bin" DELAY_US=20000 ROUNDS=2 scripts/bench-slowdisk.sh
# Needs strace (apt-get install strace).
set -euo pipefail
cd "$(dirname "$0")/.."
BINS=${BINS:-bin}
DELAY_US=${DELAY_US:-20000}
ROUNDS=${ROUNDS:-2}
ARGS=${ARGS:-"--circuit chain --k 8 --jobs 8 --concurrency 4 --partitions 8 --devices 2"}
command -v strace >/dev/null || { echo "bench-slowdisk: needs strace (apt-get install strace)" >&2; exit 1; }
tl=$(mktemp -d)
trap 'rm -rf "$tl"' EXIT
for round in $(seq "$ROUNDS"); do
  for delay in "$DELAY_US" 0; do
    for bin in $BINS; do
      echo "== round $round, fsync delay ${delay}us, $bin"
      cmd=("$bin/zkhost" bench $ARGS --backend "$bin/zkhost-backend-cpu" --timeline "$tl/timeline.jsonl")
      if [ "$delay" != 0 ]; then
        cmd=(strace -f --seccomp-bpf -qq -e trace=fdatasync,fsync -e "inject=fdatasync,fsync:delay_exit=$delay" -o /dev/null "${cmd[@]}")
      fi
      "${cmd[@]}" 2>&1 | grep -E "proofs per minute|device busy \(|^│ finalize" || true
    done
  done
done
