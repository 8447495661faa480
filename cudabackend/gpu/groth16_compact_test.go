//go:build cuda

package gpu

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/groth16"
	groth16_bls12381 "github.com/consensys/gnark/backend/groth16/bls12-381"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/circuits"
	"github.com/zkhost/zkhost/sdk/constraints"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyconv"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/refprover"
)

// compactFixture is one small circuit with its key and a solved partition:
// the gnark solution (W, A, B, C) is what a full partition carries and the
// reference every compact result is held to.
type compactFixture struct {
	name   string
	m      *constraints.Matrices
	pk     *keyfile.BLS12381Key
	vk     groth16.VerifyingKey
	sol    *cs.R1CSSolution
	public witness.Witness
}

var (
	compactOnce     sync.Once
	compactFixtures []*compactFixture
	compactErr      error
)

// compactCircuits builds (once per test binary) the circuits the compact tests
// prove: sha256 over one block, bit-heavy (99.7% of its wires 0 or 1, its
// sums long bit recompositions), and a small Poseidon2 Merkle proof, whose
// wires are mostly full field elements and whose linear layers are rows of
// many terms with coefficients other than 1 and -1. Both leave the domain
// partly empty (n < N).
func compactCircuits(t *testing.T) []*compactFixture {
	t.Helper()
	compactOnce.Do(func() {
		for _, c := range []struct {
			name   string
			params map[string]int
		}{
			{"sha256", map[string]int{"b": 1}},
			{"merkle", map[string]int{"k": 2, "d": 6}},
		} {
			f, err := newCompactFixture(c.name, c.params)
			if err != nil {
				compactErr = fmt.Errorf("%s: %w", c.name, err)
				return
			}
			compactFixtures = append(compactFixtures, f)
		}
	})
	if compactErr != nil {
		t.Fatal(compactErr)
	}
	return compactFixtures
}

// newCompactFixture compiles the example circuit name, sets it up, converts
// the key and solves one witness. Deliberately parallel to cpubackend's
// newFixture: see why there.
func newCompactFixture(name string, params map[string]int) (*compactFixture, error) {
	spec, err := circuits.Lookup(name, params)
	if err != nil {
		return nil, err
	}
	ccs, err := frontend.Compile(circuits.Curve.ScalarField(), r1cs.NewBuilder, spec.Circuit())
	if err != nil {
		return nil, err
	}
	m, err := matricesOf(ccs)
	if err != nil {
		return nil, err
	}
	gpk, vk, err := groth16.Setup(ccs)
	if err != nil {
		return nil, err
	}
	pk, err := keyconv.FromGnark(gpk.(*groth16_bls12381.ProvingKey))
	if err != nil {
		return nil, err
	}
	full, err := spec.Witness(0, 1)
	if err != nil {
		return nil, err
	}
	public, err := full.Public()
	if err != nil {
		return nil, err
	}
	sol, err := ccs.Solve(full)
	if err != nil {
		return nil, err
	}
	return &compactFixture{name: spec.ID(), m: m, pk: pk, vk: vk, sol: sol.(*cs.R1CSSolution), public: public}, nil
}

// matricesOf is a gnark R1CS's constraint matrices (the sdk's converter will
// replace this test helper): wires are gnark's variable IDs, the indices of
// its solution's W, and coefficients its coefficient table's.
func matricesOf(ccs constraint.ConstraintSystem) (*constraints.Matrices, error) {
	r, ok := ccs.(*cs.R1CS)
	if !ok {
		return nil, fmt.Errorf("not a BLS12-381 R1CS: %T", ccs)
	}
	return keyconv.Constraints(r)
}

// packW is the compact form of w (sdk.PackW): other and bits bitmaps, and
// the values of the wires neither 0 nor 1.
func packW(w []fr.Element) (other, bits []uint64, values []fr.Element) {
	words := CompactWords(len(w))
	other, bits = make([]uint64, words), make([]uint64, words)
	values = make([]fr.Element, sdk.CountOther(w, 1))
	if _, err := sdk.PackW(w, other, bits, values, 1); err != nil {
		panic(err) // the lengths are right by construction
	}
	return other, bits, values
}

