package solve

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/witness"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	csolver "github.com/consensys/gnark/constraint/solver"
)

// R1CS solves ccs for the full witness w and returns W, A and B as gnark's
// Solve does. It runs p, ccs's compiled program, when p is not nil; when p is
// nil (Compile refused the system) or p's run fails, it runs gnark's solver,
// so that a failure carries gnark's own message and debug information, and a
// witness the program refused but gnark accepts (which would be a bug here) is
// still solved by gnark. A panic inside gnark's solver (a hint that panics) is
// an error.
func R1CS(ccs *cs.R1CS, p *Program, w witness.Witness, opts ...csolver.Option) (W, A, B []fr.Element, err error) {
	v, ok := w.Vector().(fr.Vector)
	if !ok {
		return nil, nil, nil, fmt.Errorf("witness holds %T, want BLS12-381 scalars (fr.Vector)", w.Vector())
	}
	if p != nil {
		W = make([]fr.Element, p.NbWires())
		A = make([]fr.Element, p.NbConstraints())
		B = make([]fr.Element, p.NbConstraints())
		if p.Solve(v, W, A, B, opts...) == nil {
			return W, A, B, nil
		}
	}
	sol, err := gnarkSolve(ccs, w, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	return sol.W, sol.A, sol.B, nil
}

// gnarkSolve runs gnark's solver, turning a panic inside it into an error.
func gnarkSolve(ccs *cs.R1CS, w witness.Witness, opts []csolver.Option) (sol *cs.R1CSSolution, err error) {
	defer func() {
		if r := recover(); r != nil {
			sol, err = nil, fmt.Errorf("solver failed: %v", r)
		}
	}()
	res, err := ccs.Solve(w, opts...)
	if err != nil {
		return nil, err
	}
	sol, ok := res.(*cs.R1CSSolution)
	if !ok {
		return nil, fmt.Errorf("solver returned %T, want an R1CS solution", res)
	}
	return sol, nil
}
