package circuits

import (
	"crypto/sha256"
	"encoding/binary"
	"math/rand/v2"
	"testing"

	cs "github.com/consensys/gnark/constraint/bls12-381"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/consensys/gnark/test"
)

// TestSHA256Digest checks the native digest against FIPS 180-2's example
// (SHA-256 of "abc" is one block) and the standard library on a longer input.
func TestSHA256Digest(t *testing.T) {
	// "abc" is not a whole number of words; hash "abcd" and compare with crypto/sha256,
	// and check the word packing on the empty-prefix case.
	msg := []uint32{0x61626364}
	want := sha256.Sum256([]byte("abcd"))
	got := SHA256Digest(msg)
	for i := range got {
		if got[i] != binary.BigEndian.Uint32(want[4*i:]) {
			t.Fatalf("SHA256Digest(\"abcd\") word %d = %08x, want %08x", i, got[i], binary.BigEndian.Uint32(want[4*i:]))
		}
	}
}

func TestSHA256(t *testing.T) {
	for _, b := range []int{1, 2} {
		s := mustLookup(t, "sha256", map[string]int{"b": b})
		ccs := compile(t, s)
		t.Logf("%s: %d constraints, %d wires", s.ID(), ccs.GetNbConstraints(), ccs.GetNbInternalVariables()+ccs.GetNbPublicVariables()+ccs.GetNbSecretVariables())
		if got := ccs.GetNbPublicVariables(); got != 9 {
			t.Errorf("%s has %d public variables, want 9 (one, 8 digest words)", s.ID(), got)
		}
	}
	checkWitnesses(t, mustLookup(t, "sha256", map[string]int{"b": 2}), 3)

	// The circuit refuses a wrong digest and a message word of 33 bits.
	const blocks = 1
	base := sha256Assignment(rand.New(rand.NewPCG(1, 2)), blocks)
	if err := test.IsSolved(NewSHA256(blocks), base, Curve.ScalarField()); err != nil {
		t.Fatalf("valid sha256 witness refused: %v", err)
	}
	for name, mutate := range map[string]func(a *SHA256){
		"wrong digest":  func(a *SHA256) { a.Digest[3] = a.Digest[3].(uint32) ^ 1 },
		"wrong message": func(a *SHA256) { a.Message[12] = a.Message[12].(uint32) ^ 0x100 },
		"33-bit word":   func(a *SHA256) { a.Message[0] = uint64(a.Message[0].(uint32)) + 1<<32 },
	} {
		a := NewSHA256(blocks)
		copy(a.Message, base.Message)
		a.Digest = base.Digest
		mutate(a)
		if err := test.IsSolved(NewSHA256(blocks), a, Curve.ScalarField()); err == nil {
			t.Errorf("%s: sha256 accepted an invalid witness", name)
		}
	}
	if _, err := frontend.Compile(Curve.ScalarField(), r1cs.NewBuilder, &SHA256{Message: make([]frontend.Variable, 5)}); err == nil {
		t.Error("a SHA256 circuit of 5 message words compiled")
	}
}

// TestWitnessBinaryShare solves a witness of each example circuit and counts
// the wires that are 0 or 1: the scalars the witness-aware GPU MSM keeps out
// of Pippenger. sha256 must be bit-heavy (the reason it exists); the others
// are reported for comparison (go test -v -run TestWitnessBinaryShare).
func TestWitnessBinaryShare(t *testing.T) {
	for _, c := range []struct {
		name   string
		params map[string]int
		min    float64 // the share of 0/1 wires the circuit must reach
	}{
		{"sha256", map[string]int{"b": 1}, 0.99},
		{"sha256", map[string]int{"b": 8}, 0.99}, // a domain of 2^18
		{"chain", map[string]int{"k": 12}, 0},
		{"merkle", map[string]int{"k": 2, "d": 8}, 0},
	} {
		s := mustLookup(t, c.name, c.params)
		ccs := compile(t, s)
		w, err := s.Witness(0, 1)
		if err != nil {
			t.Fatal(err)
		}
		sol, err := ccs.Solve(w)
		if err != nil {
			t.Fatalf("%s: %v", s.ID(), err)
		}
		W := sol.(*cs.R1CSSolution).W
		var zeros, ones int
		for i := range W {
			switch {
			case W[i].IsZero():
				zeros++
			case W[i].IsOne():
				ones++
			}
		}
		share := float64(zeros+ones) / float64(len(W))
		t.Logf("%s: %d wires, %d are 0 (%.1f%%), %d are 1 (%.1f%%): %.2f%% binary", s.ID(), len(W),
			zeros, 100*float64(zeros)/float64(len(W)), ones, 100*float64(ones)/float64(len(W)), 100*share)
		if share < c.min {
			t.Errorf("%s: %.2f%% of the wires are 0 or 1, want at least %.0f%%", s.ID(), 100*share, 100*c.min)
		}
	}
}
