package circomconv

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/big"
	"os"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	fr_bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bn254"
	fr_bn254 "github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/circom"
	"github.com/zkhost/zkhost/sdk/circom/circomtest"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/refprover"
)

// The test files of sdk/circom, made by its testdata/make.sh with circom2 and snarkjs,
// named by circom's prime ("bls12381", "bn128").
func testdata(circuit, prime, ext string) string {
	return circomtest.Path(circuit + "_" + prime + ext)
}

var circuits = []string{"multiplier", "poseidonbits"}

// primes are the curves the tests run on, as the test files name them.
var primes = map[ecc.ID]string{ecc.BLS12_381: "bls12381", ecc.BN254: "bn128"}

// testedCurve is the package's generic functions instantiated for one curve, for the
// tests that loop over both curves' files.
type testedCurve struct {
	id         ecc.ID
	prime      string
	provingKey func(z *circom.ZKey) error
	assignment func(w *circom.Witness) error
	// binaries returns the proof snarkjs made of circuit and its public values in
	// zkhost's binary encodings, SnarkjsFiles's inputs.
	binaries func(t *testing.T, circuit string) (proof, public []byte)
}

var testedCurves = []testedCurve{
	instantiate[fr_bls12381.Element, *fr_bls12381.Element, bls12381.G1Affine, bls12381.G2Affine](ecc.BLS12_381),
	instantiate[fr_bn254.Element, *fr_bn254.Element, bn254.G1Affine, bn254.G2Affine](ecc.BN254),
}

func instantiate[S any, PS curve.Scalar[S], G1, G2 any](id ecc.ID) testedCurve {
	return testedCurve{
		id:         id,
		prime:      primes[id],
		provingKey: func(z *circom.ZKey) error { _, err := ProvingKey[G1, G2](z); return err },
		assignment: func(w *circom.Witness) error { _, err := Assignment[S, PS](w); return err },
		binaries: func(t *testing.T, circuit string) (proof, public []byte) {
			p, err := ParseProofJSON[G1, G2](readFile(t, testdata(circuit, primes[id], ".proof.json")))
			if err != nil {
				t.Fatal(err)
			}
			values, err := ParsePublicJSON[S, PS](readFile(t, testdata(circuit, primes[id], ".public.json")))
			if err != nil {
				t.Fatal(err)
			}
			return proofBinary(t, p), publicWitness(t, id, values)
		},
	}
}

type files struct {
	zkey *circom.ZKey
	r1cs *circom.R1CS
	wtns *circom.Witness
}

