package main

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math/big"
	"math/bits"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"

	"github.com/zkhost/zkhost/sdk/circom"
	"github.com/zkhost/zkhost/sdk/circom/circomtest"
)

// sha256Circuit is circomlib's SHA-256 of a 64-bit number, one 512-bit block (the
// message, its padding bit and its 64-bit length fit in one), about 30,000
// constraints: a domain of 2^15. The digest is public as two 128-bit halves, so the
// test can check it against Go's.
const sha256Circuit = `pragma circom 2.0.0;

include "circomlib/circuits/bitify.circom";
include "circomlib/circuits/sha256/sha256.circom";

template Main() {
    signal input in;
    signal output hi;
    signal output lo;

    component bits = Num2Bits(64);
    bits.in <== in;
    // Sha256 takes the message's bits most significant first; Num2Bits gives the
    // least significant first.
    component h = Sha256(64);
    for (var i = 0; i < 64; i++) {
        h.in[i] <== bits.out[63 - i];
    }
    component high = Bits2Num(128);
    component low = Bits2Num(128);
    for (var i = 0; i < 128; i++) {
        high.in[i] <== h.out[127 - i];
        low.in[i] <== h.out[255 - i];
    }
    hi <== high.out;
    lo <== low.out;
}

component main = Main();
`

// poseidonCircuit is docs/circom.md's circuit: the Poseidon hash of a secret and a
// salt, the hash public.
const poseidonCircuit = `pragma circom 2.0.0;

include "circomlib/circuits/poseidon.circom";

template Main() {
    signal input secret;
    signal input salt;
    signal output hash;

    component h = Poseidon(2);
    h.inputs[0] <== secret;
    h.inputs[1] <== salt;
    hash <== h.out;
}

component main = Main();
`

