package circuits_test

import (
	"context"
	"testing"

	"github.com/consensys/gnark/backend/groth16"

	"github.com/zkhost/zkhost/sdk/circuit"
	"github.com/zkhost/zkhost/sdk/circuits"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyconv"
	"github.com/zkhost/zkhost/sdk/refprover"
)

// TestSHA256Proves takes the sha256 circuit the way `zkhost keygen` and
// `zkhost prove` do (development keys, the host's synthesis), proves it with
// the reference prover (refprover, the CPU backend's own) and checks the proof
// with gnark's groth16.Verify; a proof against another partition's public
// digest must fail.
func TestSHA256Proves(t *testing.T) {
	spec, err := circuits.Lookup("sha256", map[string]int{"b": 1})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	if err := circuit.Keygen(spec, dir); err != nil {
		t.Fatal(err)
	}
	c, err := circuit.Load(dir, spec.ID())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w, err := spec.Witness(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	W, A, B, err := circuit.Synthesize(c, w, 2)
	if err != nil {
		t.Fatal(err)
	}
	ours, _, err := refprover.Prove(context.Background(), curve.BLS12381{}, c.Key(), W, A, B, 2)
	if err != nil {
		t.Fatal(err)
	}
	proof := keyconv.ProofToGnark(ours)
	public, err := w.Public()
	if err != nil {
		t.Fatal(err)
	}
	if err := groth16.Verify(proof, c.VK, public); err != nil {
		t.Fatalf("groth16.Verify refused the sha256 proof: %v", err)
	}
	other, err := spec.Witness(1, 1)
	if err != nil {
		t.Fatal(err)
	}
	otherPublic, err := other.Public()
	if err != nil {
		t.Fatal(err)
	}
	if err := groth16.Verify(proof, c.VK, otherPublic); err == nil {
		t.Fatal("the proof verified against another message's digest")
	}
}
