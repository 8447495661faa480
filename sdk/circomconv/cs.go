package circomconv

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bls12-381"

	"github.com/zkhost/zkhost/sdk/circom"
)

// ConstraintSystem builds the gnark constraint system of r: its wires in circom's
// order, which is gnark's (wire 0, the constant one, and the public values are
// gnark's public variables, in order; every other wire a secret variable, so a
// wire's index is the same in both), and its rows as snarkjs's QAP has them: r's
// constraints in file order, then for each public wire s (wire 0 included) the row
// w_s · 0 = 0, whose A is the wire itself. Evaluating A and B over this system gives
// snarkjs's A and B vectors, and checking it checks every constraint of r, with a
// row's index the r1cs's constraint index.
//
// Every wire is an input and the system has no internal wires and no hints: a
// gnark witness of it is a full assignment already, which solving only checks.
// (Internal wires would also put gnark's solver ordering in the way: it takes each
// constraint to define its unknown wires, and panics on a circom constraint such as
// x·x = y, whose unknown x appears twice.)
func ConstraintSystem(r *circom.R1CS) (*cs.R1CS, error) {
	if err := checkCurve(r.Curve, "the r1cs"); err != nil {
		return nil, err
	}
	rows := circom.NumRows(r)
	sys := cs.NewR1CS(int(rows))
	sys.AddPublicVariable("1")
	for i := 1; i <= r.NumPublic(); i++ {
		sys.AddPublicVariable(fmt.Sprintf("public%d", i))
	}
	for i := r.NumPublic() + 1; i < int(r.NumWires); i++ {
		sys.AddSecretVariable(fmt.Sprintf("w%d", i))
	}
	generic := sys.AddBlueprint(&constraint.BlueprintGenericR1C{})
	for i := range r.Constraints {
		c := &r.Constraints[i]
		var r1c constraint.R1C
		var err error
		for j, side := range []struct {
			dst *constraint.LinearExpression
			lc  circom.LinearCombination
		}{{&r1c.L, c.A}, {&r1c.R, c.B}, {&r1c.O, c.C}} {
			if *side.dst, err = linear(sys, side.lc); err != nil {
				return nil, fmt.Errorf("circomconv: constraint %d, %c: %w", i, "ABC"[j], err)
			}
		}
		sys.AddR1C(r1c, generic)
	}
	for s := 0; s <= r.NumPublic(); s++ {
		one := constraint.Term{CID: constraint.CoeffIdOne, VID: uint32(s)}
		sys.AddR1C(constraint.R1C{L: constraint.LinearExpression{one}}, generic)
	}
	if got := uint64(sys.GetNbConstraints()); got != rows {
		return nil, fmt.Errorf("circomconv: the constraint system has %d rows, want %d", got, rows)
	}
	return sys, nil
}

// linear turns a circom linear combination into gnark's, coefficients into the
// system's coefficient table.
func linear(sys *cs.R1CS, lc circom.LinearCombination) (constraint.LinearExpression, error) {
	out := make(constraint.LinearExpression, 0, len(lc))
	for k := range lc {
		e, err := fr.LittleEndian.Element((*[fr.Bytes]byte)(&lc[k].Coefficient))
		if err != nil {
			return nil, fmt.Errorf("term %d: %w", k, err)
		}
		var u constraint.U64
		copy(u[:], e[:])
		out = append(out, sys.MakeTerm(u, int(lc[k].Wire)))
	}
	return out, nil
}

// Assignment returns w's values as the wire vector W of the system ConstraintSystem
// builds: the same order, each value checked to be a canonical BLS12-381 scalar.
func Assignment(w *circom.Witness) ([]fr.Element, error) {
	if err := checkCurve(w.Curve, "the witness"); err != nil {
		return nil, err
	}
	out := make([]fr.Element, len(w.Values))
	for i := range w.Values {
		var err error
		if out[i], err = fr.LittleEndian.Element((*[fr.Bytes]byte)(&w.Values[i])); err != nil {
			return nil, fmt.Errorf("circomconv: witness value %d: %w", i, err)
		}
	}
	return out, nil
}
