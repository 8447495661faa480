//go:build cuda

package gpu

import (
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/groth16"
	groth16_bls12381 "github.com/consensys/gnark/backend/groth16/bls12-381"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"

	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyconv"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/refprover"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// TestGroth16Slots proves partitions of a chain circuit through two slots of one
// key at once, each slot reused for several proofs (the backend's steady state:
// staging refilled while the other slot computes), and checks every proof with
// gnark's groth16.Verify. Each proof has its own witness, so a slot that
// proved from another slot's buffers, or from stale staging, fails to verify.
func TestGroth16Slots(t *testing.T) {
	needDevice(t)
	const steps, slots, perSlot = 1 << 12, 2, 3
	ccs, vk, pk := setupKey(t, &testcircuit.Chain{N: steps})
	type partition struct {
		sol    *cs.R1CSSolution
		public witness.Witness
	}
	parts := make([]partition, slots*perSlot)
	for i := range parts {
		parts[i].public, parts[i].sol = solveFor(t, ccs, testcircuit.ChainAssignment(steps, uint64(3+i), uint64(5+2*i)))
	}

	key, err := LoadGroth16Key(0, pk, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer key.Free()
	all := make([]*Groth16Slot, slots)
	for s := range all {
		if all[s], err = key.NewSlot(); err != nil {
			t.Fatal(err)
		}
		defer all[s].Free()
		logN := uint32(bits.TrailingZeros64(pk.DomainSize))
		if got, want := all[s].DeviceBytes(), SlotDeviceBytes(logN, int(pk.NbWires)); got != want {
			t.Errorf("slot holds %d device bytes, SlotDeviceBytes says %d", got, want)
		}
		if got, want := all[s].HostBytes(), SlotHostBytes(logN, int(pk.NbWires)); got != want {
			t.Errorf("slot holds %d pinned bytes, SlotHostBytes says %d", got, want)
		}
	}
	var wg sync.WaitGroup
	errs := make([]error, len(parts))
	for s, slot := range all {
		wg.Go(func() {
			for j := range perSlot {
				i := s*perSlot + j
				p := parts[i]
				errs[i] = func() error {
					if err := slot.Stage(p.sol.W, p.sol.A, p.sol.B, 2); err != nil {
						return err
					}
					res, _, err := key.Prove(slot, len(p.sol.A))
					if err != nil {
						return err
					}
					r, s, err := refprover.RandomRS[fr.Element]()
					if err != nil {
						return err
					}
					if err := groth16.Verify(keyconv.ProofToGnark(refprover.Assemble(curve.BLS12381{}, pk, res, r, s)), vk, p.public); err != nil {
						return fmt.Errorf("groth16.Verify: %w", err)
					}
					return nil
				}()
			}
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("partition %d (slot %d): %v", i, i/perSlot, err)
		}
	}
}

// TestGroth16SlotRefusals checks the slot's size checks: staging that does not
// match the key is refused before anything reaches the device.
func TestGroth16SlotRefusals(t *testing.T) {
	needDevice(t)
	_, _, pk := setupKey(t, &testcircuit.Chain{N: 64})
	key, err := LoadGroth16Key(0, pk, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer key.Free()
	slot, err := key.NewSlot()
	if err != nil {
		t.Fatal(err)
	}
	defer slot.Free()
	w := make([]fr.Element, pk.NbWires)
	a := make([]fr.Element, pk.DomainSize)
	for _, tc := range []struct {
		name    string
		w, a, b []fr.Element
	}{
		{"wires", w[1:], a, a},
		{"A and B differ", w, a, a[1:]},
		{"no constraints", w, nil, nil},
		{"above the domain", w, append(a, fr.Element{}), append(a, fr.Element{})},
	} {
		if err := slot.Stage(tc.w, tc.a, tc.b, 2); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: Stage = %v, want ErrInvalid", tc.name, err)
		}
	}
	// StageWith refuses the same sizes before it calls fill; a fit one gets
	// the staging at the partition's size, and fill's error back.
	called := false
	fill := func(sw, sa, sb []fr.Element) error { called = true; return nil }
	for _, c := range [][2]int{{len(w) - 1, len(a)}, {len(w), 0}, {len(w), len(a) + 1}} {
		if err := slot.StageWith(c[0], c[1], fill); !errors.Is(err, ErrInvalid) || called {
			t.Errorf("StageWith(%d, %d) = %v (fill called: %v), want ErrInvalid", c[0], c[1], err, called)
		}
	}
	errFill := errors.New("fill failed")
	err = slot.StageWith(len(w), len(a)-1, func(sw, sa, sb []fr.Element) error {
		if len(sw) != len(w) || len(sa) != len(a)-1 || len(sb) != len(a)-1 {
			t.Errorf("StageWith gave fill %d, %d and %d elements, want %d, %d, %d", len(sw), len(sa), len(sb), len(w), len(a)-1, len(a)-1)
		}
		return errFill
	})
	if !errors.Is(err, errFill) {
		t.Errorf("StageWith = %v, want fill's error", err)
	}
	for _, n := range []int{0, int(pk.DomainSize) + 1} {
		if _, _, err := key.Prove(slot, n); !errors.Is(err, ErrInvalid) {
			t.Errorf("Prove of %d constraints = %v, want ErrInvalid", n, err)
		}
	}
}

// setupKey compiles circuit over BLS12-381 and runs gnark's setup for it: the
// constraint system, gnark's verifying key and the proving key in the SDK's form.
func setupKey(t *testing.T, circuit frontend.Circuit) (constraint.ConstraintSystem, groth16.VerifyingKey, *keyfile.BLS12381Key) {
	t.Helper()
	return setupOn(t, ecc.BLS12_381, circuit, func(gpk groth16.ProvingKey) (*keyfile.BLS12381Key, error) {
		return keyconv.FromGnark(gpk.(*groth16_bls12381.ProvingKey))
	})
}

// setupOn compiles circuit over curve id's scalar field and sets it up with
// gnark: its constraint system, verifying key and proving key, converted to
// zkhost's format by convert.
func setupOn[G1, G2 any](t *testing.T, id ecc.ID, circuit frontend.Circuit, convert func(groth16.ProvingKey) (*keyfile.ProvingKey[G1, G2], error)) (constraint.ConstraintSystem, groth16.VerifyingKey, *keyfile.ProvingKey[G1, G2]) {
	t.Helper()
	ccs, err := frontend.Compile(id.ScalarField(), r1cs.NewBuilder, circuit)
	if err != nil {
		t.Fatal(err)
	}
	gpk, vk, err := groth16.Setup(ccs)
	if err != nil {
		t.Fatal(err)
	}
	pk, err := convert(gpk)
	if err != nil {
		t.Fatal(err)
	}
	return ccs, vk, pk
}

// solveFor solves ccs for assignment: its public witness and gnark's solution.
func solveFor(t *testing.T, ccs constraint.ConstraintSystem, assignment frontend.Circuit) (witness.Witness, *cs.R1CSSolution) {
	t.Helper()
	public, sol := solveOn(t, ecc.BLS12_381, ccs, assignment)
	return public, sol.(*cs.R1CSSolution)
}

// solveOn solves ccs, over curve id's scalar field, for assignment: its public
// witness and gnark's solution.
func solveOn(t *testing.T, id ecc.ID, ccs constraint.ConstraintSystem, assignment frontend.Circuit) (witness.Witness, any) {
	t.Helper()
	full, err := frontend.NewWitness(assignment, id.ScalarField())
	if err != nil {
		t.Fatal(err)
	}
	public, err := full.Public()
	if err != nil {
		t.Fatal(err)
	}
	sol, err := ccs.Solve(full)
	if err != nil {
		t.Fatal(err)
	}
	return public, sol
}
