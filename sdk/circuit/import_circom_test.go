package circuit

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	bnfr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/groth16"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/circom/circomtest"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/refprover"
)

// circomFile is one of sdk/circom's test files, made with circom2 and snarkjs.
func circomFile(circuit, prime, ext string) string {
	return circomtest.Path(circuit + "_" + prime + ext)
}

func circomFiles(circuit string) CircomFiles { return circomFilesOf(circuit, "bls12381") }

// circomFilesOf are a test circuit's files for prime ("bls12381" or "bn128").
func circomFilesOf(circuit, prime string) CircomFiles {
	return CircomFiles{
		R1CS:    circomFile(circuit, prime, ".r1cs"),
		ZKey:    circomFile(circuit, prime, ".zkey"),
		Witness: circomFile(circuit, prime, ".wtns"),
	}
}

// TestImportCircom imports the circom test circuits of both curves, proves their
// witnesses from the installed key set as the daemon does (the .wtns as a wire
// assignment, A and B evaluated from the constraint system, the CPU prover of the
// key file's curve) and verifies the proofs.
func TestImportCircom(t *testing.T) {
	for _, tc := range []struct {
		circuit, prime string
		curve          sdk.Curve
	}{
		{"multiplier", "bls12381", sdk.CurveBLS12381},
		{"poseidonbits", "bls12381", sdk.CurveBLS12381},
		{"multiplier", "bn128", sdk.CurveBN254},
		{"poseidonbits", "bn128", sdk.CurveBN254},
	} {
		name := tc.circuit + "_" + tc.prime
		t.Run(name, func(t *testing.T) {
			files := circomFilesOf(tc.circuit, tc.prime)
			out := t.TempDir()
			res, err := ImportCircom(context.Background(), files, CircomName(files.R1CS), out)
			if err != nil {
				t.Fatal(err)
			}
			c := res.Circuit
			t.Cleanup(func() { c.Close() })
			if !res.Proved || c.Name != name || c.Curve != tc.curve || c.Meta == nil || c.Meta.Setup != SetupSnarkjs || c.pk.Header().HForm != keyfile.HFormSnarkjs {
				t.Fatalf("imported %s on %s (proved %v), metadata %+v, H form %s", c.Name, c.Curve, res.Proved, c.Meta, c.pk.Header().HForm)
			}
			data, err := os.ReadFile(files.Witness)
			if err != nil {
				t.Fatal(err)
			}
			if err := CheckInput(data, true, c); err != nil {
				t.Fatalf("the .wtns refused as an assignment: %v", err)
			}
			if err := CheckInput(data, false, c); err == nil || !strings.Contains(err.Error(), "--assignment") {
				t.Fatalf("the .wtns as a gnark witness: %v, want a refusal saying --assignment", err)
			}
			if lo, hi := InputSizeRange(c, true); int64(len(data)) < lo || int64(len(data)) > hi {
				t.Fatalf("the .wtns has %d bytes, outside the range [%d, %d] a streamed input is held to", len(data), lo, hi)
			}
			W, A, B := refprover.ScalarMemory(c.NbWires), refprover.ScalarMemory(c.NbConstraints), refprover.ScalarMemory(c.NbConstraints)
			full, err := SynthesizeInputRaw(c, data, 2, W, A, B)
			if err != nil {
				t.Fatal(err)
			}
			prover, err := refprover.NewKeyProver(c.pk)
			if err != nil {
				t.Fatal(err)
			}
			encoded, _, err := prover.Prove(context.Background(), W, A, B, 2)
			if err != nil {
				t.Fatal(err)
			}
			proof := groth16.NewProof(c.VK.CurveID())
			if _, err := proof.ReadFrom(bytes.NewReader(encoded)); err != nil {
				t.Fatal(err)
			}
			pub, err := full.Public()
			if err != nil {
				t.Fatal(err)
			}
			if err := groth16.Verify(proof, c.VK, pub); err != nil {
				t.Fatalf("the proof does not verify: %v", err)
			}
		})
	}
}

// TestImportCircomWrongWitness: a .wtns that breaks a constraint is refused, naming
// the constraint, at import and when a partition is synthesized.
func TestImportCircomWrongWitness(t *testing.T) {
	data, err := os.ReadFile(circomFile("multiplier", "bls12381", ".wtns"))
	if err != nil {
		t.Fatal(err)
	}
	// The last wire is b of c = a·b; the values are little-endian, so the first byte
	// of the last value is its lowest.
	data[len(data)-32]++
	bad := filepath.Join(t.TempDir(), "bad.wtns")
	if err := os.WriteFile(bad, data, 0o644); err != nil {
		t.Fatal(err)
	}
	files := circomFiles("multiplier")
	files.Witness = bad
	out := t.TempDir()
	_, err = ImportCircom(context.Background(), files, "m", out)
	var unsat *UnsatisfiedError
	if !errors.As(err, &unsat) || unsat.Constraint != 0 || !strings.Contains(err.Error(), "constraint 0") {
		t.Fatalf("got %v, want constraint 0 unsatisfied", err)
	}
	if entries, _ := os.ReadDir(out); len(entries) != 0 {
		t.Fatalf("a failed import left %d entries in %s", len(entries), out)
	}
}

