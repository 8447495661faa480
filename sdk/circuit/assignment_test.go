package circuit

import (
	"context"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint/solver"
	"github.com/consensys/gnark/frontend"

	cs "github.com/consensys/gnark/constraint/bls12-381"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyconv"
	"github.com/zkhost/zkhost/sdk/refprover"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// writeWitness writes assignment's full witness (witness.MarshalBinary) to path.
func writeWitness(t *testing.T, path string, assignment frontend.Circuit) {
	t.Helper()
	w, err := frontend.NewWitness(assignment, ecc.BLS12_381.ScalarField())
	if err != nil {
		t.Fatal(err)
	}
	b, err := w.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// solvedAssignment solves w with gnark (and the hints given) and returns the wire
// assignment of the solution, and the solution.
func solvedAssignment(t *testing.T, r1cs *cs.R1CS, w witness.Witness, hints ...solver.Hint) ([]byte, *cs.R1CSSolution) {
	t.Helper()
	res, err := r1cs.Solve(w, solver.WithHints(hints...))
	if err != nil {
		t.Fatal(err)
	}
	sol := res.(*cs.R1CSSolution)
	return MarshalAssignment(sol.W, r1cs.GetNbPublicVariables(), r1cs.GetNbSecretVariables()), sol
}

// loadSolved loads test circuit i's keys from dir and returns the circuit, a
// witness of its partition 1, and that witness solved by gnark, as a wire
// assignment and as gnark's solution.
func loadSolved(t *testing.T, dir string, i int) (*Circuit, witness.Witness, []byte, *cs.R1CSSolution) {
	t.Helper()
	s := spec(t, i)
	c := load(t, dir, s.ID())
	w, err := s.Witness(1, 0)
	if err != nil {
		t.Fatal(err)
	}
	data, sol := solvedAssignment(t, c.CCS, w)
	return c, w, data, sol
}

// writeCubeRootAssignment solves CubeRoot's witness where its hint is (this test
// process) and writes the wire assignment next to f's files.
func writeCubeRootAssignment(t *testing.T, f testcircuit.GnarkFiles) string {
	t.Helper()
	b, _ := solvedAssignment(t, f.R1CS.(*cs.R1CS), f.FullWitness, testcircuit.CubeRootHint)
	path := filepath.Join(filepath.Dir(f.Witness), "cuberoot"+ExtAssignment)
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// manyChunks makes firstFailure cut even the test circuits into chunks of one item.
func manyChunks(t *testing.T) {
	old := minChunk
	minChunk = 1
	t.Cleanup(func() { minChunk = old })
}

// TestAssignmentProves: a wire assignment gives the solver's A and B on one thread
// or many, and proves (the CPU backend's prover) to a proof gnark verifies.
func TestAssignmentProves(t *testing.T) {
	manyChunks(t)
	dir := sharedKeys(t)
	for i := range testSpecs {
		c, w, data, sol := loadSolved(t, dir, i)
		for _, threads := range []int{1, 4} {
			W, A, B, full, err := SynthesizeInput(c, data, threads)
			if err != nil {
				t.Fatalf("%s, %d threads: %v", c.Name, threads, err)
			}
			if !slices.Equal(W, sol.W) || !slices.Equal(A, sol.A) || !slices.Equal(B, sol.B) {
				t.Fatalf("%s, %d threads: W, A or B differ from gnark's solver", c.Name, threads)
			}
			proof, _, err := refprover.Prove(context.Background(), curve.BLS12381{}, c.Key(), W, A, B, 0)
			if err != nil {
				t.Fatal(err)
			}
			pub, err := full.Public()
			if err != nil {
				t.Fatal(err)
			}
			want, _ := w.Public()
			if !slices.Equal(pub.Vector().(fr.Vector), want.Vector().(fr.Vector)) {
				t.Errorf("%s: the assignment's public inputs differ from the witness's", c.Name)
			}
			if err := groth16.Verify(keyconv.ProofToGnark(proof), c.VK, pub); err != nil {
				t.Errorf("%s, %d threads: %v", c.Name, threads, err)
			}
		}
	}

	// A circuit with a custom hint, imported for assignments only.
	f := cubeRootFiles(t)
	res, err := Import(context.Background(), ImportFiles{CCS: f.CCS, PK: f.PK, VK: f.VK, AssignmentsOnly: true}, "cube", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer res.Circuit.Close()
	W, err := ReadAssignment(writeCubeRootAssignment(t, f), res.Circuit)
	if err != nil {
		t.Fatal(err)
	}
	A, B, err := Evaluate(res.Circuit, W, 0)
	if err != nil {
		t.Fatal(err)
	}
	proof, _, err := refprover.Prove(context.Background(), curve.BLS12381{}, res.Circuit.Key(), W, A, B, 0)
	if err != nil {
		t.Fatal(err)
	}
	full, _ := AssignmentWitness(res.Circuit, W)
	pub, _ := full.Public()
	if err := groth16.Verify(keyconv.ProofToGnark(proof), f.VerifyingKey, pub); err != nil {
		t.Errorf("cube root: %v", err)
	}
}

// firstUse returns the index of the first constraint whose L, R or O mentions wire.
func firstUse(t *testing.T, r1cs *cs.R1CS, wire int) int {
	t.Helper()
	for i, r := range r1cs.GetR1Cs() {
		for _, e := range append(append(slices.Clone(r.L), r.R...), r.O...) {
			if e.WireID() == wire && e.CoeffID() != 0 {
				return i
			}
		}
	}
	t.Fatalf("no constraint mentions wire %d", wire)
	return -1
}

// TestAssignmentTampered: an assignment with a wrong wire fails Evaluate with an
// *UnsatisfiedError naming the first constraint it breaks, on one thread or many.
func TestAssignmentTampered(t *testing.T) {
	manyChunks(t)
	c := load(t, sharedKeys(t), spec(t, 0).ID()) // chain: every wire is used, no value is zero
	w, err := spec(t, 0).Witness(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	good, _ := solvedAssignment(t, c.CCS, w)
	internal := c.NbPublic + c.NbSecret
	for _, wires := range [][]int{
		{internal + 5},
		{c.NbWires - 1, internal + 100}, // the earlier constraint is named, not the first chunk's
		{1},                             // a public input
	} {
		data := slices.Clone(good)
		want := c.NbConstraints
		for _, wire := range wires {
			data[assignmentHeader+wire*fr.Bytes+fr.Bytes-1] ^= 1 // flip the low bit: still canonical
			want = min(want, firstUse(t, c.CCS, wire))
		}
		for _, threads := range []int{1, 4} {
			W, err := ParseAssignment(data, c, threads)
			if err != nil {
				t.Fatal(err)
			}
			A, B, err := Evaluate(c, W, threads)
			var ue *UnsatisfiedError
			if !errors.As(err, &ue) || ue.Constraint != want || A != nil || B != nil {
				t.Fatalf("wires %v, %d threads: %v (A %d, B %d), want constraint %d named", wires, threads, err, len(A), len(B), want)
			}
			var a, b, ab, o fr.Element
			for _, v := range []struct {
				dst *fr.Element
				dec string
			}{{&a, ue.A}, {&b, ue.B}, {&o, ue.C}} {
				if _, err := v.dst.SetString(v.dec); err != nil {
					t.Fatalf("the error's value %q: %v", v.dec, err)
				}
			}
			if ab.Mul(&a, &b).Equal(&o) {
				t.Errorf("the named constraint holds: %v", ue)
			}
			if !strings.Contains(err.Error(), "does not satisfy constraint") {
				t.Errorf("error %q", err)
			}
		}
	}
}

// TestAssignmentRejects: malformed assignments are refused with errors that say what
// is wrong, before any constraint is evaluated.
func TestAssignmentRejects(t *testing.T) {
	c := load(t, sharedKeys(t), spec(t, 0).ID())
	w, err := spec(t, 0).Witness(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	good, _ := solvedAssignment(t, c.CCS, w)
	witnessBytes, _ := w.MarshalBinary()
	edit := func(f func(b []byte) []byte) []byte { return f(slices.Clone(good)) }
	putU32 := func(off int, v uint32) []byte {
		return edit(func(b []byte) []byte { binary.BigEndian.PutUint32(b[off:], v); return b })
	}
	for _, tc := range []struct {
		name string
		data []byte
		want string
	}{
		{"a gnark witness", witnessBytes, `is not a wire assignment (no "ZKWA" magic; a gnark witness is submitted as a witness`},
		{"empty", nil, "is not a wire assignment"},
		{"header only in part", good[:10], "is truncated: 10 bytes"},
		{"another version", putU32(4, 4), "format version 4, this build reads 1 (full), 2 and 3 (compact)"},
		{"wrong wire count", putU32(16, uint32(c.NbWires+1)), "circuit " + c.Name + " has"},
		{"wrong public count", putU32(8, 1), "(1 public"},
		{"truncated values", good[:len(good)-1], "truncated, or trailing bytes"},
		{"trailing bytes", append(slices.Clone(good), 0), "truncated, or trailing bytes"},
		{"a value past the modulus", edit(func(b []byte) []byte {
			copy(b[assignmentHeader+3*fr.Bytes:], slices.Repeat([]byte{0xff}, fr.Bytes))
			return b
		}), "wire 3 is not a canonical BLS12-381 scalar"},
		{"the constant wire not one", edit(func(b []byte) []byte { b[assignmentHeader+fr.Bytes-1] = 2; return b }), "wire 0, the constant one, is 2, want 1"},
	} {
		_, err := ParseAssignment(tc.data, c, 0)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
	}
	if err := CheckInput(good, false, c); err == nil || !strings.Contains(err.Error(), "is a wire assignment, not a gnark witness") {
		t.Errorf("an assignment checked as a witness: %v", err)
	}
	if err := CheckInput(good, true, c); err != nil {
		t.Errorf("a good assignment: %v", err)
	}
	if err := CheckInput(witnessBytes, false, c); err != nil {
		t.Errorf("a good witness: %v", err)
	}
	if _, _, err := Evaluate(c, make([]fr.Element, 3), 0); err == nil || !strings.Contains(err.Error(), "3 wires") {
		t.Errorf("Evaluate with 3 wires: %v", err)
	}
}

// TestSynthesizeInputCompact: a gnark witness and a wire assignment of the
// same partition give gnark's W with the bitmaps sdk.PackBits makes of it,
// and MarshalCompactBits encodes them as MarshalCompactAssignment does.
func TestSynthesizeInputCompact(t *testing.T) {
	dir := sharedKeys(t)
	for i := range testSpecs {
		c, w, assignment, sol := loadSolved(t, dir, i)
		witnessBytes, err := w.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		words := sdk.CompactWords(uint64(c.NbWires))
		wantOther, wantOnes := make([]uint64, words), make([]uint64, words)
		wantN, err := sdk.PackBits(sol.W, wantOther, wantOnes, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, in := range []struct {
			name string
			data []byte
		}{{"witness", witnessBytes}, {"assignment", assignment}} {
			W := make([]fr.Element, c.NbWires)
			other, ones := make([]uint64, words), make([]uint64, words)
			full, n, err := SynthesizeInputCompact(c, in.data, 2, W, other, ones)
			if err != nil {
				t.Fatalf("%s, %s: %v", c.Name, in.name, err)
			}
			if !slices.Equal(W, sol.W) || n != wantN || !slices.Equal(other, wantOther) || !slices.Equal(ones, wantOnes) {
				t.Fatalf("%s, %s: W or its bitmaps differ from gnark's W packed", c.Name, in.name)
			}
			pub, _ := full.Public()
			want, _ := w.Public()
			if !slices.Equal(pub.Vector().(fr.Vector), want.Vector().(fr.Vector)) {
				t.Fatalf("%s, %s: public inputs differ from the witness's", c.Name, in.name)
			}
			packed, err := MarshalCompactBits(W, other, ones, n, c.NbPublic, c.NbSecret, 2)
			if err != nil {
				t.Fatal(err)
			}
			again, err := MarshalCompactAssignment(sol.W, c.NbPublic, c.NbSecret, 1)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(packed, again) {
				t.Fatalf("%s, %s: MarshalCompactBits differs from MarshalCompactAssignment", c.Name, in.name)
			}
		}
		// Bitmaps that do not match the count are refused, not encoded.
		if _, err := MarshalCompactBits(sol.W, wantOther, wantOnes, wantN+1, c.NbPublic, c.NbSecret, 1); err == nil {
			t.Fatalf("%s: MarshalCompactBits took a count its bitmap does not hold", c.Name)
		}
	}
}
