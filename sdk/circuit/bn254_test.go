package circuit

import (
	"bytes"
	"context"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	blsfr "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	bnfr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/groth16"
	cs_bn254 "github.com/consensys/gnark/constraint/bn254"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/refprover"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// TestBN254KeySet: a gnark circuit compiled and set up on BN254 is imported (its
// witness proved and verified on the way), loaded, and its partitions synthesized
// through the one curve-blind entry point from a gnark witness and from a wire
// assignment (full and compact), proved with the key file's prover and verified by
// gnark; a wrong assignment is refused naming its constraint, and BLS12-381 scalars
// are refused for the circuit, naming both curves.
func TestBN254KeySet(t *testing.T) {
	const steps = 40
	field := ecc.BN254.ScalarField()
	gf, err := testcircuit.WriteGnarkFilesOn(ecc.BN254, t.TempDir(), "chain", &testcircuit.Chain{N: steps},
		testcircuit.ChainAssignmentOver(field, steps, 3, 5))
	if err != nil {
		t.Fatal(err)
	}
	files := ImportFiles{CCS: gf.CCS, PK: gf.PK, VK: gf.VK, Witness: gf.Witness}
	full := gf.FullWitness
	witnessBytes, err := os.ReadFile(gf.Witness)
	if err != nil {
		t.Fatal(err)
	}

	keys := t.TempDir()
	res, err := Import(context.Background(), files, "chain-bn254", keys)
	if err != nil {
		t.Fatal(err)
	}
	res.Circuit.Close()
	if !res.Proved {
		t.Fatal("the import did not prove its witness")
	}
	c, err := Load(keys, "chain-bn254")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if c.Curve != sdk.CurveBN254 || c.CCS != nil || c.Key() != nil {
		t.Fatalf("loaded as %s (BLS12-381 system %v, key %v)", c.Curve, c.CCS != nil, c.Key() != nil)
	}
	// Its gnark witnesses are solved by BN254's fast solver, not gnark's.
	if c.bn254Program() == nil || c.Program() != nil {
		t.Fatalf("solver programs: BN254 %v, BLS12-381 %v", c.bn254Program() != nil, c.Program() != nil)
	}
	prover, err := refprover.NewKeyProver(c.pk)
	if err != nil {
		t.Fatal(err)
	}

	solved, err := gf.R1CS.Solve(full)
	if err != nil {
		t.Fatal(err)
	}
	W := solved.(*cs_bn254.R1CSSolution).W
	assignment := MarshalAssignment(W, c.NbPublic, c.NbSecret)
	if got, err := c.GnarkAssignments([][]byte{witnessBytes}); err != nil || !bytes.Equal(got[0], assignment) {
		t.Fatalf("GnarkAssignments: %v, or not the solution's assignment", err)
	}
	wrong := bytes.Clone(assignment)
	wrong[len(wrong)-1] ^= 1 // the last wire, an internal one

	for _, tc := range []struct {
		name  string
		input []byte
	}{{"gnark witness", witnessBytes}, {"wire assignment", assignment}} {
		t.Run(tc.name, func(t *testing.T) {
			w, a, b := refprover.ScalarMemory(c.NbWires), refprover.ScalarMemory(c.NbConstraints), refprover.ScalarMemory(c.NbConstraints)
			got, err := SynthesizeInputRaw(c, tc.input, 2, w, a, b)
			if err != nil {
				t.Fatal(err)
			}
			sol := solved.(*cs_bn254.R1CSSolution)
			if !bytes.Equal(w, refprover.ScalarBytes(W)) || !bytes.Equal(a, refprover.ScalarBytes(sol.A)) || !bytes.Equal(b, refprover.ScalarBytes(sol.B)) {
				t.Fatal("W, A or B differs from gnark's solution")
			}
			encoded, _, err := prover.Prove(context.Background(), w, a, b, 2)
			if err != nil {
				t.Fatal(err)
			}
			proof := groth16.NewProof(ecc.BN254)
			if _, err := proof.ReadFrom(bytes.NewReader(encoded)); err != nil {
				t.Fatal(err)
			}
			pub, err := got.Public()
			if err != nil {
				t.Fatal(err)
			}
			if err := groth16.Verify(proof, c.VK, pub); err != nil {
				t.Fatalf("gnark refused the proof: %v", err)
			}
		})
	}
	// W alone, packed, for a compact partition: gnark's W, and its bitmaps
	// made with BN254's 1 (W's type; BLS12-381's 1 would mark every 1 as
	// neither).
	words := sdk.CompactWords(uint64(c.NbWires))
	wantOther, wantOnes := make([]uint64, words), make([]uint64, words)
	wantN, err := sdk.PackBitsOf(W, wantOther, wantOnes, 1)
	if err != nil {
		t.Fatal(err)
	}
	if wantOnes[0]&1 == 0 {
		t.Fatal("wire 0, the constant one, is not packed as a 1")
	}
	for _, in := range [][]byte{witnessBytes, assignment} {
		cw := make([]bnfr.Element, c.NbWires)
		other, ones := make([]uint64, words), make([]uint64, words)
		got, n, err := SynthesizeInputCompact(c, in, 2, cw, other, ones)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(cw, W) || n != wantN || !slices.Equal(other, wantOther) || !slices.Equal(ones, wantOnes) {
			t.Fatal("compact synthesis: W or its bitmaps differ from gnark's W packed")
		}
		if pub, err := got.Public(); err != nil || !slices.Equal(pub.Vector().(bnfr.Vector), W[1:c.NbPublic]) {
			t.Fatalf("compact synthesis: public inputs %v differ from the solution's (%v)", pub.Vector(), err)
		}
	}
	// BLS12-381 scalars for a BN254 circuit are refused by name.
	if _, _, err := SynthesizeInputCompact(c, witnessBytes, 1, make([]blsfr.Element, c.NbWires), wantOther, wantOnes); err == nil || !strings.Contains(err.Error(), "BN254 circuit") {
		t.Errorf("compact synthesis into BLS12-381 scalars: %v", err)
	}
	w, a, b := refprover.ScalarMemory(c.NbWires), refprover.ScalarMemory(c.NbConstraints), refprover.ScalarMemory(c.NbConstraints)
	if _, err := SynthesizeInputRaw(c, wrong, 1, w, a, b); err == nil || !strings.Contains(err.Error(), "does not satisfy constraint") {
		t.Errorf("a wrong assignment: %v, want a refusal naming the constraint", err)
	}
	// A compact wire assignment of BN254 scalars is read as the full one:
	// the same W, A and B, through the one curve-blind entry point.
	compact, err := MarshalCompactAssignment(W, c.NbPublic, c.NbSecret, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := CheckInput(compact, true, c); err != nil {
		t.Errorf("a compact assignment for a BN254 circuit: %v", err)
	}
	cw, ca, cb := refprover.ScalarMemory(c.NbWires), refprover.ScalarMemory(c.NbConstraints), refprover.ScalarMemory(c.NbConstraints)
	if _, err := SynthesizeInputRaw(c, compact, 2, cw, ca, cb); err != nil {
		t.Fatalf("a compact assignment: %v", err)
	}
	sol := solved.(*cs_bn254.R1CSSolution)
	if !bytes.Equal(cw, refprover.ScalarBytes(W)) || !bytes.Equal(ca, refprover.ScalarBytes(sol.A)) || !bytes.Equal(cb, refprover.ScalarBytes(sol.B)) {
		t.Error("a compact assignment: W, A or B differs from gnark's solution")
	}
	for _, in := range [][]byte{assignment, compact} {
		if lo, hi := InputSizeRange(c, true); int64(len(in)) < lo || int64(len(in)) > hi {
			t.Errorf("input size range [%d, %d] for an assignment of %d bytes", lo, hi, len(in))
		}
	}
	// Evaluate takes the circuit's own scalars, and refuses another curve's.
	if A, B, err := Evaluate(c, W, 1); err != nil || !slices.Equal(A, sol.A) || !slices.Equal(B, sol.B) {
		t.Errorf("Evaluate of a BN254 circuit: %v, or A and B differ from gnark's", err)
	}
	if _, _, err := Evaluate(c, make([]blsfr.Element, c.NbWires), 1); err == nil || !strings.Contains(err.Error(), "of BLS12-381 scalars for a BN254 circuit") {
		t.Errorf("Evaluate of BLS12-381 scalars for a BN254 circuit: %v", err)
	}
}
