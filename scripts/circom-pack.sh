#!/usr/bin/env bash
# circom-pack.sh: what scripts/gpu-circom.sh needs on the GPU machine, which has neither node nor
# a network, packed into bin/circom/ (git-ignored; carry it beside bin/gpu): this machine's node
# (xz), circom2, snarkjs and circomlib from the npm registry with their dependencies, less their
# tests (a tar.xz), and circomtest's writeptau (xz). About 30 MB.
set -euo pipefail
cd "$(dirname "$0")/.."
out=bin/circom
rm -rf "$out"; mkdir -p "$out"
work=$(mktemp -d /tmp/zkhost-circom-pack.XXXXXX)
trap 'rm -rf "$work"' EXIT
(cd "$work" && npm init -y >/dev/null &&
	npm install --no-audit --no-fund circom2@0.2.23 snarkjs@0.7.6 circomlib@2.0.5 >/dev/null)
# wasmcurves' tests are 35 of its 36 MB; circomlib's tests and sources of other circuits stay.
rm -rf "$work"/node_modules/wasmcurves/test "$work"/node_modules/circomlib/test
tar -C "$work" -cf - node_modules | xz -T0 -6 >"$out/tools.tar.xz"
xz -T0 -6 -c "$(command -v node)" >"$out/node.xz"
go build -ldflags '-s -w' -o "$work/writeptau" github.com/zkhost/zkhost/sdk/circom/circomtest/writeptau
xz -T0 -6 -c "$work/writeptau" >"$out/writeptau.xz"
du -sh "$out"/*
