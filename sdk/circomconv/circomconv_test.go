package circomconv

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/groth16/bls12-381"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/circom"
	"github.com/zkhost/zkhost/sdk/circom/circomtest"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyconv"
	"github.com/zkhost/zkhost/sdk/refprover"
)

// The test files of sdk/circom, made by its testdata/make.sh with circom2 and snarkjs.
func testdata(circuit, prime, ext string) string {
	return circomtest.Path(circuit + "_" + prime + ext)
}

var circuits = []string{"multiplier", "poseidonbits"}

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

// readSnarkjsProof reads the proof and public witness snarkjs made for circuit's
// BLS12-381 witness: the files as snarkjs wrote them, and parsed.
func readSnarkjsProof(t *testing.T, circuit string) (proofJSON, publicJSON []byte, proof *sdk.BLS12381Proof, public []fr.Element) {
	t.Helper()
	proofJSON = readFile(t, testdata(circuit, "bls12381", ".proof.json"))
	publicJSON = readFile(t, testdata(circuit, "bls12381", ".public.json"))
	proof, err := ParseProofJSON(proofJSON)
	if err != nil {
		t.Fatal(err)
	}
	public, err = ParsePublicJSON(publicJSON)
	if err != nil {
		t.Fatal(err)
	}
	return proofJSON, publicJSON, proof, public
}

// TestSnarkjsProofVerifies verifies the proof snarkjs made with gnark's verifier and
// the converted verifying key, and writes it back as snarkjs wrote it: the verifying
// key and the JSON shapes are right independently of zkhost's prover.
func TestSnarkjsProofVerifies(t *testing.T) {
	for _, circuit := range circuits {
		t.Run(circuit, func(t *testing.T) {
			f := read(t, circuit, "bls12381")
			vk, err := VerifyingKey(f.zkey)
			if err != nil {
				t.Fatal(err)
			}
			proofJSON, publicJSON, proof, public := readSnarkjsProof(t, circuit)
			if err := groth16.Verify(keyconv.ProofToGnark(proof), vk, public); err != nil {
				t.Fatalf("snarkjs's proof does not verify with the converted key: %v", err)
			}
			public[0].SetUint64(12345)
			if err := groth16.Verify(keyconv.ProofToGnark(proof), vk, public); err == nil {
				t.Fatal("snarkjs's proof verifies for another public value")
			}
			if got := ProofJSON(proof); string(got) != string(proofJSON) {
				t.Fatalf("ProofJSON differs from snarkjs's proof.json:\n%s\nwant\n%s", got, proofJSON)
			}
			public, _ = ParsePublicJSON(publicJSON)
			if got := PublicJSON(public); string(got) != string(publicJSON) {
				t.Fatalf("PublicJSON differs from snarkjs's public.json:\n%s\nwant\n%s", got, publicJSON)
			}
		})
	}
}

// qapRows evaluates the QAP's A and B rows from the zkey's coefficients for the wire
// values W, as snarkjs's prover does (groth16_prove.js, buildABC1).
func qapRows(z *circom.ZKey, W []fr.Element, rows int) (a, b []fr.Element) {
	a = make([]fr.Element, rows)
	b = make([]fr.Element, rows)
	for _, c := range z.Coefficients {
		v, _ := fr.LittleEndian.Element((*[fr.Bytes]byte)(&c.Value))
		v.Mul(&v, &W[c.Signal])
		dst := &a[c.Constraint]
		if c.Matrix == 1 {
			dst = &b[c.Constraint]
		}
		dst.Add(dst, &v)
	}
	return a, b
}

// evalSystem evaluates the L and R of every row of a gnark system for W.
func evalSystem(t *testing.T, sysRows []constraint.R1C, coeffs []fr.Element, W []fr.Element) (a, b []fr.Element) {
	t.Helper()
	eval := func(l constraint.LinearExpression) (s fr.Element) {
		for _, term := range l {
			var v fr.Element
			v.Mul(&coeffs[term.CID], &W[term.VID])
			s.Add(&s, &v)
		}
		return s
	}
	for _, r := range sysRows {
		a = append(a, eval(r.L))
		b = append(b, eval(r.R))
	}
	return a, b
}