func read(t *testing.T, circuit, prime string) files {
	t.Helper()
	z, err := circom.ReadZKey(testdata(circuit, prime, ".zkey"))
	if err != nil {
		t.Fatal(err)
	}
	r, err := circom.ReadR1CS(testdata(circuit, prime, ".r1cs"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := circom.ReadWitness(testdata(circuit, prime, ".wtns"))
	if err != nil {
		t.Fatal(err)
	}
	return files{z, r, w}
}

func readFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestCurves runs the conversions on both curves' test files.
func TestCurves(t *testing.T) {
	t.Run("bls12381", func(t *testing.T) { testCurve[fr_bls12381.Element](t, curve.BLS12381{}) })
	t.Run("bn128", func(t *testing.T) { testCurve[fr_bn254.Element](t, curve.BN254{}) })
}

// testCurve checks, for each circuit's files on c's curve: the converted verifying
// key against snarkjs's vk.json and snarkjs's own proof; the JSON functions against
// snarkjs's files; and a proof made with the converted proving key, witness and
// constraint system, verified by gnark and written as snarkjs's files.
func testCurve[S any, PS curve.Scalar[S], G1, G1J, G2, G2J any](t *testing.T, c curve.Curve[S, G1, G1J, G2, G2J]) {
	id := c.ID()
	prime := primes[id]
	for _, circuit := range circuits {
		t.Run(circuit, func(t *testing.T) {
			f := read(t, circuit, prime)
			vk, err := VerifyingKey(f.zkey)
			if err != nil {
				t.Fatal(err)
			}
			if vk.CurveID() != id {
				t.Fatalf("the verifying key is gnark's %s one, want %s", vk.CurveID(), id)
			}
			pk, err := ProvingKey[G1, G2](f.zkey)
			if err != nil {
				t.Fatal(err)
			}

			t.Run("vk.json", func(t *testing.T) {
				// snarkjs's export of the same points in decimal: the bytes of the
				// zkey are Montgomery limbs with gnark-crypto's R.
				var exported struct {
					Alpha1 []string   `json:"vk_alpha_1"`
					Beta2  [][]string `json:"vk_beta_2"`
					Delta2 [][]string `json:"vk_delta_2"`
				}
				if err := json.Unmarshal(readFile(t, testdata(circuit, prime, ".vk.json")), &exported); err != nil {
					t.Fatal(err)
				}
				q := id.BaseField()
				for _, p := range []struct {
					name      string
					got, want any
				}{
					{"alpha1", g1JSON(&pk.G1Alpha, q), exported.Alpha1},
					{"beta2", g2JSON(&pk.G2Beta, q), exported.Beta2},
					{"delta2", g2JSON(&pk.G2Delta, q), exported.Delta2},
				} {
					got, _ := json.Marshal(p.got)
					want, _ := json.Marshal(p.want)
					if string(got) != string(want) {
						t.Errorf("%s: converted %s, snarkjs exported %s", p.name, got, want)
					}
				}
			})

			t.Run("snarkjs proof", func(t *testing.T) {
				proofJSON := readFile(t, testdata(circuit, prime, ".proof.json"))
				publicJSON := readFile(t, testdata(circuit, prime, ".public.json"))
				proof, err := ParseProofJSON[G1, G2](proofJSON)
				if err != nil {
					t.Fatal(err)
				}
				public, err := ParsePublicJSON[S, PS](publicJSON)
				if err != nil {
					t.Fatal(err)
				}
				if err := verify(t, id, vk, proof, public); err != nil {
					t.Fatalf("snarkjs's proof does not verify with the converted key: %v", err)
				}
				if got := ProofJSON(proof); string(got) != string(proofJSON) {
					t.Fatalf("ProofJSON differs from snarkjs's proof.json:\n%s\nwant\n%s", got, proofJSON)
				}
				if got := PublicJSON[S, PS](public); string(got) != string(publicJSON) {
					t.Fatalf("PublicJSON differs from snarkjs's public.json:\n%s\nwant\n%s", got, publicJSON)
				}
				// zkhost's binary files of snarkjs's proof give snarkjs's files back.
				gotProof, gotPublic, err := SnarkjsFiles(id, proofBinary(t, proof), publicWitness(t, id, public))
				if err != nil {
					t.Fatal(err)
				}
				if string(gotProof) != string(proofJSON) || string(gotPublic) != string(publicJSON) {
					t.Fatalf("SnarkjsFiles gave\n%s\n%s\nwant snarkjs's\n%s\n%s", gotProof, gotPublic, proofJSON, publicJSON)
				}
				PS(&public[0]).SetUint64(12345)
				if err := verify(t, id, vk, proof, public); err == nil {
					t.Fatal("snarkjs's proof verifies for another public value")
				}
			})

			t.Run("prove", func(t *testing.T) {
				W, err := Assignment[S, PS](f.wtns)
				if err != nil {
					t.Fatal(err)
				}
				sys, err := ConstraintSystem(f.r1cs)
				if err != nil {
					t.Fatal(err)
				}
				if sys.Field().Cmp(id.ScalarField()) != 0 {
					t.Fatalf("the constraint system is over %s, want %s's scalar field", sys.Field(), id)
				}
				// The system's rows are the zkey's: snarkjs's prover and the host's
				// evaluation give the same A and B.
				rows := sys.GetNbConstraints()
				a, b := qapRows[S, PS](t, f.zkey, W, rows)
				sa, sb := evalSystem[S, PS](t, sys, W)
				for i := range a {
					if !PS(&a[i]).Equal(&sa[i]) || !PS(&b[i]).Equal(&sb[i]) {
						t.Fatalf("row %d: the zkey and the constraint system give different A or B", i)
					}
				}
				proof, _, err := refprover.Prove[S, PS](context.Background(), c, pk, W, a, b, 2)
				if err != nil {
					t.Fatal(err)
				}
				public := W[1 : 1+f.zkey.NumPublic]
				if err := verify(t, id, vk, proof, public); err != nil {
					t.Fatalf("the proof does not verify: %v", err)
				}

				proofJSON, publicJSON := ProofJSON(proof), PublicJSON[S, PS](public)
				back, err := ParseProofJSON[G1, G2](proofJSON)
				if err != nil {
					t.Fatal(err)
				}
				if any(*back) != any(*proof) {
					t.Fatal("ParseProofJSON(ProofJSON(p)) is not p")
				}
				backPublic, err := ParsePublicJSON[S, PS](publicJSON)
				if err != nil {
					t.Fatal(err)
				}
				for i := range public {
					if !PS(&backPublic[i]).Equal(&public[i]) {
						t.Fatalf("public.json value %d does not read back", i)
					}
				}
				gotProof, gotPublic, err := SnarkjsFiles(id, proofBinary(t, proof), publicWitness(t, id, public))
				if err != nil {
					t.Fatal(err)
				}
				if string(gotProof) != string(proofJSON) || string(gotPublic) != string(publicJSON) {
					t.Fatalf("SnarkjsFiles gave\n%s\n%s\nwant ProofJSON's and PublicJSON's\n%s\n%s", gotProof, gotPublic, proofJSON, publicJSON)
				}
			})
		})
	}
}

// proofBinary is p in gnark's encoding, as zkhost hands a proof out.
func proofBinary[G1, G2 any](t *testing.T, p *sdk.Proof[G1, G2]) []byte {
	t.Helper()
	b, err := p.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// publicWitness is the public values as gnark's public witness of curve id, as
// zkhost hands it out.
func publicWitness[S any](t *testing.T, id ecc.ID, public []S) []byte {
	t.Helper()
	w := gnarkWitness(t, id, public)
	b, err := w.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func gnarkWitness[S any](t *testing.T, id ecc.ID, public []S) witness.Witness {
	t.Helper()
	w, err := circomtest.PublicWitness(id, public)
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// verify runs gnark's verifier on p, read from its encoding as the host reads it.
func verify[S, G1, G2 any](t *testing.T, id ecc.ID, vk groth16.VerifyingKey, p *sdk.Proof[G1, G2], public []S) error {
	t.Helper()
	gp := groth16.NewProof(id)
	if _, err := gp.ReadFrom(bytes.NewReader(proofBinary(t, p))); err != nil {
		t.Fatal(err)
	}
	return groth16.Verify(gp, vk, gnarkWitness(t, id, public))
}

// qapRows evaluates the QAP's A and B rows from the zkey's coefficients for the wire
// values W, as snarkjs's prover does (groth16_prove.js, buildABC1).
func qapRows[S any, PS curve.Scalar[S]](t *testing.T, z *circom.ZKey, W []S, rows int) (a, b []S) {
	t.Helper()
	a = make([]S, rows)
	b = make([]S, rows)
	for _, c := range z.Coefficients {
		v, err := scalar[S, PS](&c.Value)
		if err != nil {
			t.Fatal(err)
		}
		PS(&v).Mul(&v, &W[c.Signal])
		dst := &a[c.Constraint]
		if c.Matrix == 1 {
			dst = &b[c.Constraint]
		}
		PS(dst).Add(dst, &v)
	}
	return a, b
}

// evalSystem evaluates the L and R of every row of a gnark system for W, as the host
// evaluates A and B.
func evalSystem[S any, PS curve.Scalar[S]](t *testing.T, sys constraint.ConstraintSystem, W []S) (a, b []S) {
	t.Helper()
	a, b, err := circomtest.Rows[S, PS](sys, W)
	if err != nil {
		t.Fatal(err)
	}
	return a, b
}

// TestOtherCurveRefused: a zkey, witness or proof.json of one curve is refused where
// the other is asked for, the error naming both.
func TestOtherCurveRefused(t *testing.T) {
	bls, bn := read(t, "multiplier", "bls12381"), read(t, "multiplier", "bn128")
	blsProof := readFile(t, testdata("multiplier", "bls12381", ".proof.json"))
	bnProof := readFile(t, testdata("multiplier", "bn128", ".proof.json"))
	errs := map[string]error{}
	_, errs["BLS12-381 key of a BN254 zkey"] = ProvingKey[bls12381.G1Affine, bls12381.G2Affine](bn.zkey)
	_, errs["BN254 key of a BLS12-381 zkey"] = ProvingKey[bn254.G1Affine, bn254.G2Affine](bls.zkey)
	_, errs["BLS12-381 assignment of a BN254 witness"] = Assignment[fr_bls12381.Element](bn.wtns)
	_, errs["BN254 assignment of a BLS12-381 witness"] = Assignment[fr_bn254.Element](bls.wtns)
	_, errs["BLS12-381 proof of a BN254 proof.json"] = ParseProofJSON[bls12381.G1Affine, bls12381.G2Affine](bnProof)
	_, errs["BN254 proof of a BLS12-381 proof.json"] = ParseProofJSON[bn254.G1Affine, bn254.G2Affine](blsProof)
	for name, err := range errs {
		if !errors.Is(err, ErrWrongCurve) || !strings.Contains(err.Error(), "BN254") || !strings.Contains(err.Error(), "BLS12-381") {
			t.Errorf("%s: %v, want ErrWrongCurve naming both curves", name, err)
		}
	}

	// Point types of two curves, or a G2 type for G1, are refused, not misread.
	if _, err := ProvingKey[bls12381.G1Affine, bn254.G2Affine](bls.zkey); err == nil {
		t.Error("a key of BLS12-381 G1 and BN254 G2 points accepted")
	}
	if _, err := ParseProofJSON[bn254.G2Affine, bn254.G2Affine](bnProof); err == nil {
		t.Error("a proof of G2 points for G1 accepted")
	}

	// A proof of one curve given as the other's: refused by its size.
	proof, public := testedCurves[0].binaries(t, "multiplier")
	if _, _, err := SnarkjsFiles(ecc.BN254, proof, public); err == nil {
		t.Error("a BLS12-381 proof converted as a BN254 one")
	}
	if _, _, err := SnarkjsFiles(ecc.BW6_761, proof, public); err == nil {
		t.Error("a proof on BW6-761 converted")
	}
}

// TestBadPoints damages points and sizes of real keys of both curves: each must be
// refused, naming what is wrong.
func TestBadPoints(t *testing.T) {
	cases := []struct {
		name    string
		damage  func(z *circom.ZKey)
		mention string
	}{
		{"an A point off the curve", func(z *circom.ZKey) { z.A[z.G1Size+3] ^= 1 }, "A section point 1"},
		{"a B2 point off the curve", func(z *circom.ZKey) { z.B2[z.G2Size*2+7] ^= 1 }, "B2 section point 2"},
		{"an H point off the curve", func(z *circom.ZKey) { z.H[z.G1Size*3] ^= 1 }, "H section point 3"},
		{"a B1 point at infinity alone", func(z *circom.ZKey) { clear(z.B1[z.G1Size*3 : z.G1Size*4]) }, "wire 3's B1 point"},
		{"delta2 off the curve", func(z *circom.ZKey) { z.Delta2[1] ^= 1 }, "delta2 is not"},
		{"alpha1 cut short", func(z *circom.ZKey) { z.Alpha1 = z.Alpha1[:10] }, "alpha1 holds 10 bytes"},
		{"a C section cut mid-point", func(z *circom.ZKey) { z.C = z.C[:len(z.C)-1] }, "C section holds"},
		{"an A point missing", func(z *circom.ZKey) { z.A = z.A[:len(z.A)-z.G1Size] }, "A, "},
		{"an H point missing", func(z *circom.ZKey) { z.H = z.H[:len(z.H)-z.G1Size] }, "g1_z has"},
	}
	for _, tc := range testedCurves {
		prime := tc.prime
		for _, c := range cases {
			t.Run(prime+"/"+c.name, func(t *testing.T) {
				// Each case parses its own copy: the points alias the file's bytes.
				z, err := circom.ParseZKey(readFile(t, testdata("multiplier", prime, ".zkey")))
				if err != nil {
					t.Fatal(err)
				}
				c.damage(z)
				if err := tc.provingKey(z); err == nil || !strings.Contains(err.Error(), c.mention) {
					t.Fatalf("got %v, want an error naming %q", err, c.mention)
				}
			})
		}
		t.Run(prime+"/verifying key", func(t *testing.T) {
			z, err := circom.ParseZKey(readFile(t, testdata("multiplier", prime, ".zkey")))
			if err != nil {
				t.Fatal(err)
			}
			z.Gamma2[5] ^= 1
			if _, err := VerifyingKey(z); err == nil || !strings.Contains(err.Error(), "gamma2") {
				t.Fatalf("got %v, want an error naming gamma2", err)
			}
			z.Gamma2[5] ^= 1
			z.IC = z.IC[:z.G1Size]
			if _, err := VerifyingKey(z); err == nil || !strings.Contains(err.Error(), "IC points") {
				t.Fatalf("got %v, want an error naming the IC points", err)
			}
		})
	}
}

// TestBadConstraintsAndWitness: a term on a wire beyond the system, a coefficient or
// a witness value not below the prime are refused, naming where.
func TestBadConstraintsAndWitness(t *testing.T) {
	for _, tc := range testedCurves {
		t.Run(tc.prime, func(t *testing.T) {
			f := read(t, "multiplier", tc.prime)
			var tooLarge circom.FieldElement
			for i := range tooLarge {
				tooLarge[i] = 0xff
			}
			f.r1cs.Constraints[0].B[0].Wire = f.r1cs.NumWires
			if _, err := ConstraintSystem(f.r1cs); err == nil || !strings.Contains(err.Error(), "constraint 0, B: term 0: wire") {
				t.Errorf("a wire beyond the system: %v", err)
			}
			f.r1cs.Constraints[0].B[0].Wire = 0
			f.r1cs.Constraints[0].C[0].Coefficient = tooLarge
			if _, err := ConstraintSystem(f.r1cs); err == nil || !strings.Contains(err.Error(), "constraint 0, C: term 0") {
				t.Errorf("a coefficient above the prime: %v", err)
			}
			f.wtns.Values[2] = tooLarge
			if err := tc.assignment(f.wtns); err == nil || !strings.Contains(err.Error(), "witness value 2") {
				t.Errorf("a witness value above the prime: %v", err)
			}
		})
	}
}

// TestBadJSON: malformed proof.json and public.json files are refused, and the point
// at infinity, which ProofJSON writes as snarkjs does, reads back.
func TestBadJSON(t *testing.T) {
	good := string(readFile(t, testdata("multiplier", "bn128", ".proof.json")))
	p, err := ParseProofJSON[bn254.G1Affine, bn254.G2Affine]([]byte(good))
	if err != nil {
		t.Fatal(err)
	}
	x := p.Ar.X.String()
	for name, data := range map[string]string{
		"another protocol":       strings.Replace(good, `"groth16"`, `"plonk"`, 1),
		"an unknown curve":       strings.Replace(good, `"bn128"`, `"bn256"`, 1),
		"a point off the curve":  strings.Replace(good, x, new(big.Int).Add(p.Ar.X.BigInt(new(big.Int)), big.NewInt(1)).String(), 1),
		"a coordinate too large": strings.Replace(good, x, strings.Repeat("9", 200), 1),
		"a projective point":     strings.Replace(good, "\"1\"\n ],\n \"pi_b\"", "\"2\"\n ],\n \"pi_b\"", 1),
		"an unknown field":       strings.Replace(good, `"protocol"`, `"extra": 1, "protocol"`, 1),
		"not JSON":               good[:40],
	} {
		if data == good {
			t.Fatalf("%s: the damage changed nothing", name)
		}
		if _, err := ParseProofJSON[bn254.G1Affine, bn254.G2Affine]([]byte(data)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	for name, data := range map[string]string{
		"a value at the prime": `["` + ecc.BN254.ScalarField().String() + `"]`,
		"a negative value":     `["-1"]`,
		"a number":             `[1]`,
	} {
		if _, err := ParsePublicJSON[fr_bn254.Element]([]byte(data)); err == nil {
			t.Errorf("public.json with %s: accepted", name)
		}
	}

	p.Krs = bn254.G1Affine{}
	p.Bs = bn254.G2Affine{}
	back, err := ParseProofJSON[bn254.G1Affine, bn254.G2Affine](ProofJSON(p))
	if err != nil || *back != *p {
		t.Fatalf("a proof with points at infinity: %v", err)
	}
}

// TestBadBinaryFiles: SnarkjsFiles refuses damaged or oversized inputs without
// trusting the counts they hold.
func TestBadBinaryFiles(t *testing.T) {
	for _, tc := range testedCurves {
		t.Run(tc.prime, func(t *testing.T) {
			id := tc.id
			proof, public := tc.binaries(t, "multiplier")
			if want := map[ecc.ID]int{ecc.BLS12_381: 244, ecc.BN254: 164}[id]; len(proof) != want {
				t.Fatalf("the proof has %d bytes, want %d", len(proof), want)
			}
			if _, _, err := SnarkjsFiles(id, proof, public); err != nil {
				t.Fatal(err)
			}
			// Ar's x set to all ones below the flag bits (the top two on BN254, three
			// on BLS12-381): above the base field's prime on both curves.
			damagedPoint := bytes.Clone(proof)
			damagedPoint[0] |= 0x3f
			for i := 1; i < (id.BaseField().BitLen()+7)/8; i++ {
				damagedPoint[i] = 0xff
			}
			// A witness that claims 2^32−1 values in 12 bytes: gnark's reader would
			// allocate them all before finding none.
			huge := []byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff}
			withSecret := bytes.Clone(public)
			withSecret[7] = 1
			for name, in := range map[string][2][]byte{
				"a truncated proof":          {proof[:len(proof)-1], public},
				"a proof with trailing byte": {append(bytes.Clone(proof), 0), public},
				"a damaged point":            {damagedPoint, public},
				"a truncated witness":        {proof, public[:len(public)-1]},
				"a witness header alone":     {proof, public[:5]},
				"a witness of 2^32-1 values": {proof, huge},
				"a witness with secrets":     {proof, withSecret},
			} {
				if _, _, err := SnarkjsFiles(id, in[0], in[1]); err == nil {
					t.Errorf("%s: accepted", name)
				}
			}
		})
	}
}
