#!/usr/bin/env bash
# make soak: the long soak. 1,000 partitions of small circuits (chain-k8 and
# merkle-d4-k2) across jobs of every priority class, on three backend processes (two CPU
# backends and a fault-injecting one that also crashes and lies now and then), with a
# random kill -9 of a backend every few seconds (a share of them a SIGSTOP instead, never
# continued: the host must kill the stopped backend at its prove deadline) and two
# SIGKILLs + restarts of the host; at the first host kill one byte of a stored proof in
# the journal file is flipped.
# At the end the job of that proof must be failed with the reason (a damaged record),
# every other job done, every proof must verify with gnark (in the test and
# through `zkhost verify`), no shared-memory file may be left and no backend orphaned.
# It prints a summary table (crashes, retries, restarts) and keeps it in $REPORT.
#
# Knobs (environment): PARTITIONS (1000), HOST_KILLS (2), KILL_EVERY (3s), SEED (1),
# TIMEOUT (45m), REPORT ($TMPDIR/zkhost-soak-summary.txt), STOP_SHARE (0.25: the share of
# backend faults that are a SIGSTOP).
set -euo pipefail
cd "$(dirname "$0")/.."
PARTITIONS=${PARTITIONS:-1000}
HOST_KILLS=${HOST_KILLS:-2}
KILL_EVERY=${KILL_EVERY:-3s}
SEED=${SEED:-1}
STOP_SHARE=${STOP_SHARE:-0.25}
TIMEOUT=${TIMEOUT:-45m}
REPORT=${REPORT:-${TMPDIR:-/tmp}/zkhost-soak-summary.txt}
mkdir -p "$(dirname "$REPORT")"
rm -f "$REPORT"

echo "== soak: $PARTITIONS partitions, a backend kill -9 or SIGSTOP (share $STOP_SHARE) every ~$KILL_EVERY, $HOST_KILLS host kills, seed $SEED"
start=$(date +%s)
# The test builds the binaries it runs (zkhost, zkhost-backend-cpu, faultbackend).
set +e
go test ./e2e/ -run '^TestSoak$' -count=1 -v -timeout 90m -args \
  -soak -soak.partitions="$PARTITIONS" -soak.host-kills="$HOST_KILLS" \
  -soak.kill-every="$KILL_EVERY" -soak.stop-share="$STOP_SHARE" -soak.seed="$SEED" -soak.timeout="$TIMEOUT" \
  -soak.report="$REPORT" 2>&1 | grep -vE '^\s+[│┌└├]'
status=${PIPESTATUS[0]}
set -e
end=$(date +%s)
if [ -f "$REPORT" ]; then
  echo
  cat "$REPORT"
fi
echo "== soak finished in $((end - start))s with status $status"
exit "$status"
