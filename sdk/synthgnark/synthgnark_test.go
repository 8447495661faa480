package synthgnark

import (
	"bytes"
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/constraint"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/circuits"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/partcheck"
	"github.com/zkhost/zkhost/sdk/shm"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// chain compiles the chain circuit with 2^4 constraints on curve id, writes its
// constraint system into a temporary directory and returns it with its
// CircuitRef.
func chain(t *testing.T, id ecc.ID) (circuits.Spec, constraint.ConstraintSystem, sdk.CircuitRef) {
	t.Helper()
	spec, ccs := testcircuit.CompileOn(t, id, "chain", map[string]int{"k": 4})
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
		ID: "chain", Curve: sdk.Curve(curve.Name(id)), CCSPath: path, CCSSHA256: sha256.Sum256(buf.Bytes()),
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
	out, err := store.Output("synthgnark-test", ref.Curve, ref.NbWires, ref.NbConstraints)
	if err != nil {
		t.Fatal(err)
	}
	return store, out
}

// TestSynthesize solves a chain partition of each curve into an output made as
// the host makes it, and checks it against every constraint.
func TestSynthesize(t *testing.T) {
	for _, id := range curve.IDs {
		t.Run(curve.Name(id), func(t *testing.T) {
			spec, ccs, ref := chain(t, id)
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
			if err := partcheck.CheckPartition(ccs, p); err != nil {
				t.Errorf("the partition does not satisfy the circuit: %v", err)
			}
		})
	}
}

// TestWitnessOfAnotherCurve sends a BN254 circuit a BLS12-381 witness of the
// same circuit: refused, the output left as the host made it.
func TestWitnessOfAnotherCurve(t *testing.T) {
	_, _, ref := chain(t, ecc.BN254)
	blsSpec, _, _ := chain(t, ecc.BLS12_381)
	s := New(Options{})
	ctx := context.Background()
	if err := s.LoadCircuit(ctx, ref); err != nil {
		t.Fatal(err)
	}
	w, err := blsSpec.Witness(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	wb, err := w.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	_, out := output(t, ref)
	_, err = s.Synthesize(ctx, sdk.SynthesizeRequest{CircuitID: "chain", Witness: wb, Output: out})
	if sdk.KindOf(err) != sdk.ErrInvalidArgument {
		t.Errorf("Synthesize of a BLS12-381 witness for a BN254 circuit: %v, want invalid_argument", err)
	}
	if data, err := os.ReadFile(out.Path); err != nil || strings.Trim(string(data), "\x00") != "" {
		t.Errorf("a refused request changed the output (%v)", err)
	}
}

func TestLoadCircuitRefuses(t *testing.T) {
	_, _, ref := chain(t, ecc.BLS12_381)
	_, _, bnRef := chain(t, ecc.BN254)
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		ref    sdk.CircuitRef
		change func(*sdk.CircuitRef)
	}{
		{"digest of another file", ref, func(r *sdk.CircuitRef) { r.CCSSHA256[0] ^= 1 }},
		{"sizes not the circuit's", ref, func(r *sdk.CircuitRef) { r.NbWires++ }},
		{"no such file", ref, func(r *sdk.CircuitRef) { r.CCSPath += ".missing" }},
		{"BLS12-381 system said to be BN254", ref, func(r *sdk.CircuitRef) { r.Curve = sdk.CurveBN254 }},
		{"BN254 system said to be BLS12-381", bnRef, func(r *sdk.CircuitRef) { r.Curve = sdk.CurveBLS12381 }},
		{"a curve it does not solve", ref, func(r *sdk.CircuitRef) { r.Curve = "bw6-761" }},
		{"not a constraint system", ref, func(r *sdk.CircuitRef) {
			junk := bytes.Repeat([]byte{0xff}, 100)
			r.CCSPath = filepath.Join(t.TempDir(), "junk.ccs")
			if err := os.WriteFile(r.CCSPath, junk, 0o600); err != nil {
				t.Fatal(err)
			}
			r.CCSSHA256 = sha256.Sum256(junk)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := tc.ref
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
