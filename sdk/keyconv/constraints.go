package keyconv

import (
	"fmt"

	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	cs_bn254 "github.com/consensys/gnark/constraint/bn254"

	"github.com/zkhost/zkhost/sdk/constraints"
)

// Constraints returns the matrices of gnark's compiled system ccs, a
// BLS12-381 or a BN254 R1CS: row i of A, B and C holds constraint i's L, R
// and O terms, in gnark's order, over the wire vector W that gnark's solver
// returns (public wires, then secret, then internal), with gnark's
// coefficient table (the curve's scalars). A backend evaluating them at W
// gets the A and B that gnark's Solve returns. An error says the system is
// of another kind or curve, does not fit the matrices' bounds
// (constraints.MaxTerms) or holds a term gnark's own Groth16 setup could not
// take (a constant-marked wire).
func Constraints(ccs constraint.ConstraintSystem) (*constraints.Matrices, error) {
	switch r := ccs.(type) {
	case *cs.R1CS:
		return matrices(&r.System, constraints.CoefficientsOf(r.Coefficients))
	case *cs_bn254.R1CS:
		return matrices(&r.System, constraints.CoefficientsOf(r.Coefficients))
	}
	return nil, fmt.Errorf("keyconv: constraints of a %T: want a BLS12-381 or BN254 R1CS", ccs)
}

// matrices is Constraints on the curve-independent part of the system, its
// coefficient table given.
func matrices(r *constraint.System, coeffs [][4]uint64) (*constraints.Matrices, error) {
	nbWires := uint64(r.GetNbInternalVariables() + r.GetNbPublicVariables() + r.GetNbSecretVariables())
	n := r.GetNbConstraints()
	m := &constraints.Matrices{NbWires: nbWires, Coefficients: coeffs}
	for _, x := range []*constraints.Matrix{&m.A, &m.B, &m.C} {
		x.Start = make([]uint32, 1, n+1)
		// Most rows have one to three terms: start with room for two each.
		x.Wire = make([]uint32, 0, 2*n)
		x.Coeff = make([]uint32, 0, 2*n)
	}
	it := r.GetR1CIterator()
	row := 0
	for c := it.Next(); c != nil; c = it.Next() {
		for k, l := range []constraint.LinearExpression{c.L, c.R, c.O} {
			x := []*constraints.Matrix{&m.A, &m.B, &m.C}[k]
			for _, t := range l {
				if uint64(t.VID) >= nbWires {
					return nil, fmt.Errorf("keyconv: constraint %d: %c has a term on wire %d, the system has %d", row, "ABC"[k], t.VID, nbWires)
				}
				x.Wire = append(x.Wire, t.VID)
				x.Coeff = append(x.Coeff, t.CID)
			}
			if uint64(len(x.Wire)) > constraints.MaxTerms {
				return nil, fmt.Errorf("keyconv: %c has more than %d terms", "ABC"[k], uint64(constraints.MaxTerms))
			}
			x.Start = append(x.Start, uint32(len(x.Wire)))
		}
		row++
	}
	if row != n {
		return nil, fmt.Errorf("keyconv: the system says %d constraints, its iterator gave %d", n, row)
	}
	if err := m.Check(); err != nil {
		return nil, fmt.Errorf("keyconv: %w", err)
	}
	return m, nil
}