// stageCompact packs w into s's staging and returns the values' count.
func stageCompact(t *testing.T, s *Groth16Slot, w []fr.Element) int {
	t.Helper()
	other, bits, values := packW(w)
	err := s.StageCompactWith(len(w), len(values), func(o, b []uint64, v []fr.Element) error {
		if len(o) != len(other) || len(b) != len(bits) || len(v) != len(values) {
			return fmt.Errorf("fill got %d, %d words and %d values, want %d, %d, %d", len(o), len(b), len(v), len(other), len(bits), len(values))
		}
		copy(o, other)
		copy(b, bits)
		copy(v, values)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return len(values)
}

// compactKey loads f's key (streamed with chunk > 0) with its constraints,
// and one slot.
func compactKey(t *testing.T, f *compactFixture, chunk uint64) (*Groth16Key, *Groth16Slot) {
	t.Helper()
	key, err := LoadGroth16Key(0, f.pk, chunk)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { key.Free() })
	before := key.DeviceBytes()
	if key.HasConstraints() {
		t.Fatal("a fresh key has constraints")
	}
	if err := key.SetConstraints(f.m); err != nil {
		t.Fatal(err)
	}
	if !key.HasConstraints() || key.Info().Constraints != int(f.m.NbConstraints()) {
		t.Errorf("after SetConstraints: HasConstraints %v, Info().Constraints %d, want %d", key.HasConstraints(), key.Info().Constraints, f.m.NbConstraints())
	}
	if got, want := key.DeviceBytes()-before, ConstraintsDeviceBytes(f.m); got != want || key.Info().ConstraintBytes != want {
		t.Errorf("SetConstraints added %d device bytes (Info says %d), ConstraintsDeviceBytes %d", got, key.Info().ConstraintBytes, want)
	}
	slot, err := key.NewSlot()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { slot.Free() })
	return key, slot
}

// TestCompactEvaluateMatchesEval expands a compact W and evaluates A, B and C
// on the device, and holds them word for word to constraints.Matrices.Eval
// (itself checked against gnark's solution): W, every row, zeros past the
// constraints up to the domain, and no unsatisfied constraint.
func TestCompactEvaluateMatchesEval(t *testing.T) {
	needDevice(t)
	for _, f := range compactCircuits(t) {
		t.Run(f.name, func(t *testing.T) {
			n := int(f.m.NbConstraints())
			W := f.sol.W
			a, b, c := make([]fr.Element, n), make([]fr.Element, n), make([]fr.Element, n)
			if bad := f.m.Eval(W, a, b, c); bad != -1 {
				t.Fatalf("Eval finds constraint %d unsatisfied by gnark's solution", bad)
			}
			for i := range n {
				if !a[i].Equal(&f.sol.A[i]) || !b[i].Equal(&f.sol.B[i]) || !c[i].Equal(&f.sol.C[i]) {
					t.Fatalf("row %d: Eval differs from gnark's solution (the matrices helper is wrong)", i)
				}
			}
			key, slot := compactKey(t, f, 0)
			if n >= int(f.pk.DomainSize) {
				t.Fatalf("%d constraints fill the domain %d: no padding to test", n, f.pk.DomainSize)
			}
			nbOther := stageCompact(t, slot, W)
			t.Logf("%d wires, %d neither 0 nor 1; %d constraints in a domain of %d", len(W), nbOther, n, f.pk.DomainSize)
			dw, da, db, dc, bad, err := key.evalCompact(slot, n, nbOther)
			if err != nil {
				t.Fatal(err)
			}
			if bad != -1 {
				t.Errorf("device finds constraint %d unsatisfied", bad)
			}
			for i := range W {
				if !dw[i].Equal(&W[i]) {
					t.Fatalf("W[%d]: device %s, want %s", i, dw[i].String(), W[i].String())
				}
			}
			for i := range da {
				var wa, wb, wc fr.Element // zero past n
				if i < n {
					wa, wb, wc = a[i], b[i], c[i]
				}
				for _, x := range []struct {
					name      string
					got, want *fr.Element
				}{{"A", &da[i], &wa}, {"B", &db[i], &wb}, {"C", &dc[i], &wc}} {
					if !x.got.Equal(x.want) {
						t.Fatalf("%s[%d] (of %d constraints): device %s, want %s", x.name, i, n, x.got.String(), x.want.String())
					}
				}
			}
		})
	}
}

