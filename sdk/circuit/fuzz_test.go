package circuit

import (
	"slices"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/frontend"

	"github.com/zkhost/zkhost/sdk"
)

// fuzzCircuit has two public inputs and three secret ones; ParseWitness reads
// nothing else of a Circuit.
type fuzzCircuit struct {
	P0, P1     frontend.Variable `gnark:",public"`
	S0, S1, S2 frontend.Variable
}

func (c *fuzzCircuit) Define(api frontend.API) error { return nil }

// FuzzParseWitness feeds ParseWitness mutated witnesses: it must return an error
// or a witness with the circuit's counts of public and secret values, never panic
// (a witness arrives from any client over the API). The seeds are a valid witness
// from gnark's MarshalBinary and damaged copies of it; `go test -run '^$' -fuzz
// '^FuzzParseWitness$' ./sdk/circuit` explores from there.
func FuzzParseWitness(f *testing.F) {
	c := &Circuit{Name: "fuzz", NbPublic: 3, NbSecret: 3} // NbPublic counts the constant-1 wire
	w, err := frontend.NewWitness(&fuzzCircuit{P0: 1, P1: 2, S0: 3, S1: 4, S2: 5}, ecc.BLS12_381.ScalarField())
	if err != nil {
		f.Fatal(err)
	}
	valid, err := w.MarshalBinary()
	if err != nil {
		f.Fatal(err)
	}
	f.Add(valid)
	f.Add(valid[:witnessHeader])
	f.Add(valid[:len(valid)-1])
	f.Add(append(append([]byte(nil), valid...), 0))
	bad := append([]byte(nil), valid...)
	bad[len(bad)-1] = 0xff // a value above the modulus
	f.Add(bad)
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := ParseWitness(data, c)
		if err != nil {
			return
		}
		pub, err := got.Public()
		if err != nil {
			t.Fatalf("accepted a witness whose public part fails: %v", err)
		}
		if n := pub.Vector().(interface{ Len() int }).Len(); n != c.NbPublic-1 {
			t.Fatalf("accepted a witness with %d public values, want %d", n, c.NbPublic-1)
		}
	})
}

// FuzzParseAssignment feeds the assignment parser mutated wire assignments of every
// encoding: it must return an error or exactly the circuit's wires with the constant
// one first, never panic
// (an assignment arrives from any client over the API). The seeds are a valid
// assignment and damaged copies of it; `go test -run '^$' -fuzz
// '^FuzzParseAssignment$' ./sdk/circuit` explores from there.
func FuzzParseAssignment(f *testing.F) {
	// Three internal wires; no constraint system: the parser reads none.
	c := &Circuit{Name: "fuzz", Curve: sdk.CurveBLS12381, NbPublic: 3, NbSecret: 3, NbWires: 9}
	W := make([]fr.Element, c.NbWires)
	for i := range W {
		W[i].SetUint64(uint64(i))
	}
	W[0].SetOne()
	valid := MarshalAssignment(W, c.NbPublic, c.NbSecret)
	f.Add(valid)
	f.Add(valid[:assignmentHeader])
	f.Add(valid[:len(valid)-1])
	f.Add(append(slices.Clone(valid), 0))
	bad := slices.Clone(valid)
	bad[len(bad)-fr.Bytes] = 0xff // a value above the modulus
	f.Add(bad)
	// The compact format: W's 0 and 1 in bitmaps, the rest as values, as
	// BLS12-381's is written (version 2, no curve in its header) and as a
	// later writer may write it (version 3, naming the curve).
	compact, err := MarshalCompactAssignment(W, c.NbPublic, c.NbSecret, 1)
	if err != nil {
		f.Fatal(err)
	}
	for _, b := range [][]byte{compact, asVersion3(f, compact)} {
		f.Add(b)
		f.Add(b[:compactHeaderOf(f, b)])
		f.Add(b[:len(b)-1])
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		got := make([]fr.Element, c.NbWires)
		if err := parseAssignmentInto(data, c, 2, got); err != nil {
			return
		}
		if len(got) != c.NbWires || !got[0].IsOne() {
			t.Fatalf("accepted an assignment of %d wires (want %d) whose wire 0 is %s", len(got), c.NbWires, got[0].String())
		}
	})
}
