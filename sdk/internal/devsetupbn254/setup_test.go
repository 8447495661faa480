package devsetupbn254

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	groth16_bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	cs "github.com/consensys/gnark/constraint/bn254"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"

	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyconv"
	"github.com/zkhost/zkhost/sdk/refprover"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// chain compiles the chain circuit of n steps over BN254.
func chain(t *testing.T, n int) *cs.R1CS {
	t.Helper()
	ccs, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, &testcircuit.Chain{N: n})
	if err != nil {
		t.Fatal(err)
	}
	return ccs.(*cs.R1CS)
}

// TestSetupShapeMatchesGnark compares a key from Setup with one from gnark's BN254
// groth16.Setup for the same circuit: every length and flag. The chain's 300 steps leave
// the domain of 512 part padding.
func TestSetupShapeMatchesGnark(t *testing.T) {
	sys := chain(t, 300)
	pk, vk, err := Setup(context.Background(), sys)
	if err != nil {
		t.Fatal(err)
	}
	gpkAny, gvkAny, err := groth16.Setup(sys)
	if err != nil {
		t.Fatal(err)
	}
	gpk, err := keyconv.FromGnarkBN254(gpkAny.(*groth16_bn254.ProvingKey))
	if err != nil {
		t.Fatal(err)
	}
	gvk := gvkAny.(*groth16_bn254.VerifyingKey)
	for _, c := range []struct {
		what      string
		got, want int
	}{
		{"domain size", int(pk.DomainSize), int(gpk.DomainSize)},
		{"wires", int(pk.NbWires), int(gpk.NbWires)},
		{"public wires", int(pk.NbPublic), int(gpk.NbPublic)},
		{"g1_a", len(pk.G1A), len(gpk.G1A)},
		{"g1_b", len(pk.G1B), len(gpk.G1B)},
		{"g1_k", len(pk.G1K), len(gpk.G1K)},
		{"g1_z", len(pk.G1Z), len(gpk.G1Z)},
		{"g2_b", len(pk.G2B), len(gpk.G2B)},
		{"vk K", len(vk.G1.K), len(gvk.G1.K)},
	} {
		if c.got != c.want {
			t.Errorf("%s: %d, gnark's Setup gives %d", c.what, c.got, c.want)
		}
	}
	if !slices.Equal(pk.InfinityA, gpk.InfinityA) || !slices.Equal(pk.InfinityB, gpk.InfinityB) {
		t.Error("infinity flags differ from gnark's Setup")
	}
	if err := pk.Check(); err != nil {
		t.Error(err)
	}
}

// TestSetupProves proves with a key from Setup through refprover (the CPU backend's
// steps) and through gnark's groth16.Prove, and gnark's BN254 verifier accepts both with
// the verifying key Setup returned, and refuses the proof for another public input.
func TestSetupProves(t *testing.T) {
	const steps = 300
	ctx := context.Background()
	sys := chain(t, steps)
	pk, vk, err := Setup(ctx, sys)
	if err != nil {
		t.Fatal(err)
	}
	field := ecc.BN254.ScalarField()
	solve := func(x uint64) (*cs.R1CSSolution, groth16.Proof) {
		w, err := frontend.NewWitness(testcircuit.ChainAssignmentOver(field, steps, x, 5), field)
		if err != nil {
			t.Fatal(err)
		}
		pub, err := w.Public()
		if err != nil {
			t.Fatal(err)
		}
		gp, err := groth16.Prove(sys, keyconv.ToGnarkBN254(pk), w)
		if err != nil {
			t.Fatal(err)
		}
		if err := groth16.Verify(gp, vk, pub); err != nil {
			t.Fatalf("gnark's proof with the key from Setup: %v", err)
		}
		sol, err := sys.Solve(w)
		if err != nil {
			t.Fatal(err)
		}
		rs := sol.(*cs.R1CSSolution)
		p, _, err := refprover.Prove(ctx, curve.BN254{}, pk, rs.W, rs.A, rs.B, 2)
		if err != nil {
			t.Fatal(err)
		}
		proof := keyconv.ProofToGnarkBN254(p)
		if err := groth16.Verify(proof, vk, pub); err != nil {
			t.Fatalf("refprover's proof with the key from Setup: %v", err)
		}
		return rs, proof
	}
	_, proof := solve(3)
	w2, err := frontend.NewWitness(testcircuit.ChainAssignmentOver(field, steps, 4, 5), field)
	if err != nil {
		t.Fatal(err)
	}
	pub2, err := w2.Public()
	if err != nil {
		t.Fatal(err)
	}
	if err := groth16.Verify(proof, vk, pub2); err == nil {
		t.Error("a proof verified against another witness's public input")
	}
}

// TestSetupRefuses: a circuit with commitments, zero toxic waste and a cancelled
// context are refused, as devsetup's.
func TestSetupRefuses(t *testing.T) {
	ccs, err := frontend.Compile(ecc.BN254.ScalarField(), r1cs.NewBuilder, &testcircuit.Committed{})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := Setup(context.Background(), ccs.(*cs.R1CS)); !errors.Is(err, ErrCommitments) {
		t.Errorf("Setup of a circuit with commitments: %v, want ErrCommitments", err)
	}
	sys := chain(t, 8)
	if _, _, err := SetupWith(context.Background(), sys, ToxicWaste{}); err == nil {
		t.Error("SetupWith zero toxic waste succeeded")
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := Setup(ctx, sys); !errors.Is(err, context.Canceled) {
		t.Errorf("Setup with a cancelled context: %v, want context.Canceled", err)
	}
}