// TestImportCircomRefused: files that do not belong together, or that zkhost cannot
// prove, are refused with an error naming what is wrong, and nothing is written.
func TestImportCircomRefused(t *testing.T) {
	mixed := circomFiles("multiplier")
	mixed.ZKey = circomFile("poseidonbits", "bls12381", ".zkey")
	bnKey := circomFiles("multiplier")
	bnKey.ZKey = circomFile("multiplier", "bn128", ".zkey")
	otherWitness := circomFiles("multiplier")
	otherWitness.Witness = circomFile("poseidonbits", "bls12381", ".wtns")
	bnWitness := circomFiles("multiplier")
	bnWitness.Witness = circomFile("multiplier", "bn128", ".wtns")
	notZKey := circomFiles("multiplier")
	notZKey.ZKey = notZKey.R1CS
	cases := []struct {
		name     string
		files    CircomFiles
		mentions []string
	}{
		{"another circuit's key", mixed, []string{"poseidonbits_bls12381.zkey", "multiplier_bls12381.r1cs", "do not belong together", "587 wires"}},
		{"a BN254 key for a BLS12-381 r1cs", bnKey, []string{"multiplier_bn128.zkey", "multiplier_bls12381.r1cs", "do not belong together"}},
		{"another circuit's witness", otherWitness, []string{"poseidonbits_bls12381.wtns", "587 wires"}},
		{"a BN254 witness", bnWitness, []string{"multiplier_bn128.wtns", "a circom witness for BN254, circuit x is BLS12-381"}},
		{"an r1cs given as the key", notZKey, []string{"multiplier_bls12381.r1cs", "wrong magic"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			out := t.TempDir()
			_, err := ImportCircom(context.Background(), tc.files, "x", out)
			if err == nil {
				t.Fatal("accepted")
			}
			for _, m := range tc.mentions {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("%q does not mention %q", err, m)
				}
			}
			if entries, _ := os.ReadDir(out); len(entries) != 0 {
				t.Errorf("a refused import left %d entries in %s", len(entries), out)
			}
		})
	}
	out := t.TempDir()
	files := circomFiles("multiplier")
	files.Witness = ""
	res, err := ImportCircom(context.Background(), files, "m", out)
	if err != nil {
		t.Fatal(err)
	}
	res.Circuit.Close()
	if _, err := ImportCircom(context.Background(), files, "m", out); !errors.Is(err, ErrExists) {
		t.Errorf("a second import of the name: %v, want ErrExists", err)
	}
}

// TestWtnsValueNotCanonical: a .wtns value at or above the curve's prime (the
// prime itself, and 2^256-1) is refused naming its wire, on either curve, when
// the partition is synthesized in full and in compact form.
func TestWtnsValueNotCanonical(t *testing.T) {
	for _, prime := range []string{"bls12381", "bn128"} {
		t.Run(prime, func(t *testing.T) {
			files := circomFilesOf("multiplier", prime)
			res, err := ImportCircom(context.Background(), files, "m", t.TempDir())
			if err != nil {
				t.Fatal(err)
			}
			c := res.Circuit
			t.Cleanup(func() { c.Close() })
			data, err := os.ReadFile(files.Witness)
			if err != nil {
				t.Fatal(err)
			}
			modulus := fr.Modulus()
			if c.Curve == sdk.CurveBN254 {
				modulus = bnfr.Modulus()
			}
			var atModulus [32]byte // little-endian, as a .wtns holds it
			for i, b := range modulus.FillBytes(make([]byte, 32)) {
				atModulus[31-i] = b
			}
			for _, v := range []struct {
				name  string
				bytes [32]byte
			}{
				{"2^256-1", [32]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}},
				{"the modulus", atModulus},
			} {
				copy(data[len(data)-32:], v.bytes[:]) // the last wire's value
				want := fmt.Sprintf("wire %d is not a canonical %s scalar", c.NbWires-1, c.curveTitle())
				W, A, B := make([]byte, 32*c.NbWires), make([]byte, 32*c.NbConstraints), make([]byte, 32*c.NbConstraints)
				if _, err := SynthesizeInputRaw(c, data, 1, W, A, B); err == nil || !strings.Contains(err.Error(), want) {
					t.Errorf("%s: full synthesis: %v; want %q", v.name, err, want)
				}
				words := sdk.CompactWords(uint64(c.NbWires))
				other, bits := make([]uint64, words), make([]uint64, words)
				var cerr error
				if c.Curve == sdk.CurveBN254 {
					_, _, cerr = SynthesizeInputCompact(c, data, 1, make([]bnfr.Element, c.NbWires), other, bits)
				} else {
					_, _, cerr = SynthesizeInputCompact(c, data, 1, make([]fr.Element, c.NbWires), other, bits)
				}
				if cerr == nil || !strings.Contains(cerr.Error(), want) {
					t.Errorf("%s: compact synthesis: %v; want %q", v.name, cerr, want)
				}
			}
		})
	}
}
