#!/usr/bin/env bash
# make demo: generate the merkle circuit's development keys (cached in .keys/), then prove a
# 4-partition job through a real backend process and print the verified result.
set -euo pipefail
cd "$(dirname "$0")/.."
KEYS=${KEYS:-.keys}
OUT=${OUT:-.demo}
PARTITIONS=${PARTITIONS:-4}

if [ ! -f "$KEYS/merkle.pk" ]; then
  echo "== keygen: merkle (development setup, cached in $KEYS/)"
  ./bin/zkhost keygen --circuit merkle --out "$KEYS"
fi
rm -rf "$OUT"
echo "== prove: merkle, $PARTITIONS partitions, CPU backend process"
./bin/zkhost prove --keys "$KEYS" --circuit merkle --partitions "$PARTITIONS" --out "$OUT"
echo "== files"
ls -l "$OUT"