// TestProveWithConvertedKey proves the circuits' witnesses with the converted key in
// snarkjs's H form and verifies the proofs with gnark's verifier; the constraint
// system built from the r1cs gives the zkey's A and B rows.
func TestProveWithConvertedKey(t *testing.T) {
	for _, circuit := range circuits {
		t.Run(circuit, func(t *testing.T) {
			f := read(t, circuit, "bls12381")
			pk, err := ProvingKey(f.zkey)
			if err != nil {
				t.Fatal(err)
			}
			vk, err := VerifyingKey(f.zkey)
			if err != nil {
				t.Fatal(err)
			}
			W, err := Assignment(f.wtns)
			if err != nil {
				t.Fatal(err)
			}
			sys, err := ConstraintSystem(f.r1cs)
			if err != nil {
				t.Fatal(err)
			}
			rows := sys.GetNbConstraints()
			a, b := qapRows(f.zkey, W, rows)
			sa, sb := evalSystem(t, sys.GetR1Cs(), sys.Coefficients, W)
			for i := range a {
				if !a[i].Equal(&sa[i]) || !b[i].Equal(&sb[i]) {
					t.Fatalf("row %d: the zkey gives A = %s, B = %s; the constraint system %s, %s", i, a[i].String(), b[i].String(), sa[i].String(), sb[i].String())
				}
			}
			proof, _, err := refprover.Prove(context.Background(), curve.BLS12381{}, pk, W, a, b, 2)
			if err != nil {
				t.Fatal(err)
			}
			public := W[1 : 1+f.zkey.NumPublic]
			if err := groth16.Verify(keyconv.ProofToGnark(proof), vk, public); err != nil {
				t.Fatalf("the proof does not verify: %v", err)
			}
		})
	}
}

func TestBN254Refused(t *testing.T) {
	f := read(t, "multiplier", "bn128")
	_, pkErr := ProvingKey(f.zkey)
	_, vkErr := VerifyingKey(f.zkey)
	_, csErr := ConstraintSystem(f.r1cs)
	_, wErr := Assignment(f.wtns)
	for i, err := range []error{pkErr, vkErr, csErr, wErr} {
		if !errors.Is(err, ErrBN254) || !strings.Contains(err.Error(), "BN254 keys are not supported yet") {
			t.Errorf("conversion %d of a BN254 file: %v, want ErrBN254", i, err)
		}
	}
}

// TestBadPoints damages points of a real key: each must be refused, naming it.
func TestBadPoints(t *testing.T) {
	cases := []struct {
		name    string
		damage  func(z *circom.ZKey)
		mention string
	}{
		{"an A point off the curve", func(z *circom.ZKey) { z.A[96+3] ^= 1 }, "A section point 1"},
		{"a B2 point off the curve", func(z *circom.ZKey) { z.B2[192*2+7] ^= 1 }, "B2 section point 2"},
		{"an H point off the curve", func(z *circom.ZKey) { z.H[96*3] ^= 1 }, "H section point 3"},
		{"a B1 point at infinity alone", func(z *circom.ZKey) { clear(z.B1[96*3 : 96*4]) }, "wire 3's B1 point"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			data := readFile(t, testdata("multiplier", "bls12381", ".zkey"))
			z, err := circom.ParseZKey(data)
			if err != nil {
				t.Fatal(err)
			}
			c.damage(z)
			_, err = ProvingKey(z)
			if err == nil || !strings.Contains(err.Error(), c.mention) {
				t.Fatalf("got %v, want an error naming %q", err, c.mention)
			}
		})
	}
}

// TestSnarkjsFiles turns a proof and public witness in zkhost's encodings back into
// the JSON snarkjs wrote for them.
func TestSnarkjsFiles(t *testing.T) {
	proofJSON, publicJSON, proof, public := readSnarkjsProof(t, "poseidonbits")
	proofBin, err := proof.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	w, err := witness.New(ecc.BLS12_381.ScalarField())
	if err != nil {
		t.Fatal(err)
	}
	values := make(chan any, len(public))
	for _, v := range public {
		values <- v
	}
	close(values)
	if err := w.Fill(len(public), 0, values); err != nil {
		t.Fatal(err)
	}
	publicBin, err := w.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	gotProof, gotPublic, err := SnarkjsFiles(proofBin, publicBin)
	if err != nil {
		t.Fatal(err)
	}
	if string(gotProof) != string(proofJSON) || string(gotPublic) != string(publicJSON) {
		t.Fatalf("SnarkjsFiles gave\n%s\n%s\nwant snarkjs's\n%s\n%s", gotProof, gotPublic, proofJSON, publicJSON)
	}
	if _, _, err := SnarkjsFiles(proofBin[:100], publicBin); err == nil {
		t.Fatal("a truncated proof accepted")
	}
	if _, _, err := SnarkjsFiles(proofBin, publicBin[:5]); err == nil {
		t.Fatal("a truncated public witness accepted")
	}
}
