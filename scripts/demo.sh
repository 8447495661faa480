#!/usr/bin/env bash
# make demo: start the zkhost daemon on its embedded default config (one CPU backend
# process, API on a unix socket in the state directory), submit a 4-partition merkle job
# and a critical job through the client, wait for both, print the verified results, stop.
#
# Keys are a development setup, generated once and cached in .keys/.
set -euo pipefail
cd "$(dirname "$0")/.."
KEYS=${KEYS:-.keys}
DEMO=${DEMO:-.demo}
PARTITIONS=${PARTITIONS:-4}

if ! ls "$KEYS"/merkle-*.pk >/dev/null 2>&1; then
  echo "== keygen: merkle (development setup; cached in $KEYS/)"
  ./bin/zkhost keygen --circuit merkle --out "$KEYS"
fi

rm -rf "$DEMO"
export XDG_STATE_HOME="$PWD/$DEMO/state"
STATE="$XDG_STATE_HOME/zkhost"
mkdir -p "$STATE/keys"
# The default config serves every key set found in <state_dir>/keys.
ln "$KEYS"/merkle-* "$STATE/keys/" 2>/dev/null || cp "$KEYS"/merkle-* "$STATE/keys/"

echo "== zkhost serve (embedded default config; log in $DEMO/serve.log)"
./bin/zkhost serve >"$DEMO/serve.log" 2>&1 &
DAEMON=$!
trap 'kill $DAEMON 2>/dev/null || true; wait $DAEMON 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  [ -S "$STATE/zkhost.sock" ] && break
  if ! kill -0 $DAEMON 2>/dev/null; then cat "$DEMO/serve.log"; exit 1; fi
  sleep 0.1
done

./bin/zkhost witness --circuit merkle --partitions "$PARTITIONS" --out "$DEMO/batch"
./bin/zkhost witness --circuit merkle --partitions 1 --seed 7 --out "$DEMO/urgent"

echo "== submit: a $PARTITIONS-partition merkle job (normal), then a critical job"
BATCH=$(./bin/zkhost submit --circuit merkle --request-id demo-batch "$DEMO"/batch/*.wtns | tail -n 1)
./bin/zkhost submit --circuit merkle --priority critical --request-id demo-urgent --wait --out "$DEMO/urgent-proofs" "$DEMO"/urgent/*.wtns
echo "== wait: the batch job"
./bin/zkhost wait --out "$DEMO/batch-proofs" "$BATCH"

echo "== status"
./bin/zkhost status
./bin/zkhost jobs
echo "== verified proofs written"
ls "$DEMO/urgent-proofs" "$DEMO/batch-proofs"
