#!/usr/bin/env bash
# bench-circom.sh: zkhost against snarkjs's own prover on one circom circuit, on the same machine
# and cores. The circuit is a chain of HASHES Poseidon(2) hashes from circomlib (compiled with
# circom2 --O$OPT --prime PRIME: bls12381, or bn128 for BN254), set up with snarkjs on a tau of
# 2^POWER from circomtest's writeptau (snarkjs's own against it: BENCHMARKS.md, "A powers of tau
# for tests"); the timings are `zkhost key import` once, then ROUNDS alternating rounds of one
# `zkhost prove` (one .wtns partition through the daemon's pipeline and BACKEND, by default the
# CPU backend with THREADS threads (0: none given); the prove column of its table, and its wall time) and one
# `snarkjs groth16 prove` (wall time; node uses every core it sees). Every zkhost proof is
# verified by zkhost and by `snarkjs groth16 verify`. BACKLOG=J then benches the daemon under a
# backlog of J jobs of the same .wtns partitions (`zkhost bench` with FILE arguments); ROUNDS=0
# skips the one-proof rounds.
#   HASHES=120 POWER=15 ROUNDS=3 THREADS=2 PRIME=bn128 scripts/bench-circom.sh
# Needs node, npm (the tools are installed into a temporary folder) and Go; or, where there are
# none (the GPU machine: scripts/gpu-circom.sh), what they make: BIN, a folder with zkhost,
# writeptau and the backend, and TOOLS, a folder whose node_modules has circom2, snarkjs and
# circomlib (scripts/circom-pack.sh packs both). OPT=1 compiles with --O1, much faster than
# --O2 (its linear constraints are kept as rows). CONTRIBUTE=0 skips snarkjs's contribution to
# the key, about half the setup's time (the key proves and verifies the same). Both figures:
# BENCHMARKS.md, "Small figures behind the BN254 solver".
set -euo pipefail
cd "$(dirname "$0")/.."
HASHES=${HASHES:-120}
POWER=${POWER:-15}
ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-2}
PRIME=${PRIME:-bls12381}
OPT=${OPT:-2}
work=$(mktemp -d /tmp/zkhost-bench-circom.XXXXXX)
trap 'rm -rf "$work"' EXIT

if [ -z "${BIN:-}" ]; then
	BIN=$work/bin
	go build -o "$BIN/" ./cmd/zkhost ./cmd/zkhost-backend-cpu github.com/zkhost/zkhost/sdk/circom/circomtest/writeptau
fi
if [ -z "${TOOLS:-}" ]; then
	TOOLS=$work/tools
	(mkdir -p "$TOOLS" && cd "$TOOLS" && npm init -y >/dev/null &&
		npm install --no-audit --no-fund circom2@0.2.23 snarkjs@0.7.6 circomlib@2.0.5 >/dev/null)
fi
BACKEND=${BACKEND:-$BIN/zkhost-backend-cpu}
export PATH="$BIN:$TOOLS/node_modules/.bin:$PATH"
# since T0: seconds since the time T0 (date +%s.%N) was taken.
since() { awk -v a="$1" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }'; }
cd "$work"
cp -r "$TOOLS/node_modules/circomlib" .
cat >chain.circom <<EOF
pragma circom 2.0.0;
include "circomlib/circuits/poseidon.circom";
// x_{i+1} = Poseidon(x_i, i): a chain of $HASHES hashes, the last public.
template Chain(n) {
    signal input x;
    signal output y;
    component h[n];
    signal v[n + 1];
    v[0] <== x;
    for (var i = 0; i < n; i++) {
        h[i] = Poseidon(2);
        h[i].inputs[0] <== v[i];
        h[i].inputs[1] <== i;
        v[i + 1] <== h[i].out;
    }
    y <== v[n];
}
component main = Chain($HASHES);
EOF
echo '{"x": "12345"}' >in.json
t0=$(date +%s.%N)
circom2 chain.circom --r1cs --wasm "--O$OPT" --prime "$PRIME" -l . -o . | grep -E 'constraints|wires'
echo "compile (circom2 --O$OPT): $(since "$t0") s"
t0=$(date +%s.%N)
writeptau -curve "$PRIME" -power "$POWER" -out pot.ptau
echo "powers of tau of 2^$POWER (writeptau): $(since "$t0") s"
t0=$(date +%s.%N)
snarkjs groth16 setup chain.r1cs pot.ptau chain_0.zkey >/dev/null
if [ "${CONTRIBUTE:-1}" = 1 ]; then
	snarkjs zkey contribute chain_0.zkey chain.zkey --name=bench -e="bench key" >/dev/null
	rm chain_0.zkey
else
	mv chain_0.zkey chain.zkey # a key with no contribution proves and verifies the same
fi
snarkjs zkey export verificationkey chain.zkey vk.json >/dev/null
echo "setup (snarkjs's key, $([ "${CONTRIBUTE:-1}" = 1 ] && echo "one contribution" || echo "no contribution")): $(since "$t0") s"
rm -f pot.ptau
t0=$(date +%s.%N)
snarkjs wtns calculate chain_js/chain.wasm in.json w.wtns
echo "witness (snarkjs wtns calculate): $(since "$t0") s"

t0=$(date +%s.%N)
zkhost key import --r1cs chain.r1cs --zkey chain.zkey --out keys
echo "zkhost key import: $(since "$t0") s"
threads=(); [ "$THREADS" -gt 0 ] && threads=(--threads "$THREADS")   # 0: a backend's own (the CUDA backend takes none)
for r in $(seq 1 "$ROUNDS"); do
	t0=$(date +%s.%N)
	zkhost prove --keys keys --circuit chain --backend "$BACKEND" "${threads[@]}" --snarkjs --out "z$r" w.wtns | grep -E '^│ +0 '
	echo "round $r: zkhost prove ($(basename "$BACKEND")) wall $(since "$t0") s"
	snarkjs groth16 verify vk.json "z$r/0.public.json" "z$r/0.proof.json" | grep -q OK
	t0=$(date +%s.%N)
	snarkjs groth16 prove chain.zkey w.wtns "s$r.json" "s$r.public.json"
	echo "round $r: snarkjs groth16 prove wall $(since "$t0") s"
done
# The daemon under a backlog of this circuit's .wtns partitions (BACKLOG jobs of BACKLOG_PARTS,
# BACKLOG_CONC at a time; 0: none): steady proofs per minute, device busy and the ratio to the
# isolated device time. The default keeps 128 partitions submitted, as gpu-feed.sh does for
# sha256 (fewer left the daemon with nothing queued: BENCHMARKS.md, "A circomlib circuit of 2^20").
if [ "${BACKLOG:-0}" -gt 0 ]; then
	zkhost bench --keys keys --circuit chain --backend "$BACKEND" "${threads[@]}" --jobs "$BACKLOG" \
		--concurrency "${BACKLOG_CONC:-16}" --partitions "${BACKLOG_PARTS:-8}" --isolated 3 --timeline tl.jsonl w.wtns \
		>backlog.txt 2>backlog.err || { echo "backlog bench failed:" >&2; cat backlog.txt backlog.err >&2; exit 1; }
	grep -E "proofs \(verified\)|steady|isolated|ratio|device busy|utilization|idle, by cause|synthesis" backlog.txt
fi
echo "cores: $(nproc); every zkhost proof verified by zkhost and by snarkjs"
