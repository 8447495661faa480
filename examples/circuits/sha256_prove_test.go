package circuits_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"

	"github.com/zkhost/zkhost/cpubackend"
	"github.com/zkhost/zkhost/examples/circuits"
	"github.com/zkhost/zkhost/host/circuit"
	"github.com/zkhost/zkhost/host/shm"
	"github.com/zkhost/zkhost/sdk"
)

// TestSHA256ProvesOnCPU takes the sha256 circuit the way `zkhost keygen`,
// `zkhost prove` and the CPU backend do (development keys, the host's
// synthesis, a sealed partition, cpubackend's Prove) and checks the proof
// with gnark's groth16.Verify; a proof against another partition's public
// digest must fail.
func TestSHA256ProvesOnCPU(t *testing.T) {
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
	store := shm.NewStore()
	defer store.Close()
	h, err := store.Write("sha256-test", sdk.CurveBLS12381, W, A, B)
	if err != nil {
		t.Fatal(err)
	}
	b := cpubackend.New(cpubackend.Options{Threads: 2})
	defer b.Close()
	ctx := context.Background()
	if _, err := b.LoadKey(ctx, sdk.KeyRef{ID: spec.ID(), Path: c.PKPath, Digest: c.PKDigest}); err != nil {
		t.Fatal(err)
	}
	res, err := b.Prove(ctx, sdk.ProveRequest{KeyID: spec.ID(), Partition: h})
	if err != nil {
		t.Fatal(err)
	}
	proof := groth16.NewProof(ecc.BLS12_381)
	if _, err := proof.ReadFrom(bytes.NewReader(res.Proof)); err != nil {
		t.Fatalf("decoding the proof: %v", err)
	}
	public, err := w.Public()
	if err != nil {
		t.Fatal(err)
	}
	if err := groth16.Verify(proof, c.VK, public); err != nil {
		t.Fatalf("groth16.Verify refused the CPU backend's sha256 proof: %v", err)
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
