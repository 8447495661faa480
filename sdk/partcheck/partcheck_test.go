package partcheck

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	blsfr "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	bnfr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	cs_bn254 "github.com/consensys/gnark/constraint/bn254"
	"github.com/consensys/gnark/logger"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/shm"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// The checks run on the chain circuit of each curve: one test body, the curve's
// scalars its type parameter, as the checks themselves are.

// solution is a solved partition of the chain circuit on one curve.
type solution[S any] struct {
	ccs     constraint.ConstraintSystem
	W, A, B []S
	public  []S // the public inputs, without the constant wire
}

// solved compiles the chain circuit with 2^4 constraints on curve id and solves
// it; S is the curve's fr.Element.
func solved[S any](t *testing.T, id ecc.ID) solution[S] {
	t.Helper()
	logger.Disable()
	spec, ccs := testcircuit.CompileOn(t, id, "chain", map[string]int{"k": 4})
	w, err := spec.Witness(0, 1)
	if err != nil {
		t.Fatal(err)
	}
	res, err := ccs.Solve(w)
	if err != nil {
		t.Fatal(err)
	}
	pub, err := w.Public()
	if err != nil {
		t.Fatal(err)
	}
	var sol solution[S]
	sol.ccs = ccs
	switch r := res.(type) {
	case *cs.R1CSSolution:
		sol.W, sol.A, sol.B = any([]blsfr.Element(r.W)).([]S), any([]blsfr.Element(r.A)).([]S), any([]blsfr.Element(r.B)).([]S)
		sol.public = any([]blsfr.Element(pub.Vector().(blsfr.Vector))).([]S)
	case *cs_bn254.R1CSSolution:
		sol.W, sol.A, sol.B = any([]bnfr.Element(r.W)).([]S), any([]bnfr.Element(r.A)).([]S), any([]bnfr.Element(r.B)).([]S)
		sol.public = any([]bnfr.Element(pub.Vector().(bnfr.Vector))).([]S)
	default:
		t.Fatalf("a solution of type %T", res)
	}
	return sol
}

func TestCheck(t *testing.T) {
	t.Run("bls12-381", testCheck[blsfr.Element, *blsfr.Element](ecc.BLS12_381))
	t.Run("bn254", testCheck[bnfr.Element, *bnfr.Element](ecc.BN254))
}

func testCheck[S any, PS curve.Scalar[S]](id ecc.ID) func(*testing.T) {
	return func(t *testing.T) {
		sol := solved[S](t, id)
		var one S
		PS(&one).SetOne()
		type vectors = func(W, A, B []S) ([]S, []S, []S)
		tests := []struct {
			name       string
			change     vectors
			constraint int    // the failing constraint, -1 for none in particular
			reason     string // a fragment of the reason; "" for a satisfied partition
		}{
			{"satisfied", func(W, A, B []S) ([]S, []S, []S) { return W, A, B }, 0, ""},
			{"internal wire changed", func(W, A, B []S) ([]S, []S, []S) {
				PS(&W[len(W)-1]).Add(&W[len(W)-1], &one)
				return W, A, B
			}, -2, "differs"},
			{"A changed", func(W, A, B []S) ([]S, []S, []S) {
				PS(&A[2]).Add(&A[2], &one)
				return W, A, B
			}, 2, "A differs"},
			{"B changed", func(W, A, B []S) ([]S, []S, []S) {
				PS(&B[3]).Add(&B[3], &one)
				return W, A, B
			}, 3, "B differs"},
			{"constant wire not one", func(W, A, B []S) ([]S, []S, []S) {
				PS(&W[0]).SetUint64(2)
				return W, A, B
			}, -1, "constant wire"},
			{"W short", func(W, A, B []S) ([]S, []S, []S) { return W[:len(W)-1], A, B }, -1, "wires"},
			{"B short", func(W, A, B []S) ([]S, []S, []S) { return W, A, B[1:] }, -1, "constraints"},
		}
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				W, A, B := tc.change(slices.Clone(sol.W), slices.Clone(sol.A), slices.Clone(sol.B))
				err := Check[S, PS](sol.ccs, W, A, B)
				if tc.reason == "" {
					if err != nil {
						t.Fatalf("Check: %v, want nil", err)
					}
					return
				}
				var f *Failure
				if !errors.As(err, &f) {
					t.Fatalf("Check: %v, want a *Failure", err)
				}
				if !strings.Contains(f.Error(), tc.reason) {
					t.Errorf("Check: %q, want it to say %q", f.Error(), tc.reason)
				}
				switch {
				case tc.constraint == -2 && f.Constraint < 0:
					t.Errorf("Check: failure at no constraint, want one")
				case tc.constraint >= -1 && f.Constraint != tc.constraint:
					t.Errorf("Check: failure at constraint %d, want %d", f.Constraint, tc.constraint)
				}
			})
		}
	}
}

