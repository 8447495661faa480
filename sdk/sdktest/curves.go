package sdktest

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	bnfr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/frontend"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/circuit"
	"github.com/zkhost/zkhost/sdk/constraints"
	"github.com/zkhost/zkhost/sdk/keyconv"
	"github.com/zkhost/zkhost/sdk/shm"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// The checks of the curves beside BLS12-381. A backend that declares BN254
// (Description.Curves) proves a BN254 chain circuit's partitions, every proof checked
// with gnark's BN254 verifier; one that does not refuses the key or its partitions
// with a typed error, so the host proves them elsewhere.

// bn254ChainSteps is the length of the BN254 chain circuit: about 2^10 constraints,
// like the default BLS12-381 chain.
const bn254ChainSteps = 1000

func (s *suite) testBN254(t *testing.T, chain *fixture) {
	f := s.bn254Fixture(t)
	declared := slices.Contains(s.desc.Curves, sdk.CurveBN254)
	_, loadErr := s.backend.LoadKey(context.Background(), f.key)
	if !declared {
		if loadErr == nil {
			h, _ := s.bn254Partition(t, f, 0)
			_, err := s.backend.Prove(context.Background(), sdk.ProveRequest{KeyID: f.key.ID, Partition: h})
			wantKind(t, "Prove of a BN254 partition by a backend that does not declare BN254", err,
				sdk.ErrUnimplemented, sdk.ErrInvalidArgument)
			return
		}
		wantKind(t, "LoadKey of a BN254 key by a backend that does not declare BN254", loadErr,
			sdk.ErrUnimplemented, sdk.ErrInvalidArgument)
		return
	}
	if loadErr != nil {
		t.Fatalf("LoadKey(%s) of a backend that declares BN254: %v", f.key.ID, loadErr)
	}
	for i := range 2 {
		h, pub := s.bn254Partition(t, f, i)
		res, err := s.prove(context.Background(), f, h, pub)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: wall %v, device busy %v", filepath.Base(h.Path), res.Wall, res.DeviceBusy)
	}
	// A BN254 partition asked of the BLS12-381 chain's key is refused.
	h, _ := s.bn254Partition(t, f, 0)
	_, err := s.backend.Prove(context.Background(), sdk.ProveRequest{KeyID: chain.key.ID, Partition: h})
	wantKind(t, "Prove of a BN254 partition with a BLS12-381 key", err, sdk.ErrInvalidArgument)
	if s.desc.CompactW {
		s.testBN254Compact(t, f)
	}
}

// testBN254Compact checks compact partitions of a BN254 key, whose constraint
// coefficients and values are BN254 scalars: a backend may load the key
// without its constraints (KeyInfo.CompactW false: the host then sends full
// partitions); one that takes them proves compact partitions into proofs
// gnark's BN254 verifier accepts and refuses a W that breaks a constraint.
func (s *suite) testBN254Compact(t *testing.T, f *fixture) {
	ctx := context.Background()
	fc, m, info := s.loadWithConstraints(t, f)
	if !info.CompactW {
		t.Logf("%s: the backend loaded the BN254 key without its constraints; its partitions come in full", fc.key.ID)
		return
	}
	for i := range 2 {
		h, pub := s.bn254CompactPartition(t, f, i, -1)
		if _, err := s.prove(ctx, fc, h, pub); err != nil {
			t.Errorf("BN254 compact: %v", err)
		}
	}
	// A W that breaks a constraint: the backend checks what it evaluates.
	h, _ := s.bn254CompactPartition(t, f, 2, brokenWire(t, f, m))
	_, err := s.backend.Prove(ctx, sdk.ProveRequest{KeyID: fc.key.ID, Partition: h})
	wantKind(t, "a BN254 compact W that breaks a constraint", err, sdk.ErrInvalidArgument)
}

// bn254Witness is partition i's witness of the BN254 chain (its input x =
// 3+i), and its bytes as the host receives them.
func bn254Witness(t *testing.T, i int) (witness.Witness, []byte) {
	t.Helper()
	field := ecc.BN254.ScalarField()
	w, err := frontend.NewWitness(testcircuit.ChainAssignmentOver(field, bn254ChainSteps, uint64(3+i), 5), field)
	if err != nil {
		t.Fatal(err)
	}
	data, err := w.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	return w, data
}

