package partcheck

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	"github.com/consensys/gnark/logger"

	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// solved compiles the chain circuit with 2^4 constraints and solves it.
func solved(t *testing.T) (*cs.R1CS, *cs.R1CSSolution, fr.Vector) {
	t.Helper()
	logger.Disable()
	spec, ccs := testcircuit.Compile(t, "chain", map[string]int{"k": 4})
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
	return ccs, res.(*cs.R1CSSolution), pub.Vector().(fr.Vector)
}

func TestCheck(t *testing.T) {
	ccs, sol, _ := solved(t)
	one := fr.One()
	tests := []struct {
		name       string
		change     func(W, A, B []fr.Element) ([]fr.Element, []fr.Element, []fr.Element)
		constraint int    // the failing constraint, -1 for none in particular
		reason     string // a fragment of the reason; "" for a satisfied partition
	}{
		{"satisfied", func(W, A, B []fr.Element) ([]fr.Element, []fr.Element, []fr.Element) { return W, A, B }, 0, ""},
		{"internal wire changed", func(W, A, B []fr.Element) ([]fr.Element, []fr.Element, []fr.Element) {
			W[len(W)-1].Add(&W[len(W)-1], &one)
			return W, A, B
		}, -2, "differs"},
		{"A changed", func(W, A, B []fr.Element) ([]fr.Element, []fr.Element, []fr.Element) {
			A[2].Add(&A[2], &one)
			return W, A, B
		}, 2, "A differs"},
		{"B changed", func(W, A, B []fr.Element) ([]fr.Element, []fr.Element, []fr.Element) {
			B[3].Add(&B[3], &one)
			return W, A, B
		}, 3, "B differs"},
		{"constant wire not one", func(W, A, B []fr.Element) ([]fr.Element, []fr.Element, []fr.Element) {
			W[0].SetUint64(2)
			return W, A, B
		}, -1, "constant wire"},
		{"W short", func(W, A, B []fr.Element) ([]fr.Element, []fr.Element, []fr.Element) { return W[:len(W)-1], A, B }, -1, "wires"},
		{"B short", func(W, A, B []fr.Element) ([]fr.Element, []fr.Element, []fr.Element) { return W, A, B[1:] }, -1, "constraints"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			W, A, B := tc.change(slices.Clone(sol.W), slices.Clone(sol.A), slices.Clone(sol.B))
			err := Check(ccs, W, A, B)
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

func TestPublic(t *testing.T) {
	_, sol, pub := solved(t)
	if err := Public(sol.W, pub); err != nil {
		t.Fatalf("Public of the solver's W: %v", err)
	}
	other := slices.Clone(pub)
	one := fr.One()
	other[0].Add(&other[0], &one)
	if err := Public(sol.W, other); err == nil || !strings.Contains(err.Error(), "public input 0") {
		t.Errorf("Public with another input: %v, want public input 0 named", err)
	}
	if err := Public(sol.W[:1], pub); err == nil {
		t.Error("Public of a W too short for the inputs: no error")
	}
}