// TestCircomlibProve is the whole circom path on circomlib's circuits, from source to
// proofs snarkjs accepts: circom2 compiles the circuit, snarkjs computes two
// witnesses and sets up a key (with one contribution) from a powers of tau that
// circomtest.WritePtau computes at the smallest power that holds the circuit (far
// faster than snarkjs's own at sha256's 2^15: BENCHMARKS.md, "A powers of tau for tests"), `zkhost key import` imports the key, `zkhost
// prove` proves both witnesses as two partitions through the daemon's pipeline and
// the CPU backend, and `snarkjs groth16 verify` accepts both proofs and refuses one
// whose public values were changed. The tools come from npm when they are not on
// PATH (circomtest.Snarkjs), circomlib always.
//
// A row per circuit and curve.
func TestCircomlibProve(t *testing.T) {
	rows := []struct {
		name   string
		curve  ecc.ID
		source string
		inputs [2]string // one witness's input JSON per partition
		// want returns the public values an input's proof must have (the outputs, then
		// the public inputs, as public.json lists them); nil when the test has no
		// other implementation of the circuit to compute them with.
		want func(input string) []string
	}{
		{"sha256", ecc.BLS12_381, sha256Circuit, [2]string{`{"in": "7"}`, `{"in": "18446744073709551615"}`}, sha256Public},
		{"poseidon", ecc.BLS12_381, poseidonCircuit, [2]string{`{"secret": "7", "salt": "11"}`, `{"secret": "42", "salt": "99"}`}, nil},
		{"sha256", ecc.BN254, sha256Circuit, [2]string{`{"in": "7"}`, `{"in": "18446744073709551615"}`}, sha256Public},
		{"poseidon", ecc.BN254, poseidonCircuit, [2]string{`{"secret": "7", "salt": "11"}`, `{"secret": "42", "salt": "99"}`}, nil},
	}
	backend := buildCPUBackend(t, t.TempDir())
	zkhost := zkhostRunner(t)
	snarkjs := circomtest.Snarkjs(t)
	circom2 := circomtest.Circom2(t)
	circomlib := circomtest.Circomlib(t)

	for _, row := range rows {
		prime, err := circomtest.PrimeName(row.curve)
		if err != nil {
			t.Fatal(err)
		}
		t.Run(row.name+"_"+prime, func(t *testing.T) {
			dir := t.TempDir()
			// Run in dir, failing t on an error.
			tool := func(name string, args ...string) string {
				t.Helper()
				cmd := exec.Command(name, args...)
				cmd.Dir = dir
				out, err := cmd.CombinedOutput()
				if err != nil {
					t.Fatalf("%s %s: %v\n%s", filepath.Base(name), strings.Join(args, " "), err, out)
				}
				return string(out)
			}
			// circom2 runs under WASI and sees only the folder it runs in and those
			// above it, so circomlib's templates are copied in beside the circuit.
			if err := os.CopyFS(filepath.Join(dir, "circomlib", "circuits"), os.DirFS(filepath.Join(circomlib, "circuits"))); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(dir, row.name+".circom"), []byte(row.source), 0o644); err != nil {
				t.Fatal(err)
			}
			tool(circom2, row.name+".circom", "--r1cs", "--wasm", "--prime", prime, "-l", ".", "-o", ".")
			var wtns []string
			for i, input := range row.inputs {
				in := filepath.Join(dir, fmt.Sprintf("in%d.json", i))
				if err := os.WriteFile(in, []byte(input), 0o644); err != nil {
					t.Fatal(err)
				}
				wtns = append(wtns, filepath.Join(dir, fmt.Sprintf("%d.wtns", i)))
				tool(snarkjs, "wtns", "calculate", filepath.Join(row.name+"_js", row.name+".wasm"), in, wtns[i])
			}

			r1cs := filepath.Join(dir, row.name+".r1cs")
			cs, err := circom.ReadR1CS(r1cs)
			if err != nil {
				t.Fatal(err)
			}
			power := bits.Len64(circom.DomainSizeFor(cs) - 1)
			t.Logf("%d constraints, %d public values: a powers of tau of 2^%d", len(cs.Constraints), cs.NumPublic(), power)
			if err := circomtest.WritePtau(filepath.Join(dir, "pot.ptau"), row.curve, power, rand.Reader); err != nil {
				t.Fatal(err)
			}
			entropy := make([]byte, 32)
			if _, err := rand.Read(entropy); err != nil {
				t.Fatal(err)
			}
			tool(snarkjs, "groth16", "setup", r1cs, "pot.ptau", "key_0.zkey")
			tool(snarkjs, "zkey", "contribute", "key_0.zkey", row.name+".zkey", "--name=test", fmt.Sprintf("-e=%x", entropy))
			tool(snarkjs, "zkey", "export", "verificationkey", row.name+".zkey", "vk.json")

			keys := filepath.Join(dir, "keys")
			zkhost("key", "import", "--r1cs", r1cs, "--zkey", filepath.Join(dir, row.name+".zkey"), "--out", keys)
			proofs := filepath.Join(dir, "proofs")
			out := zkhost(append([]string{"prove", "--keys", keys, "--circuit", row.name, "--backend", backend, "--threads", "2",
				"--snarkjs", "--out", proofs}, wtns...)...)
			if !strings.Contains(out, "2 partitions proven and verified") {
				t.Errorf("prove printed %q", out)
			}

			verify := func(public, proof string) (string, error) {
				out, err := exec.Command(snarkjs, "groth16", "verify", filepath.Join(dir, "vk.json"), public, proof).CombinedOutput()
				return string(out), err
			}
			for i, input := range row.inputs {
				public := filepath.Join(proofs, fmt.Sprintf("%d.public.json", i))
				if out, err := verify(public, filepath.Join(proofs, fmt.Sprintf("%d.proof.json", i))); err != nil || !strings.Contains(out, "OK!") {
					t.Errorf("snarkjs refused proof %d: %v\n%s", i, err, out)
				}
				if row.want == nil {
					continue
				}
				if got, want := readPublic(t, public), row.want(input); strings.Join(got, ",") != strings.Join(want, ",") {
					t.Errorf("proof %d of %s has public values %v, want %v", i, input, got, want)
				}
			}

			// The proof of partition 0 with its first public value changed: refused.
			values := readPublic(t, filepath.Join(proofs, "0.public.json"))
			first, ok := new(big.Int).SetString(values[0], 10)
			if !ok {
				t.Fatalf("public value %q is not a decimal number", values[0])
			}
			values[0] = first.Add(first, big.NewInt(1)).String()
			tampered, err := json.Marshal(values)
			if err != nil {
				t.Fatal(err)
			}
			tamperedPath := filepath.Join(dir, "tampered.public.json")
			if err := os.WriteFile(tamperedPath, tampered, 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := verify(tamperedPath, filepath.Join(proofs, "0.proof.json")); err == nil || strings.Contains(out, "OK!") {
				t.Errorf("snarkjs accepted a proof for tampered public values %v: %v\n%s", values, err, out)
			}
		})
	}
}

// readPublic reads a public.json: the public values as decimal strings.
func readPublic(t *testing.T, path string) []string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var values []string
	if err := json.Unmarshal(data, &values); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(values) == 0 {
		t.Fatalf("%s lists no public values", path)
	}
	return values
}

// sha256Public returns sha256Circuit's outputs for an input {"in": N}: the SHA-256
// of N as 8 bytes, big-endian, as two 128-bit numbers.
func sha256Public(input string) []string {
	var in struct{ In string }
	if err := json.Unmarshal([]byte(input), &in); err != nil {
		panic(fmt.Sprintf("sha256 row's input %s: %v", input, err))
	}
	n, ok := new(big.Int).SetString(in.In, 10)
	if !ok || !n.IsUint64() {
		panic(fmt.Sprintf("sha256 row's input %s is not a 64-bit number", input))
	}
	digest := sha256.Sum256(binary.BigEndian.AppendUint64(nil, n.Uint64()))
	return []string{new(big.Int).SetBytes(digest[:16]).String(), new(big.Int).SetBytes(digest[16:]).String()}
}
