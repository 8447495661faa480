package keyconv

import (
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	cs "github.com/consensys/gnark/constraint/bls12-381"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/constraints"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// TestConstraintsEvaluateToGnarksSolution checks the matrices against gnark's
// solver on the example circuits (bit-heavy sha256, full-field merkle, the
// chain): evaluated at gnark's W they give gnark's A, B and C word for word,
// and every constraint holds; with one wire changed, Eval names a constraint
// that indeed fails.
func TestConstraintsEvaluateToGnarksSolution(t *testing.T) {
	for _, tc := range []struct {
		name   string
		params map[string]int
	}{
		{"chain", map[string]int{"k": 8}},
		{"merkle", map[string]int{"k": 2, "d": 4}},
		{"sha256", map[string]int{"b": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			spec, ccs := testcircuit.Compile(t, tc.name, tc.params)
			w, err := spec.Witness(0, 3)
			if err != nil {
				t.Fatal(err)
			}
			res, err := ccs.Solve(w)
			if err != nil {
				t.Fatal(err)
			}
			sol := res.(*cs.R1CSSolution)
			m, err := Constraints(ccs)
			if err != nil {
				t.Fatal(err)
			}
			n := int(m.NbConstraints())
			if n != ccs.GetNbConstraints() || m.NbWires != uint64(len(sol.W)) {
				t.Fatalf("matrices for %d constraints and %d wires; the system has %d and %d", n, m.NbWires, ccs.GetNbConstraints(), len(sol.W))
			}
			a, b, c := make([]fr.Element, n), make([]fr.Element, n), make([]fr.Element, n)
			if bad := m.Eval(sol.W, a, b, c); bad >= 0 {
				t.Fatalf("constraint %d fails at gnark's own solution", bad)
			}
			for _, v := range []struct {
				name      string
				got, want []fr.Element
			}{{"A", a, sol.A}, {"B", b, sol.B}, {"C", c, sol.C}} {
				for i := range v.got {
					if v.got[i] != v.want[i] {
						t.Fatalf("%s[%d] = %s, gnark %s", v.name, i, v.got[i].String(), v.want[i].String())
					}
				}
			}
			// One wire changed (the last, an internal one every circuit
			// constrains): Eval names a constraint, and it does fail there.
			bad := append([]fr.Element(nil), sol.W...)
			var two fr.Element
			two.SetUint64(2)
			bad[len(bad)-1].Add(&bad[len(bad)-1], &two)
			i := m.Eval(bad, a, b, c)
			if i < 0 {
				t.Fatal("a changed wire satisfies every constraint")
			}
			var ab fr.Element
			ab.Mul(&a[i], &b[i])
			if ab == c[i] {
				t.Fatalf("Eval names constraint %d, which holds", i)
			}
		})
	}
}

// BenchmarkConstraints builds the matrices of the example circuits and
// reports what a constraints file (and the device's copy) holds per
// constraint.
//
//	go test -run '^$' -bench Constraints ./keyconv/
func BenchmarkConstraints(b *testing.B) {
	for _, tc := range []struct {
		name   string
		params map[string]int
	}{
		{"sha256", map[string]int{"b": 4}},
		{"merkle", map[string]int{"k": 8, "d": 10}},
		{"chain", map[string]int{"k": 14}},
	} {
		spec, ccs := testcircuit.Compile(b, tc.name, tc.params)
		b.Run(spec.ID(), func(b *testing.B) {
			var m *constraints.Matrices
			var err error
			for b.Loop() {
				if m, err = Constraints(ccs); err != nil {
					b.Fatal(err)
				}
			}
			n := float64(m.NbConstraints())
			b.ReportMetric(float64(sdk.ConstraintsHandleFor(m).Size)/n, "file-bytes/constraint")
			b.ReportMetric(float64(m.A.Terms()+m.B.Terms()+m.C.Terms())/n, "terms/constraint")
		})
	}
}