// TestCheckWrongCurve checks each curve's partition against the other curve's
// circuit: refused before any constraint, naming both curves.
func TestCheckWrongCurve(t *testing.T) {
	bls := solved[blsfr.Element](t, ecc.BLS12_381)
	bn := solved[bnfr.Element](t, ecc.BN254)
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"BN254 scalars, BLS12-381 circuit", Check(bls.ccs, bn.W, bn.A, bn.B), "the partition holds BN254 scalars, the circuit is BLS12-381"},
		{"BLS12-381 scalars, BN254 circuit", Check(bn.ccs, bls.W, bls.A, bls.B), "the partition holds BLS12-381 scalars, the circuit is BN254"},
	} {
		var f *Failure
		if !errors.As(tc.err, &f) || f.Constraint != -1 || !strings.Contains(f.Error(), tc.want) {
			t.Errorf("%s: %v, want a *Failure at no constraint saying %q", tc.name, tc.err, tc.want)
		}
	}
}

// TestCheckPartition writes each curve's partition into shared memory as the
// host does and checks it through CheckPartition, which dispatches on the
// circuit's curve: the partition satisfies its own circuit, a changed wire is
// named by its constraint, and the other curve's circuit refuses it naming
// both curves.
func TestCheckPartition(t *testing.T) {
	store := shm.NewStore()
	t.Cleanup(func() { store.Close() })
	bls := solved[blsfr.Element](t, ecc.BLS12_381)
	bn := solved[bnfr.Element](t, ecc.BN254)
	open := func(h sdk.PartitionHandle, err error) *sdk.Partition {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { store.Remove(h) })
		p, err := sdk.OpenPartition(h)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { p.Close() })
		return p
	}
	blsPart := open(write(store, "partcheck-bls", sdk.CurveBLS12381, bls.W, bls.A, bls.B))
	bnPart := open(write(store, "partcheck-bn254", sdk.CurveBN254, bn.W, bn.A, bn.B))
	brokenW := slices.Clone(bn.W)
	var one bnfr.Element
	one.SetOne()
	brokenW[len(brokenW)-1].Add(&brokenW[len(brokenW)-1], &one)
	bnBroken := open(write(store, "partcheck-bn254-broken", sdk.CurveBN254, brokenW, bn.A, bn.B))

	for _, tc := range []struct {
		name       string
		ccs        constraint.ConstraintSystem
		p          *sdk.Partition
		constraint int    // -2 for any constraint
		want       string // "" for a satisfied partition
	}{
		{"BLS12-381", bls.ccs, blsPart, 0, ""},
		{"BN254", bn.ccs, bnPart, 0, ""},
		{"BN254 wire changed", bn.ccs, bnBroken, -2, "differs"},
		{"BN254 partition, BLS12-381 circuit", bls.ccs, bnPart, -1, "the partition is BN254, the circuit is BLS12-381"},
		{"BLS12-381 partition, BN254 circuit", bn.ccs, blsPart, -1, "the partition is BLS12-381, the circuit is BN254"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := CheckPartition(tc.ccs, tc.p)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("CheckPartition: %v, want nil", err)
				}
				return
			}
			var f *Failure
			if !errors.As(err, &f) || !strings.Contains(f.Error(), tc.want) {
				t.Fatalf("CheckPartition: %v, want a *Failure saying %q", err, tc.want)
			}
			if (tc.constraint == -2 && f.Constraint < 0) || (tc.constraint >= -1 && f.Constraint != tc.constraint) {
				t.Errorf("CheckPartition: failure at constraint %d, want %d", f.Constraint, tc.constraint)
			}
		})
	}
}

// write writes a partition of curve c into store as a synthesizer does: an
// output the store makes, sdk.WritePartition, and the store's seal.
func write[S ~[4]uint64](store *shm.Store, name string, c sdk.Curve, W, A, B []S) (sdk.PartitionHandle, error) {
	out, err := store.Output(name, c, uint64(len(W)), uint64(len(A)))
	if err != nil {
		return out, err
	}
	if err := sdk.WritePartition(out, W, A, B); err != nil {
		return out, err
	}
	return store.Adopt(out)
}

func TestPublic(t *testing.T) {
	t.Run("bls12-381", testPublic[blsfr.Element, *blsfr.Element](ecc.BLS12_381))
	t.Run("bn254", testPublic[bnfr.Element, *bnfr.Element](ecc.BN254))
}

func testPublic[S any, PS curve.Scalar[S]](id ecc.ID) func(*testing.T) {
	return func(t *testing.T) {
		sol := solved[S](t, id)
		if err := Public[S, PS](sol.W, sol.public); err != nil {
			t.Fatalf("Public of the solver's W: %v", err)
		}
		other := slices.Clone(sol.public)
		var one S
		PS(&one).SetOne()
		PS(&other[0]).Add(&other[0], &one)
		if err := Public[S, PS](sol.W, other); err == nil || !strings.Contains(err.Error(), "public input 0") {
			t.Errorf("Public with another input: %v, want public input 0 named", err)
		}
		if err := Public[S, PS](sol.W[:1], sol.public); err == nil {
			t.Error("Public of a W too short for the inputs: no error")
		}
	}
}
