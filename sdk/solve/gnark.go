package solve

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/witness"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	csolver "github.com/consensys/gnark/constraint/solver"

	"github.com/zkhost/zkhost/sdk"
)

// R1CS solves ccs for the full witness w and returns W, A and B as gnark's
// Solve does. It runs p, ccs's compiled program, when p is not nil; when p is
// nil (Compile refused the system) or p's run fails, it runs gnark's solver,
// so that a failure carries gnark's own message and debug information, and a
// witness the program refused but gnark accepts (which would be a bug here) is
// still solved by gnark. A panic inside gnark's solver (a hint that panics) is
// an error.
func R1CS(ccs *cs.R1CS, p *Program, w witness.Witness, opts ...csolver.Option) (W, A, B []fr.Element, err error) {
	W = make([]fr.Element, len(ccs.Public)+len(ccs.Secret)+ccs.NbInternalVariables)
	A = make([]fr.Element, ccs.GetNbConstraints())
	B = make([]fr.Element, ccs.GetNbConstraints())
	if err := R1CSInto(ccs, p, w, W, A, B, opts...); err != nil {
		return nil, nil, nil, err
	}
	return W, A, B, nil
}

// R1CSInto is R1CS writing W, A and B into the caller's vectors (len
// NbWires, NbConstraints, NbConstraints of ccs), which it overwrites. A and B
// may both be nil: W alone is solved, every constraint still checked.
func R1CSInto(ccs *cs.R1CS, p *Program, w witness.Witness, W, A, B []fr.Element, opts ...csolver.Option) error {
	v, ok := w.Vector().(fr.Vector)
	if !ok {
		return fmt.Errorf("witness holds %T, want BLS12-381 scalars (fr.Vector)", w.Vector())
	}
	nbWires := len(ccs.Public) + len(ccs.Secret) + ccs.NbInternalVariables
	if len(W) != nbWires || !abLengthsOK(A, B, ccs.GetNbConstraints()) {
		return fmt.Errorf("solve: destination lengths W %d, A %d, B %d; want %d, %d, %d",
			len(W), len(A), len(B), nbWires, ccs.GetNbConstraints(), ccs.GetNbConstraints())
	}
	if p != nil && p.Solve(v, W, A, B, opts...) == nil {
		return nil
	}
	sol, err := gnarkSolve(ccs, w, opts)
	if err != nil {
		return err
	}
	copy(W, sol.W)
	if A != nil {
		copy(A, sol.A)
		copy(B, sol.B)
	}
	return nil
}

// CompactInto is R1CSInto for W alone that also fills W's compact bitmaps
// (sdk.CompactLayout) and returns how many values are neither 0 nor 1: from
// the program's run (Program.SolveCompact), or, when gnark's solver ran,
// from W (sdk.PackBits).
func CompactInto(ccs *cs.R1CS, p *Program, w witness.Witness, W []fr.Element, other, bits []uint64, opts ...csolver.Option) (uint64, error) {
	if p != nil {
		if v, ok := w.Vector().(fr.Vector); ok {
			if n, err := p.SolveCompact(v, W, other, bits, opts...); err == nil {
				return n, nil
			}
		}
	}
	if err := R1CSInto(ccs, nil, w, W, nil, nil, opts...); err != nil {
		return 0, err
	}
	return sdk.PackBitsOf(W, other, bits, 1)
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
