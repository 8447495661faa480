//go:build cuda

package gpu

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	blsfr "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bn254"
	bnfr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/groth16"
	groth16_bls12381 "github.com/consensys/gnark/backend/groth16/bls12-381"
	groth16_bn254 "github.com/consensys/gnark/backend/groth16/bn254"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	csbn "github.com/consensys/gnark/constraint/bn254"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/circuits"
	"github.com/zkhost/zkhost/sdk/constraints"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyconv"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/refprover"
)

// compactFixture is one small circuit on the curve c binds, with its key and
// a solved partition: the gnark solution (W, A, B, C) is what a full
// partition carries and the reference every compact result is held to.
type compactFixture[S ~[4]uint64, G1, G1J, G2, G2J any] struct {
	name       string
	c          curve.Curve[S, G1, G1J, G2, G2J]
	m          *constraints.Matrices
	pk         *keyfile.ProvingKey[G1, G2]
	W, A, B, C []S
	// verify is gnark's groth16.Verify of a proof against the circuit's
	// verifying key and the partition's public witness.
	verify func(p *sdk.Proof[G1, G2]) error
}

// The fixtures of each curve.
type (
	blsCompact = compactFixture[blsfr.Element, bls12381.G1Affine, bls12381.G1Jac, bls12381.G2Affine, bls12381.G2Jac]
	bnCompact  = compactFixture[bnfr.Element, bn254.G1Affine, bn254.G1Jac, bn254.G2Affine, bn254.G2Jac]
)

// lazy builds a value once per test binary.
type lazy[T any] struct {
	once sync.Once
	v    T
	err  error
}

func (l *lazy[T]) get(t *testing.T, build func() (T, error)) T {
	t.Helper()
	l.once.Do(func() { l.v, l.err = build() })
	if l.err != nil {
		t.Fatal(l.err)
	}
	return l.v
}

var (
	blsFixtures lazy[[]*blsCompact]
	bnFixtures  lazy[[]*bnCompact]
)

// compactCircuits are the circuits the compact tests prove, on each curve:
// sha256 over one block, bit-heavy (nearly all of its wires 0 or 1, its sums
// long bit recompositions), and a small Poseidon2 Merkle proof, whose wires
// are mostly full field elements and whose linear layers are rows of many
// terms with coefficients other than 1 and -1. Both leave the domain partly
// empty (n < N).
var compactCircuits = []struct {
	name   string
	params map[string]int
}{
	{"sha256", map[string]int{"b": 1}},
	{"merkle", map[string]int{"k": 2, "d": 6}},
}

// blsCircuits builds (once per test binary) the BLS12-381 fixtures.
func blsCircuits(t *testing.T) []*blsCompact {
	return blsFixtures.get(t, func() ([]*blsCompact, error) {
		return compactFixtures(curve.BLS12381{}, func(gpk groth16.ProvingKey) (*keyfile.BLS12381Key, error) {
			return keyconv.FromGnark(gpk.(*groth16_bls12381.ProvingKey))
		}, func(p *sdk.Proof[bls12381.G1Affine, bls12381.G2Affine]) groth16.Proof { return keyconv.ProofToGnark(p) })
	})
}

// bnCircuits builds (once per test binary) the BN254 fixtures.
func bnCircuits(t *testing.T) []*bnCompact {
	return bnFixtures.get(t, func() ([]*bnCompact, error) {
		return compactFixtures(curve.BN254{}, func(gpk groth16.ProvingKey) (*keyfile.BN254Key, error) {
			return keyconv.FromGnarkBN254(gpk.(*groth16_bn254.ProvingKey))
		}, func(p *sdk.Proof[bn254.G1Affine, bn254.G2Affine]) groth16.Proof { return keyconv.ProofToGnarkBN254(p) })
	})
}

