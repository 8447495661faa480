#!/usr/bin/env bash
# make.sh: regenerate the circom test files in this folder with the real tools.
#
# The .r1cs files come from the circom 2 compiler (npm circom2 0.2.23, circom as WebAssembly), the
# .wtns files from snarkjs 0.7.6 running the compiled witness generator, and snarkjs checks every
# witness against its r1cs before the files are kept. circomlib 2.0.5 supplies Poseidon and Num2Bits.
# The tools are installed into a temporary folder, never into the repository. Needs node and npm.
#
# Files: <circuit>_<prime>.r1cs and <circuit>_<prime>.wtns for prime bn128 (BN254) and bls12381,
# and <circuit>_<prime>.info.txt, what `snarkjs r1cs info` reports (the tests compare against it).
# Then a Groth16 key per circuit and prime from a small powers of tau that snarkjs makes itself
# (one contribution, prepared for phase 2; one contribution to the circuit's key): the key
# <circuit>_<prime>.zkey, its verifying key <circuit>_<prime>.vk.json, and a proof snarkjs made
# and verified with it, <circuit>_<prime>.proof.json and .public.json.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
tools="$(mktemp -d)"
trap 'rm -rf "$tools"' EXIT

(cd "$tools" && npm init -y >/dev/null &&
	npm install --no-audit --no-fund circom2@0.2.23 snarkjs@0.7.6 circomlib@2.0.5 >/dev/null)
export PATH="$tools/node_modules/.bin:$PATH"

# circom2 runs under WASI with the working folder as its file system, so the sources and circomlib
# are copied next to each other and compiled from there.
build="$tools/build"
mkdir -p "$build"
cp -r "$tools/node_modules/circomlib" "$build/circomlib"
cp "$here"/*.circom "$here"/*.input.json "$build/"
cd "$build"

for circuit in multiplier poseidonbits; do
	for prime in bn128 bls12381; do
		out="$build/$prime"
		mkdir -p "$out"
		circom2 "$circuit.circom" --r1cs --wasm --prime "$prime" -l . -o "$prime" >/dev/null
		snarkjs wtns calculate "$out/${circuit}_js/$circuit.wasm" "$circuit.input.json" "$out/$circuit.wtns"
		snarkjs wtns check "$out/$circuit.r1cs" "$out/$circuit.wtns" >/dev/null
		cp "$out/$circuit.r1cs" "$here/${circuit}_$prime.r1cs"
		cp "$out/$circuit.wtns" "$here/${circuit}_$prime.wtns"
		# snarkjs colours its log lines; the tests read the plain text.
		snarkjs r1cs info "$out/$circuit.r1cs" | sed 's/\x1b\[[0-9;]*m//g' >"$here/${circuit}_$prime.info.txt"
	done
done

# 2^10 is the smallest power that holds poseidonbits (584 constraints and 5 public wires); the
# tau is only for tests, so its entropy is a fixed string.
for prime in bn128 bls12381; do
	out="$build/$prime"
	snarkjs powersoftau new "$prime" 10 "$out/pot_0.ptau" >/dev/null
	snarkjs powersoftau contribute "$out/pot_0.ptau" "$out/pot_1.ptau" --name=test -e="zkhost test tau" >/dev/null
	snarkjs powersoftau prepare phase2 "$out/pot_1.ptau" "$out/pot.ptau" >/dev/null
	for circuit in multiplier poseidonbits; do
		base="$here/${circuit}_$prime"
		snarkjs groth16 setup "$out/$circuit.r1cs" "$out/pot.ptau" "$out/${circuit}_0.zkey" >/dev/null
		snarkjs zkey contribute "$out/${circuit}_0.zkey" "$base.zkey" --name=test -e="zkhost test key" >/dev/null
		snarkjs zkey export verificationkey "$base.zkey" "$base.vk.json" >/dev/null
		snarkjs groth16 prove "$base.zkey" "$base.wtns" "$base.proof.json" "$base.public.json"
		snarkjs groth16 verify "$base.vk.json" "$base.public.json" "$base.proof.json" >/dev/null
	done
done
