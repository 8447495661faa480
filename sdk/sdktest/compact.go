package sdktest

import (
	"context"
	"strconv"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/witness"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/circuit"
	"github.com/zkhost/zkhost/sdk/constraints"
	"github.com/zkhost/zkhost/sdk/keyconv"
	"github.com/zkhost/zkhost/sdk/shm"
)

// testCompact checks compact partitions (sdk.FormatCompactW). A backend that
// does not declare them (Description.CompactW) must refuse one clearly. One
// that does must take the constraints of the suite's small keys
// (KeyInfo.CompactW), prove compact partitions into proofs gnark's verifier
// accepts, refuse a W that breaks a constraint (ErrInvalidArgument: it
// evaluates A and B itself, so it checks them), and refuse a compact
// partition for a key loaded without constraints.
func (s *suite) testCompact(t *testing.T, chain, merkle *fixture) {
	ctx := context.Background()
	if !s.desc.CompactW {
		h, _, _ := s.compactPartition(t, chain, nil, 0, -1)
		_, err := s.backend.Prove(ctx, sdk.ProveRequest{KeyID: chain.key.ID, Partition: h})
		wantKind(t, "a compact partition sent to a backend that does not declare CompactW", err, sdk.ErrInvalidArgument, sdk.ErrUnimplemented)
		return
	}
	for _, f := range []*fixture{chain, merkle} {
		fc, m, info := s.loadWithConstraints(t, f)
		ref := fc.key
		if !info.CompactW {
			t.Errorf("LoadKey(%s): the backend declares CompactW but did not take the constraints of a %d-constraint circuit", ref.ID, m.NbConstraints())
			continue
		}
		for i := range 2 {
			h, pub, _ := s.compactPartition(t, f, m, i, -1)
			if _, err := s.prove(ctx, fc, h, pub); err != nil {
				t.Errorf("compact: %v", err)
			}
		}
		// A W that breaks a constraint: the backend checks what it evaluates.
		h, _, bad := s.compactPartition(t, f, m, 2, brokenWire(t, f, m))
		_, err := s.backend.Prove(ctx, sdk.ProveRequest{KeyID: ref.ID, Partition: h})
		wantKind(t, "a compact W that breaks constraint "+strconv.Itoa(bad), err, sdk.ErrInvalidArgument)
		// The same partition for the key loaded without its constraints.
		good, _, _ := s.compactPartition(t, f, m, 0, -1)
		_, err = s.backend.Prove(ctx, sdk.ProveRequest{KeyID: f.key.ID, Partition: good})
		wantKind(t, "a compact partition for a key loaded without constraints", err, sdk.ErrInvalidArgument)
	}
}

// loadWithConstraints loads f's key again, as "<id>-compact", with its
// circuit's constraint matrices (unloaded when t ends), and returns the
// fixture of that key, the matrices and what LoadKey answered.
func (s *suite) loadWithConstraints(t *testing.T, f *fixture) (*fixture, *constraints.Matrices, sdk.KeyInfo) {
	t.Helper()
	m, err := keyconv.Constraints(f.c.System)
	if err != nil {
		t.Fatal(err)
	}
	file, err := s.store.WriteConstraints(f.c.Name+"-constraints", m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { file.Close() })
	ch := file.Handle()
	fc := *f
	fc.key.ID += "-compact"
	fc.key.Constraints = &ch
	info, err := s.backend.LoadKey(context.Background(), fc.key)
	if err != nil {
		t.Fatalf("LoadKey(%s) with its constraints: %v", fc.key.ID, err)
	}
	t.Cleanup(func() { s.backend.UnloadKey(context.Background(), fc.key.ID) })
	return &fc, m, info
}

// brokenWire picks the last wire that some constraint reads: changing it
// breaks that constraint.
func brokenWire(t *testing.T, f *fixture, m *constraints.Matrices) int {
	t.Helper()
	last := -1
	for _, x := range []*constraints.Matrix{&m.A, &m.B, &m.C} {
		for _, w := range x.Wire {
			last = max(last, int(w))
		}
	}
	if last < f.c.NbPublic {
		t.Fatalf("%s: no constraint reads a private wire", f.c.Name)
	}
	return last
}

// compactPartition solves partition i of f's circuit for W alone and writes it
// compact. With breakWire >= 0, that wire is changed by 2 first, and the
// constraint it then breaks (m's Eval's first) is returned, else -1.
func (s *suite) compactPartition(t *testing.T, f *fixture, m *constraints.Matrices, i, breakWire int) (sdk.PartitionHandle, witness.Witness, int) {
	t.Helper()
	w, err := f.spec.Witness(i, 0)
	if err != nil {
		t.Fatal(err)
	}
	W := make([]fr.Element, f.c.NbWires)
	if err := circuit.SynthesizeInto(f.c, w, 0, W, nil, nil); err != nil {
		t.Fatal(err)
	}
	bad := -1
	if breakWire >= 0 {
		var two fr.Element
		two.SetUint64(2)
		W[breakWire].Add(&W[breakWire], &two)
		n := int(m.NbConstraints())
		if bad = constraints.Eval(m, W, make([]fr.Element, n), make([]fr.Element, n), nil); bad < 0 {
			t.Fatalf("%s: changing wire %d broke no constraint", f.c.Name, breakWire)
		}
	}
	h, err := shm.WriteCompact(s.store, s.partitionName(f, "compact", i), W, uint64(f.c.NbConstraints), 2)
	return s.kept(t, h, err), public(t, w), bad
}