// compactFixtures builds compactCircuits on the curve c binds.
func compactFixtures[S ~[4]uint64, G1, G1J, G2, G2J any](c curve.Curve[S, G1, G1J, G2, G2J],
	toKey func(groth16.ProvingKey) (*keyfile.ProvingKey[G1, G2], error),
	toGnark func(*sdk.Proof[G1, G2]) groth16.Proof) ([]*compactFixture[S, G1, G1J, G2, G2J], error) {
	var out []*compactFixture[S, G1, G1J, G2, G2J]
	for _, cc := range compactCircuits {
		f, err := newCompactFixture(c, cc.name, cc.params, toKey, toGnark)
		if err != nil {
			return nil, fmt.Errorf("%s on %s: %w", cc.name, curve.Title(c.ID()), err)
		}
		out = append(out, f)
	}
	return out, nil
}

// newCompactFixture compiles the example circuit name on c's curve, sets it
// up, converts the key and solves one witness. Deliberately parallel to
// cpubackend's newFixture: see why there.
func newCompactFixture[S ~[4]uint64, G1, G1J, G2, G2J any](c curve.Curve[S, G1, G1J, G2, G2J], name string, params map[string]int,
	toKey func(groth16.ProvingKey) (*keyfile.ProvingKey[G1, G2], error),
	toGnark func(*sdk.Proof[G1, G2]) groth16.Proof) (*compactFixture[S, G1, G1J, G2, G2J], error) {
	spec, err := circuits.Lookup(name, params)
	if err == nil {
		spec, err = spec.On(c.ID())
	}
	if err != nil {
		return nil, err
	}
	ccs, err := spec.Compile()
	if err != nil {
		return nil, err
	}
	m, err := keyconv.Constraints(ccs)
	if err != nil {
		return nil, err
	}
	gpk, vk, err := groth16.Setup(ccs)
	if err != nil {
		return nil, err
	}
	pk, err := toKey(gpk)
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
	f := &compactFixture[S, G1, G1J, G2, G2J]{name: spec.ID(), c: c, m: m, pk: pk,
		verify: func(p *sdk.Proof[G1, G2]) error { return groth16.Verify(toGnark(p), vk, public) }}
	var ok bool
	switch r := sol.(type) {
	case *cs.R1CSSolution:
		f.W, f.A, f.B, f.C, ok = vectorsAs[S](r.W, r.A, r.B, r.C)
	case *csbn.R1CSSolution:
		f.W, f.A, f.B, f.C, ok = vectorsAs[S](r.W, r.A, r.B, r.C)
	}
	if !ok {
		return nil, fmt.Errorf("a solution of type %T for %s scalars", sol, curve.Title(c.ID()))
	}
	return f, nil
}

// vectorsAs returns w, a, b, c as []S, and whether they are.
func vectorsAs[S, T any](w, a, b, c []T) (ws, as, bs, cs []S, ok bool) {
	ws, ok1 := any(w).([]S)
	as, ok2 := any(a).([]S)
	bs, ok3 := any(b).([]S)
	cs, ok4 := any(c).([]S)
	return ws, as, bs, cs, ok1 && ok2 && ok3 && ok4
}

// packW is the compact form of w (sdk.PackW): other and bits bitmaps, and
// the values of the wires neither 0 nor 1 (a 1 is w's field's).
func packW[S ~[4]uint64, PS curve.Scalar[S]](w []S) (other, bits []uint64, values []S) {
	words := CompactWords(len(w))
	other, bits = make([]uint64, words), make([]uint64, words)
	values = make([]S, sdk.CountOther[S, PS](w, 1))
	if _, err := sdk.PackW[S, PS](w, other, bits, values, 1); err != nil {
		panic(err) // the lengths are right by construction
	}
	return other, bits, values
}