// bn254CompactPartition solves partition i of the BN254 chain for W alone and
// writes it compact; with breakWire >= 0, that wire is changed by 2 first.
func (s *suite) bn254CompactPartition(t *testing.T, f *fixture, i, breakWire int) (sdk.PartitionHandle, witness.Witness) {
	t.Helper()
	w, data := bn254Witness(t, i)
	c := f.c
	W := make([]bnfr.Element, c.NbWires)
	words := sdk.CompactWords(uint64(c.NbWires))
	if _, _, err := circuit.SynthesizeInputCompact(c, data, 0, W, make([]uint64, words), make([]uint64, words)); err != nil {
		t.Fatal(err)
	}
	if breakWire >= 0 {
		var two bnfr.Element
		two.SetUint64(2)
		W[breakWire].Add(&W[breakWire], &two)
		m, err := keyconv.Constraints(c.System)
		if err != nil {
			t.Fatal(err)
		}
		n := int(m.NbConstraints())
		if constraints.Eval(m, W, make([]bnfr.Element, n), make([]bnfr.Element, n), nil) < 0 {
			t.Fatalf("%s: changing wire %d broke no constraint", c.Name, breakWire)
		}
	}
	h, err := shm.WriteCompact(s.store, s.partitionName(f, "compact", i), W, uint64(c.NbConstraints), 2)
	return s.kept(t, h, err), public(t, w)
}

// bn254Fixture imports, once per KeyDir, a BN254 chain circuit set up with gnark, as
// a user imports one (circuit.Import), and loads it.
func (s *suite) bn254Fixture(t *testing.T) *fixture {
	t.Helper()
	name := fmt.Sprintf("sdktest-chain-bn254-%d", bn254ChainSteps)
	c, err := loadOrImport(s.cfg.KeyDir, name, func(dir string) (circuit.ImportFiles, error) {
		gf, err := testcircuit.WriteGnarkFilesOn(ecc.BN254, dir, "chain", &testcircuit.Chain{N: bn254ChainSteps},
			testcircuit.ChainAssignmentOver(ecc.BN254.ScalarField(), bn254ChainSteps, 3, 5))
		return circuit.ImportFiles{CCS: gf.CCS, PK: gf.PK, VK: gf.VK, Witness: gf.Witness}, err
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if c.Curve != sdk.CurveBN254 {
		t.Fatalf("the BN254 fixture loaded as %s", c.Curve)
	}
	return &fixture{c: c, key: sdk.KeyRef{ID: c.Name, Path: c.PKPath, Digest: c.PKDigest}}
}

// loadOrImport loads key set name from keyDir, importing it first from the gnark
// files make writes into a scratch directory when it is missing (loadOrMake).
func loadOrImport(keyDir, name string, make func(dir string) (circuit.ImportFiles, error)) (*circuit.Circuit, error) {
	return loadOrMake(keyDir, name, func() error {
		dir, err := os.MkdirTemp(keyDir, ".import-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		files, err := make(dir)
		if err != nil {
			return fmt.Errorf("making the gnark files of %s: %w", name, err)
		}
		res, err := circuit.Import(context.Background(), files, name, keyDir)
		if err != nil {
			return err
		}
		return res.Circuit.Close()
	})
}

// bn254Partition writes partition i of the BN254 chain (its input x = 3+i) as the
// host does, synthesized into the partition's memory, and returns its handle and
// public witness.
func (s *suite) bn254Partition(t *testing.T, f *fixture, i int) (sdk.PartitionHandle, witness.Witness) {
	t.Helper()
	w, data := bn254Witness(t, i)
	c := f.c
	h, err := s.store.WriteRaw(s.partitionName(f, "", i), c.Curve, uint64(c.NbWires), uint64(c.NbConstraints), func(W, A, B []byte) error {
		_, err := circuit.SynthesizeInputRaw(c, data, 0, W, A, B)
		return err
	})
	return s.kept(t, h, err), public(t, w)
}
