package keyconv

import (
	"testing"

	cs "github.com/consensys/gnark/constraint/bls12-381"
	cs_bn254 "github.com/consensys/gnark/constraint/bn254"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/constraints"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// TestConstraintsEvaluateToGnarksSolution checks the matrices against gnark's
// solver on the example circuits (bit-heavy sha256, full-field merkle, the
// chain) on both curves: evaluated at gnark's W they give gnark's A, B and C
// word for word, and every constraint holds; with one wire changed, Eval
// names a constraint that indeed fails.
func TestConstraintsEvaluateToGnarksSolution(t *testing.T) {
	for _, id := range curve.IDs {
		for name, params := range map[string]map[string]int{"chain": {"k": 8}, "merkle": {"k": 2, "d": 4}, "sha256": {"b": 1}} {
			t.Run(name+"/"+curve.Title(id), func(t *testing.T) {
				spec, ccs := testcircuit.CompileOn(t, id, name, params)
				var res any
				w, err := spec.Witness(0, 3)
				if err == nil {
					res, err = ccs.Solve(w)
				}
				var m *constraints.Matrices
				if err == nil {
					m, err = Constraints(ccs)
				}
				if err != nil {
					t.Fatal(err)
				}
				if n := int(m.NbConstraints()); n != ccs.GetNbConstraints() {
					t.Fatalf("matrices for %d constraints; the system has %d", n, ccs.GetNbConstraints())
				}
				switch sol := res.(type) {
				case *cs.R1CSSolution:
					checkEval(t, m, sol.W, sol.A, sol.B, sol.C)
				case *cs_bn254.R1CSSolution:
					checkEval(t, m, sol.W, sol.A, sol.B, sol.C)
				default:
					t.Fatalf("a solution of type %T", res)
				}
			})
		}
	}
}

// checkEval checks m against gnark's solution W, A, B, C of scalars S.
func checkEval[S ~[4]uint64, PS curve.Scalar[S]](t *testing.T, m *constraints.Matrices, W, A, B, C []S) {
	t.Helper()
	n := int(m.NbConstraints())
	if m.NbWires != uint64(len(W)) {
		t.Fatalf("matrices for %d wires; the solution has %d", m.NbWires, len(W))
	}
	a, b, c := make([]S, n), make([]S, n), make([]S, n)
	if bad := constraints.Eval[S, PS](m, W, a, b, c); bad >= 0 {
		t.Fatalf("constraint %d fails at gnark's own solution", bad)
	}
	for _, v := range []struct {
		name      string
		got, want []S
	}{{"A", a, A}, {"B", b, B}, {"C", c, C}} {
		for i := range v.got {
			if v.got[i] != v.want[i] {
				t.Fatalf("%s[%d] = %s, gnark %s", v.name, i, PS(&v.got[i]).String(), PS(&v.want[i]).String())
			}
		}
	}
	// One wire changed (the last, an internal one every circuit
	// constrains): Eval names a constraint, and it does fail there.
	bad := append([]S(nil), W...)
	var two S
	PS(&two).SetUint64(2)
	PS(&bad[len(bad)-1]).Add(&bad[len(bad)-1], &two)
	i := constraints.Eval[S, PS](m, bad, a, b, c)
	if i < 0 {
		t.Fatal("a changed wire satisfies every constraint")
	}
	var ab S
	PS(&ab).Mul(&a[i], &b[i])
	if ab == c[i] {
		t.Fatalf("Eval names constraint %d, which holds", i)
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