// TestProveCompactMatchesProve proves one partition both ways, full (W, A, B
// from gnark's solver) and compact, through a resident and a streamed key:
// the sums must be equal, and the compact proof must verify with gnark.
func TestProveCompactMatchesProve(t *testing.T) {
	needDevice(t)
	for _, f := range compactCircuits(t) {
		for _, chunk := range []uint64{0, 1 << 11} {
			t.Run(fmt.Sprintf("%s/chunk=%d", f.name, chunk), func(t *testing.T) {
				key, slot := compactKey(t, f, chunk)
				n := len(f.sol.A)
				if err := slot.Stage(f.sol.W, f.sol.A, f.sol.B, 2); err != nil {
					t.Fatal(err)
				}
				want, _, err := key.Prove(slot, n)
				if err != nil {
					t.Fatal(err)
				}
				// Twice: the second compact proof finds the first's staging
				// and device state in the slot.
				for round := range 2 {
					nbOther := stageCompact(t, slot, f.sol.W)
					got, timing, err := key.ProveCompact(slot, n, nbOther)
					if err != nil {
						t.Fatal(err)
					}
					checkSums(t, got, want)
					if timing.Evaluate <= 0 || timing.Total <= 0 {
						t.Errorf("round %d: timing %+v: no evaluation or total time", round, timing)
					}
					r, s, err := refprover.RandomRS[fr.Element]()
					if err != nil {
						t.Fatal(err)
					}
					if err := groth16.Verify(keyconv.ProofToGnark(refprover.Assemble(curve.BLS12381{}, f.pk, got, r, s)), f.vk, f.public); err != nil {
						t.Fatalf("round %d: groth16.Verify: %v", round, err)
					}
				}
			})
		}
	}
}

// checkSums compares two proofs' MSM sums.
func checkSums(t *testing.T, got, want refprover.MSMResults[bls12381.G1Jac, bls12381.G2Jac]) {
	t.Helper()
	if !got.Ar.Equal(&want.Ar) || !got.Bs1.Equal(&want.Bs1) || !got.Krs.Equal(&want.Krs) || !got.Krs2.Equal(&want.Krs2) {
		t.Errorf("compact G1 sums differ from the full partition's: A %v, B %v, K %v, Z %v",
			got.Ar.Equal(&want.Ar), got.Bs1.Equal(&want.Bs1), got.Krs.Equal(&want.Krs), got.Krs2.Equal(&want.Krs2))
	}
	if !got.Bs2.Equal(&want.Bs2) {
		t.Error("compact G2 sum differs from the full partition's")
	}
}

// TestProveCompactUnsatisfied changes one wire of a valid witness (a 0 to 1,
// a 1 to 2, a value to itself plus one: each path of the expansion) and
// expects the device to name the constraint Eval names, evaluating the wrong
// witness's rows as Eval does; the slot then proves the right witness.
func TestProveCompactUnsatisfied(t *testing.T) {
	needDevice(t)
	for _, f := range compactCircuits(t) {
		t.Run(f.name, func(t *testing.T) {
			key, slot := compactKey(t, f, 0)
			n := int(f.m.NbConstraints())
			a, b, c := make([]fr.Element, n), make([]fr.Element, n), make([]fr.Element, n)
			// One wire of each kind, from the last (internal, surely in some
			// constraint) down.
			tried := map[string]bool{}
			var one fr.Element
			one.SetOne()
			for j := len(f.sol.W) - 1; j > 0 && len(tried) < 3; j-- {
				kind := "value"
				if f.sol.W[j].IsZero() {
					kind = "zero"
				} else if f.sol.W[j].IsOne() {
					kind = "one"
				}
				if tried[kind] {
					continue
				}
				w := append([]fr.Element(nil), f.sol.W...)
				w[j].Add(&w[j], &one)
				want := f.m.Eval(w, a, b, c)
				if want < 0 {
					continue // a wire no constraint pins down alone
				}
				tried[kind] = true
				nbOther := stageCompact(t, slot, w)
				_, _, _, dc, bad, err := key.evalCompact(slot, n, nbOther)
				if err != nil {
					t.Fatal(err)
				}
				if bad != want {
					t.Errorf("wire %d (%s) changed: device evaluation finds constraint %d, Eval %d", j, kind, bad, want)
				}
				for i := range n {
					if !dc[i].Equal(&c[i]) {
						t.Fatalf("wire %d (%s) changed: C[%d] differs from Eval", j, kind, i)
					}
				}
				_, _, err = key.ProveCompact(slot, n, nbOther)
				var ue *UnsatisfiedError
				if !errors.As(err, &ue) || !errors.Is(err, ErrUnsatisfied) || ue.Constraint != want {
					t.Errorf("wire %d (%s) changed: ProveCompact = %v, want UnsatisfiedError{%d}", j, kind, err, want)
				} else {
					t.Logf("wire %d (%s): %v", j, kind, err)
				}
			}
			if len(tried) == 0 {
				t.Fatal("no changed wire broke a constraint")
			}
			nbOther := stageCompact(t, slot, f.sol.W)
			if _, _, err := key.ProveCompact(slot, n, nbOther); err != nil {
				t.Fatalf("the right witness after the wrong ones: %v", err)
			}
		})
	}
}