// stageCompact packs w into s's staging and returns the values' count.
func stageCompact[S ~[4]uint64, PS curve.Scalar[S]](t *testing.T, s *Groth16Slot, w []S) int {
	t.Helper()
	other, bits, values := packW[S, PS](w)
	err := StageCompactWithCurve(s, len(w), len(values), func(o, b []uint64, v []S) error {
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
func compactKey[S ~[4]uint64, G1, G1J, G2, G2J any](t *testing.T, f *compactFixture[S, G1, G1J, G2, G2J], chunk uint64) (*Groth16Key, *Groth16Slot) {
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
// on the device, on each curve, and holds them word for word to
// constraints.Eval (itself checked against gnark's solution): W, every row,
// zeros past the constraints up to the domain, and no unsatisfied
// constraint.
func TestCompactEvaluateMatchesEval(t *testing.T) {
	needDevice(t)
	for _, f := range blsCircuits(t) {
		t.Run(f.name, func(t *testing.T) { testCompactEvaluate(t, f) })
	}
	for _, f := range bnCircuits(t) {
		t.Run(f.name, func(t *testing.T) { testCompactEvaluate(t, f) })
	}
}

func testCompactEvaluate[S ~[4]uint64, PS curve.Scalar[S], G1, G1J, G2, G2J any](t *testing.T, f *compactFixture[S, G1, G1J, G2, G2J]) {
	n := int(f.m.NbConstraints())
	W := f.W
	a, b, c := make([]S, n), make([]S, n), make([]S, n)
	if bad := constraints.Eval[S, PS](f.m, W, a, b, c); bad != -1 {
		t.Fatalf("Eval finds constraint %d unsatisfied by gnark's solution", bad)
	}
	for i := range n {
		if a[i] != f.A[i] || b[i] != f.B[i] || c[i] != f.C[i] {
			t.Fatalf("row %d: Eval differs from gnark's solution (the matrices are wrong)", i)
		}
	}
	key, slot := compactKey(t, f, 0)
	if n >= int(f.pk.DomainSize) {
		t.Fatalf("%d constraints fill the domain %d: no padding to test", n, f.pk.DomainSize)
	}
	nbOther := stageCompact[S, PS](t, slot, W)
	t.Logf("%d wires, %d neither 0 nor 1; %d constraints in a domain of %d", len(W), nbOther, n, f.pk.DomainSize)
	dw, da, db, dc, bad, err := evalCompact[S](key, slot, n, nbOther)
	if err != nil {
		t.Fatal(err)
	}
	if bad != -1 {
		t.Errorf("device finds constraint %d unsatisfied", bad)
	}
	for i := range W {
		if dw[i] != W[i] {
			t.Fatalf("W[%d]: device %s, want %s", i, PS(&dw[i]).String(), PS(&W[i]).String())
		}
	}
	for i := range da {
		var wa, wb, wc S // zero past n
		if i < n {
			wa, wb, wc = a[i], b[i], c[i]
		}
		for _, x := range []struct {
			name      string
			got, want *S
		}{{"A", &da[i], &wa}, {"B", &db[i], &wb}, {"C", &dc[i], &wc}} {
			if *x.got != *x.want {
				t.Fatalf("%s[%d] (of %d constraints): device %s, want %s", x.name, i, n, PS(x.got).String(), PS(x.want).String())
			}
		}
	}
}

// TestProveCompactMatchesProve proves one partition both ways, on each curve,
// full (W, A, B from gnark's solver) and compact, through a resident and (on
// BLS12-381, the curve whose keys stream) a streamed key: the sums must be
// equal, and the compact proof must verify with gnark.
func TestProveCompactMatchesProve(t *testing.T) {
	needDevice(t)
	for _, f := range blsCircuits(t) {
		for _, chunk := range []uint64{0, 1 << 11} {
			t.Run(fmt.Sprintf("%s/chunk=%d", f.name, chunk), func(t *testing.T) { testProveCompact(t, f, chunk) })
		}
	}
	for _, f := range bnCircuits(t) {
		t.Run(f.name, func(t *testing.T) { testProveCompact(t, f, 0) })
	}
}

func testProveCompact[S ~[4]uint64, PS curve.Scalar[S], G1, G2 comparable, G1J, G2J any](t *testing.T, f *compactFixture[S, G1, G1J, G2, G2J], chunk uint64) {
	key, slot := compactKey(t, f, chunk)
	n := len(f.A)
	if err := StageCurve(slot, f.W, f.A, f.B, 2); err != nil {
		t.Fatal(err)
	}
	want, _, err := ProveCurve(f.c, key, slot, n)
	if err != nil {
		t.Fatal(err)
	}
	// Twice: the second compact proof finds the first's staging and device
	// state in the slot.
	for round := range 2 {
		nbOther := stageCompact[S, PS](t, slot, f.W)
		got, timing, err := ProveCompactCurve(f.c, key, slot, n, nbOther)
		if err != nil {
			t.Fatal(err)
		}
		checkSums(t, f.c, got, want)
		if timing.Evaluate <= 0 || timing.Total <= 0 {
			t.Errorf("round %d: timing %+v: no evaluation or total time", round, timing)
		}
		r, s, err := refprover.RandomRS[S, PS]()
		if err != nil {
			t.Fatal(err)
		}
		if err := f.verify(refprover.Assemble[S, PS](f.c, f.pk, got, r, s)); err != nil {
			t.Fatalf("round %d: groth16.Verify: %v", round, err)
		}
	}
}

// checkSums compares two proofs' MSM sums (in affine form: one point, one
// value).
func checkSums[S any, G1, G2 comparable, G1J, G2J any](t *testing.T, c curve.Curve[S, G1, G1J, G2, G2J], got, want refprover.MSMResults[G1J, G2J]) {
	t.Helper()
	same := func(p, q *G1J) bool { return c.G1ToAffine(p) == c.G1ToAffine(q) }
	if !same(&got.Ar, &want.Ar) || !same(&got.Bs1, &want.Bs1) || !same(&got.Krs, &want.Krs) || !same(&got.Krs2, &want.Krs2) {
		t.Errorf("compact G1 sums differ from the full partition's: A %v, B %v, K %v, Z %v",
			same(&got.Ar, &want.Ar), same(&got.Bs1, &want.Bs1), same(&got.Krs, &want.Krs), same(&got.Krs2, &want.Krs2))
	}
	if c.G2ToAffine(&got.Bs2) != c.G2ToAffine(&want.Bs2) {
		t.Error("compact G2 sum differs from the full partition's")
	}
}

// TestProveCompactUnsatisfied changes one wire of a valid witness (a 0 to 1,
// a 1 to 2, a value to itself plus one: each path of the expansion), on each
// curve, and expects the device to name the constraint Eval names,
// evaluating the wrong witness's rows as Eval does; the slot then proves the
// right witness.
func TestProveCompactUnsatisfied(t *testing.T) {
	needDevice(t)
	for _, f := range blsCircuits(t) {
		t.Run(f.name, func(t *testing.T) { testCompactUnsatisfied(t, f) })
	}
	for _, f := range bnCircuits(t) {
		t.Run(f.name, func(t *testing.T) { testCompactUnsatisfied(t, f) })
	}
}

func testCompactUnsatisfied[S ~[4]uint64, PS curve.Scalar[S], G1, G1J, G2, G2J any](t *testing.T, f *compactFixture[S, G1, G1J, G2, G2J]) {
	key, slot := compactKey(t, f, 0)
	n := int(f.m.NbConstraints())
	a, b, c := make([]S, n), make([]S, n), make([]S, n)
	// One wire of each kind, from the last (internal, surely in some
	// constraint) down.
	tried := map[string]bool{}
	var one S
	PS(&one).SetOne()
	for j := len(f.W) - 1; j > 0 && len(tried) < 3; j-- {
		kind := "value"
		if PS(&f.W[j]).IsZero() {
			kind = "zero"
		} else if PS(&f.W[j]).IsOne() {
			kind = "one"
		}
		if tried[kind] {
			continue
		}
		w := append([]S(nil), f.W...)
		PS(&w[j]).Add(&w[j], &one)
		want := constraints.Eval[S, PS](f.m, w, a, b, c)
		if want < 0 {
			continue // a wire no constraint pins down alone
		}
		tried[kind] = true
		nbOther := stageCompact[S, PS](t, slot, w)
		_, _, _, dc, bad, err := evalCompact[S](key, slot, n, nbOther)
		if err != nil {
			t.Fatal(err)
		}
		if bad != want {
			t.Errorf("wire %d (%s) changed: device evaluation finds constraint %d, Eval %d", j, kind, bad, want)
		}
		for i := range n {
			if dc[i] != c[i] {
				t.Fatalf("wire %d (%s) changed: C[%d] differs from Eval", j, kind, i)
			}
		}
		_, _, err = ProveCompactCurve(f.c, key, slot, n, nbOther)
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
	nbOther := stageCompact[S, PS](t, slot, f.W)
	if _, _, err := ProveCompactCurve(f.c, key, slot, n, nbOther); err != nil {
		t.Fatalf("the right witness after the wrong ones: %v", err)
	}
}

// TestProveCompactRefusals checks what compact proofs refuse, on each curve:
// a key without constraints, matrices that do not fit the key, a second
// constraint system, staging that does not fit (or of the other curve's
// scalars), a constraint count other than the system's, and a values count
// other than the other bitmap's (found on the device, which reads no value
// past it). The slot proves a right partition afterwards.
func TestProveCompactRefusals(t *testing.T) {
	needDevice(t)
	t.Run("BLS12-381", func(t *testing.T) { testCompactRefusals[blsfr.Element, bnfr.Element](t, blsCircuits(t)[1]) }) // merkle, the smaller
	t.Run("BN254", func(t *testing.T) { testCompactRefusals[bnfr.Element, blsfr.Element](t, bnCircuits(t)[1]) })
}

// testCompactRefusals is TestProveCompactRefusals on f, whose scalars are S;
// O is the other curve's.
func testCompactRefusals[S ~[4]uint64, O any, PS curve.Scalar[S], G1, G1J, G2, G2J any](t *testing.T, f *compactFixture[S, G1, G1J, G2, G2J]) {
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
	nbOther := stageCompact[S, PS](t, bareSlot, f.W)
	if _, _, err := ProveCompactCurve(f.c, bare, bareSlot, n, nbOther); !errors.Is(err, ErrInvalid) {
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
	fill := func(o, b []uint64, v []S) error { called = true; return nil }
	for _, c := range [][2]int{{len(f.W) - 1, 0}, {len(f.W), -1}, {len(f.W), slot.CompactCapacity() + 1}} {
		if err := StageCompactWithCurve(slot, c[0], c[1], fill); !errors.Is(err, ErrInvalid) || called {
			t.Errorf("StageCompactWith(%d, %d) = %v (fill called: %v), want ErrInvalid", c[0], c[1], err, called)
		}
	}
	if err := StageCompactWithCurve(slot, len(f.W), 0, func(o, b []uint64, v []O) error { called = true; return nil }); !errors.Is(err, ErrInvalid) || called {
		t.Errorf("StageCompactWith of the other curve's scalars = %v (fill called: %v), want ErrInvalid", err, called)
	}
	nbOther = stageCompact[S, PS](t, slot, f.W)
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
		if _, _, err := ProveCompactCurve(f.c, key, slot, c.n, c.nbOther); !errors.Is(err, ErrInvalid) {
			t.Errorf("ProveCompact (%s) = %v, want ErrInvalid", c.name, err)
		} else {
			t.Logf("%s: %v", c.name, err)
		}
	}
	if _, _, err := ProveCompactCurve(f.c, key, slot, n, nbOther); err != nil {
		t.Fatalf("a right compact partition after the refusals: %v", err)
	}
}
