package circuit

import (
	"fmt"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/constraint/solver"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"

	cs "github.com/consensys/gnark/constraint/bls12-381"

	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// BenchmarkEvaluate measures what the host does with a wire assignment (Evaluate: A
// and B from W, every constraint checked) against its same-run peer, what it does with
// a witness (gnark's Solve: W, A, B and C from the inputs), on the chain circuit
// (2 multiplications and 3 terms per step) with 2^16 and 2^20 constraints and one or
// every core. No key is needed: neither step reads it. Figures in BENCHMARKS.md.
func BenchmarkEvaluate(b *testing.B) {
	for _, logN := range []int{16, 20} {
		n := 1<<logN - 1 // the chain adds one constraint: 2^logN in all
		ccs, err := frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, &testcircuit.Chain{N: n})
		if err != nil {
			b.Fatal(err)
		}
		r := ccs.(*cs.R1CS)
		c := &Circuit{Name: fmt.Sprintf("chain-2^%d", logN), CCS: r, NbConstraints: r.GetNbConstraints(),
			NbPublic: r.GetNbPublicVariables(), NbSecret: r.GetNbSecretVariables()}
		c.NbWires = c.NbPublic + c.NbSecret + r.GetNbInternalVariables()
		w, err := frontend.NewWitness(testcircuit.ChainAssignment(n, 3, 5), ecc.BLS12_381.ScalarField())
		if err != nil {
			b.Fatal(err)
		}
		sol, err := r.Solve(w)
		if err != nil {
			b.Fatal(err)
		}
		W := sol.(*cs.R1CSSolution).W
		for _, threads := range []int{1, 0} {
			b.Run(fmt.Sprintf("n=2^%d/threads=%d/evaluate", logN, threads), func(b *testing.B) {
				for b.Loop() {
					if _, _, err := Evaluate(c, W, threads); err != nil {
						b.Fatal(err)
					}
				}
			})
			b.Run(fmt.Sprintf("n=2^%d/threads=%d/gnark-solve", logN, threads), func(b *testing.B) {
				opts := []solver.Option{}
				if threads > 0 {
					opts = append(opts, solver.WithNbTasks(threads))
				}
				for b.Loop() {
					if _, err := r.Solve(w, opts...); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}