// TestProveCompactRefusals checks what compact proofs refuse: a key without
// constraints, matrices that do not fit the key, a second constraint system,
// staging that does not fit, a constraint count other than the system's, and
// a values count other than the other bitmap's (found on the device, which
// reads no value past it). The slot proves a right partition afterwards.
func TestProveCompactRefusals(t *testing.T) {
	needDevice(t)
	f := compactCircuits(t)[1] // merkle, the smaller
	n := int(f.m.NbConstraints())

	bare, err := LoadGroth16Key(0, f.pk, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer bare.Free()
	bareSlot, err := bare.NewSlot()
	if err != nil {
		t.Fatal(err)
	}
	defer bareSlot.Free()
	nbOther := stageCompact(t, bareSlot, f.sol.W)
	if _, _, err := bare.ProveCompact(bareSlot, n, nbOther); !errors.Is(err, ErrInvalid) {
		t.Errorf("ProveCompact on a key without constraints = %v, want ErrInvalid", err)
	}
	wrongWires := *f.m
	wrongWires.NbWires++
	broken := *f.m
	broken.A.Start = append([]uint32(nil), f.m.A.Start...)
	broken.A.Start[1] = uint32(len(f.m.A.Wire)) + 1
	for name, m := range map[string]*constraints.Matrices{"wires": &wrongWires, "inconsistent": &broken, "nil": nil} {
		if err := bare.SetConstraints(m); !errors.Is(err, ErrInvalid) {
			t.Errorf("SetConstraints (%s) = %v, want ErrInvalid", name, err)
		}
	}
	if bare.HasConstraints() {
		t.Error("a refused SetConstraints left the key with constraints")
	}

	key, slot := compactKey(t, f, 0)
	if err := key.SetConstraints(f.m); !errors.Is(err, ErrInvalid) {
		t.Errorf("a second SetConstraints = %v, want ErrInvalid", err)
	}
	called := false
	fill := func(o, b []uint64, v []fr.Element) error { called = true; return nil }
	for _, c := range [][2]int{{len(f.sol.W) - 1, 0}, {len(f.sol.W), -1}, {len(f.sol.W), slot.CompactCapacity() + 1}} {
		if err := slot.StageCompactWith(c[0], c[1], fill); !errors.Is(err, ErrInvalid) || called {
			t.Errorf("StageCompactWith(%d, %d) = %v (fill called: %v), want ErrInvalid", c[0], c[1], err, called)
		}
	}
	nbOther = stageCompact(t, slot, f.sol.W)
	if nbOther == 0 {
		t.Fatal("the merkle witness has no value beyond 0 and 1")
	}
	for _, c := range []struct {
		name       string
		n, nbOther int
	}{
		{"fewer constraints", n - 1, nbOther},
		{"more constraints", n + 1, nbOther},
		{"values beyond the slot", n, slot.CompactCapacity() + 1},
		{"fewer values than other marks", n, nbOther - 1},
		{"more values than other marks", n, nbOther + 1},
	} {
		if _, _, err := key.ProveCompact(slot, c.n, c.nbOther); !errors.Is(err, ErrInvalid) {
			t.Errorf("ProveCompact (%s) = %v, want ErrInvalid", c.name, err)
		} else {
			t.Logf("%s: %v", c.name, err)
		}
	}
	if _, _, err := key.ProveCompact(slot, n, nbOther); err != nil {
		t.Fatalf("a right compact partition after the refusals: %v", err)
	}
}
