package synthgnark

import (
	"bytes"
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"testing"

	cs "github.com/consensys/gnark/constraint/bls12-381"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/circuits"
	"github.com/zkhost/zkhost/sdk/partcheck"
	"github.com/zkhost/zkhost/sdk/shm"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// chain compiles the chain circuit with 2^4 constraints, writes its constraint
// system into a temporary directory and returns it with its CircuitRef.
func chain(t *testing.T) (circuits.Spec, *cs.R1CS, sdk.CircuitRef) {
	t.Helper()
	spec, ccs := testcircuit.Compile(t, "chain", map[string]int{"k": 4})
	var buf bytes.Buffer
	if _, err := ccs.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "chain.ccs")
	if err := os.WriteFile(path, buf.Bytes(), 0o600); err != nil {
		t.Fatal(err)
	}
	nbPublic, nbSecret := ccs.GetNbPublicVariables(), ccs.GetNbSecretVariables()
	return spec, ccs, sdk.CircuitRef{
		ID: "chain", Curve: sdk.CurveBLS12381, CCSPath: path, CCSSHA256: sha256.Sum256(buf.Bytes()),
		NbWires: uint64(nbPublic + nbSecret + ccs.GetNbInternalVariables()), NbConstraints: uint64(ccs.GetNbConstraints()),
		NbPublic: uint64(nbPublic), NbSecret: uint64(nbSecret),
	}
}

// output makes an output for ref's partition as the host does, in a store
// closed when t ends.
func output(t *testing.T, ref sdk.CircuitRef) (*shm.Store, sdk.PartitionHandle) {
	t.Helper()
	store := shm.NewStore()
	t.Cleanup(func() { store.Close() })
	out, err := store.Output("synthgnark-test", sdk.CurveBLS12381, ref.NbWires, ref.NbConstraints)
	if err != nil {
		t.Fatal(err)
	}
	return store, out
}

func TestSynthesize(t *testing.T) {
	spec, ccs, ref := chain(t)
	s := New(Options{})
	ctx := context.Background()
	if err := s.LoadCircuit(ctx, ref); err != nil {
		t.Fatal(err)
	}
	w, err := spec.Witness(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	wb, err := w.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	store, out := output(t, ref)
	if _, err := s.Synthesize(ctx, sdk.SynthesizeRequest{CircuitID: "chain", Witness: wb, Output: out}); err != nil {
		t.Fatal(err)
	}
	h, err := store.Adopt(out)
	if err != nil {
		t.Fatal(err)
	}
	p, err := sdk.OpenPartition(h)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := partcheck.Check(ccs, p.W(), p.A(), p.B()); err != nil {
		t.Errorf("the partition does not satisfy the circuit: %v", err)
	}
}

func TestLoadCircuitRefuses(t *testing.T) {
	_, _, ref := chain(t)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		change func(*sdk.CircuitRef)
	}{
		{"digest of another file", func(r *sdk.CircuitRef) { r.CCSSHA256[0] ^= 1 }},
		{"sizes not the circuit's", func(r *sdk.CircuitRef) { r.NbWires++ }},
		{"no such file", func(r *sdk.CircuitRef) { r.CCSPath += ".missing" }},
		{"another curve", func(r *sdk.CircuitRef) { r.Curve = sdk.CurveBN254 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := ref
			tc.change(&r)
			if err := New(Options{}).LoadCircuit(ctx, r); sdk.KindOf(err) != sdk.ErrInvalidArgument {
				t.Errorf("LoadCircuit: %v, want invalid_argument", err)
			}
		})
	}
	s := New(Options{})
	if err := s.LoadCircuit(ctx, ref); err != nil {
		t.Fatal(err)
	}
	other := ref
	other.CCSSHA256[0] ^= 1
	if err := s.LoadCircuit(ctx, other); sdk.KindOf(err) != sdk.ErrInvalidArgument {
		t.Errorf("LoadCircuit of a loaded ID with another digest: %v, want invalid_argument", err)
	}
	_, out := output(t, ref)
	if _, err := s.Synthesize(ctx, sdk.SynthesizeRequest{CircuitID: "nope", Output: out}); sdk.KindOf(err) != sdk.ErrKeyNotLoaded {
		t.Errorf("Synthesize of an unknown circuit: %v, want key_not_loaded", err)
	}
}
