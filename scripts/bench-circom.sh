#!/usr/bin/env bash
# bench-circom.sh: zkhost's CPU path against snarkjs's own prover on one circom circuit,
# on the same machine and cores. The circuit is a chain of HASHES Poseidon(2) hashes from
# circomlib (compiled with circom2 --O2 --prime PRIME: bls12381, or bn128 for BN254), set up with
# snarkjs on a tau of 2^POWER from circomtest's writeptau (snarkjs's own against it:
# BENCHMARKS.md, "A powers of tau for tests"); the timings are `zkhost key import` once, then ROUNDS alternating rounds of one
# `zkhost prove` (one .wtns partition through the daemon's pipeline and the CPU backend with
# THREADS threads; the prove column of its table, and its wall time) and one `snarkjs groth16
# prove` (wall time; node uses every core it sees). Every zkhost proof is verified by zkhost
# and by `snarkjs groth16 verify`.
#   HASHES=120 POWER=15 ROUNDS=3 THREADS=2 PRIME=bn128 scripts/bench-circom.sh
# Needs node, npm (the tools are installed into a temporary folder) and Go.
set -euo pipefail
cd "$(dirname "$0")/.."
HASHES=${HASHES:-120}
POWER=${POWER:-15}
ROUNDS=${ROUNDS:-3}
THREADS=${THREADS:-2}
PRIME=${PRIME:-bls12381}
root=$PWD
work=$(mktemp -d /tmp/zkhost-bench-circom.XXXXXX)
trap 'rm -rf "$work"' EXIT

go build -o "$work/bin/" ./cmd/zkhost ./cmd/zkhost-backend-cpu github.com/zkhost/zkhost/sdk/circom/circomtest/writeptau
export PATH="$work/bin:$work/tools/node_modules/.bin:$PATH"
(mkdir -p "$work/tools" && cd "$work/tools" && npm init -y >/dev/null &&
	npm install --no-audit --no-fund circom2@0.2.23 snarkjs@0.7.6 circomlib@2.0.5 >/dev/null)
cd "$work"
cp -r tools/node_modules/circomlib .
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
circom2 chain.circom --r1cs --wasm --O2 --prime "$PRIME" -l . -o . | grep -E 'constraints|wires'
t0=$(date +%s.%N)
writeptau -curve "$PRIME" -power "$POWER" -out pot.ptau
snarkjs groth16 setup chain.r1cs pot.ptau chain_0.zkey >/dev/null
snarkjs zkey contribute chain_0.zkey chain.zkey --name=bench -e="bench key" >/dev/null
snarkjs zkey export verificationkey chain.zkey vk.json >/dev/null
echo "setup (writeptau's tau of 2^$POWER, snarkjs's key and one contribution): $(echo "$(date +%s.%N) - $t0" | bc) s"
snarkjs wtns calculate chain_js/chain.wasm in.json w.wtns

zkhost key import --r1cs chain.r1cs --zkey chain.zkey --out keys
for r in $(seq 1 "$ROUNDS"); do
	t0=$(date +%s.%N)
	zkhost prove --keys keys --circuit chain --threads "$THREADS" --snarkjs --out "z$r" w.wtns | grep -E '^│ +0 '
	echo "round $r: zkhost prove wall $(echo "$(date +%s.%N) - $t0" | bc) s"
	snarkjs groth16 verify vk.json "z$r/0.public.json" "z$r/0.proof.json" | grep -q OK
	t0=$(date +%s.%N)
	snarkjs groth16 prove chain.zkey w.wtns "s$r.json" "s$r.public.json"
	echo "round $r: snarkjs groth16 prove wall $(echo "$(date +%s.%N) - $t0" | bc) s"
done
echo "cores: $(nproc); every zkhost proof verified by zkhost and by snarkjs"
