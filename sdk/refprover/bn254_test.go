package refprover

import (
	"bytes"
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	groth16_bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	cs "github.com/consensys/gnark/constraint/bn254"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"

	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyconv"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// TestProveBN254 proves a chain circuit on BN254 with the generic prover, from a
// gnark key written to and mapped from a key file, and gnark's verifier accepts the
// proof, for Prove and for a KeyProver that reads the partition's raw bytes; a proof
// with the public value changed is refused.
func TestProveBN254(t *testing.T) {
	const steps = 300
	field := ecc.BN254.ScalarField()
	ccs, err := frontend.Compile(field, r1cs.NewBuilder, &testcircuit.Chain{N: steps})
	if err != nil {
		t.Fatal(err)
	}
	gpk, vk, err := groth16.Setup(ccs)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := keyconv.FromGnarkBN254(gpk.(*groth16_bn254.ProvingKey))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "chain.pk")
	if _, err := keyfile.Write(path, pk); err != nil {
		t.Fatal(err)
	}
	kf, err := keyfile.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer kf.Close()
	mapped, err := kf.BN254()
	if err != nil {
		t.Fatal(err)
	}
	full, err := frontend.NewWitness(testcircuit.ChainAssignmentOver(field, steps, 3, 5), field)
	if err != nil {
		t.Fatal(err)
	}
	public, err := full.Public()
	if err != nil {
		t.Fatal(err)
	}
	solved, err := ccs.Solve(full)
	if err != nil {
		t.Fatal(err)
	}
	sol := solved.(*cs.R1CSSolution)

	proof, _, err := Prove(context.Background(), curve.BN254{}, mapped, sol.W, sol.A, sol.B, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := groth16.Verify(keyconv.ProofToGnarkBN254(proof), vk, public); err != nil {
		t.Fatalf("gnark refused the BN254 proof: %v", err)
	}

	prover, err := NewKeyProver(kf)
	if err != nil {
		t.Fatal(err)
	}
	if prover.Curve() != ecc.BN254 {
		t.Fatalf("the key prover's curve is %s", prover.Curve())
	}
	raw, _, err := prover.Prove(context.Background(), ScalarBytes(sol.W), ScalarBytes(sol.A), ScalarBytes(sol.B), 2)
	if err != nil {
		t.Fatal(err)
	}
	decoded := groth16.NewProof(ecc.BN254)
	if _, err := decoded.ReadFrom(bytes.NewReader(raw)); err != nil {
		t.Fatalf("gnark cannot read the key prover's proof (%d bytes): %v", len(raw), err)
	}
	if len(raw) != 164 {
		t.Errorf("a BN254 proof of %d bytes, want 164 (gnark's encoding)", len(raw))
	}
	if err := groth16.Verify(decoded, vk, public); err != nil {
		t.Fatalf("gnark refused the key prover's proof: %v", err)
	}

	// A backend may prove with one key prover from several goroutines.
	var wg sync.WaitGroup
	errs := make([]error, 3)
	for i := range errs {
		wg.Go(func() {
			raw, _, err := prover.Prove(context.Background(), ScalarBytes(sol.W), ScalarBytes(sol.A), ScalarBytes(sol.B), 1)
			if err == nil {
				p := groth16.NewProof(ecc.BN254)
				if _, err = p.ReadFrom(bytes.NewReader(raw)); err == nil {
					err = groth16.Verify(p, vk, public)
				}
			}
			errs[i] = err
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("concurrent proof %d: %v", i, err)
		}
	}

	// The same proof for another output is refused.
	wrong, err := frontend.NewWitness(testcircuit.ChainAssignmentOver(field, steps, 3, 6), field, frontend.PublicOnly())
	if err != nil {
		t.Fatal(err)
	}
	if err := groth16.Verify(decoded, vk, wrong); err == nil {
		t.Fatal("gnark accepted the proof for another public value")
	}
}
