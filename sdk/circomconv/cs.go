package circomconv

import (
	"fmt"
	"math/big"

	"github.com/consensys/gnark-crypto/ecc"
	fr_bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	fr_bn254 "github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/constraint"
	cs_bls12381 "github.com/consensys/gnark/constraint/bls12-381"
	cs_bn254 "github.com/consensys/gnark/constraint/bn254"

	"github.com/zkhost/zkhost/sdk/circom"
	"github.com/zkhost/zkhost/sdk/curve"
)

// ConstraintSystem builds the gnark constraint system of r, of r's curve (a
// *cs_bls12381.R1CS or *cs_bn254.R1CS behind gnark's interface): its wires in
// circom's order, which is gnark's (wire 0, the constant one, and the public values
// are gnark's public variables, in order; every other wire a secret variable, so a
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
func ConstraintSystem(r *circom.R1CS) (constraint.ConstraintSystem, error) {
	// gnark's systems are one type per curve with one interface: the type is chosen
	// here and the rows are written through the interface.
	rows := int(circom.NumRows(r))
	switch r.Curve {
	case ecc.BLS12_381:
		return buildR1CS[fr_bls12381.Element](r, cs_bls12381.NewR1CS(rows))
	case ecc.BN254:
		return buildR1CS[fr_bn254.Element](r, cs_bn254.NewR1CS(rows))
	}
	return nil, fmt.Errorf("circomconv: the r1cs is for %s, want BLS12-381 or BN254", r.Curve)
}

// buildR1CS writes r's wires and rows into the empty system sys, whose scalar field
// element is S: a coefficient goes into gnark's table as S's Montgomery limbs, which
// is how gnark's systems store their curve's fr.Element.
func buildR1CS[S ~[4]uint64, PS curve.Scalar[S]](r *circom.R1CS, sys constraint.R1CS[constraint.U64]) (constraint.ConstraintSystem, error) {
	// The reader checked this; an R1CS built otherwise might not hold its public wires.
	if uint64(r.NumPublic())+1 > uint64(r.NumWires) {
		return nil, fmt.Errorf("circomconv: the r1cs has %d wires, too few for wire 0 and %d public values", r.NumWires, r.NumPublic())
	}
	sys.AddPublicVariable("1")
	for i := 1; i <= r.NumPublic(); i++ {
		sys.AddPublicVariable(fmt.Sprintf("public%d", i))
	}
	for i := r.NumPublic() + 1; i < int(r.NumWires); i++ {
		sys.AddSecretVariable(fmt.Sprintf("w%d", i))
	}
	// linear turns a circom linear combination into gnark's, coefficients into the
	// system's coefficient table.
	linear := func(lc circom.LinearCombination) (constraint.LinearExpression, error) {
		out := make(constraint.LinearExpression, 0, len(lc))
		for k := range lc {
			// A wire beyond the system would be found only when gnark solves it.
			if lc[k].Wire >= r.NumWires {
				return nil, fmt.Errorf("term %d: wire %d, the r1cs has %d", k, lc[k].Wire, r.NumWires)
			}
			e, err := scalar[S, PS](&lc[k].Coefficient)
			if err != nil {
				return nil, fmt.Errorf("term %d: %w", k, err)
			}
			var u constraint.U64
			copy(u[:], e[:])
			out = append(out, sys.MakeTerm(u, int(lc[k].Wire)))
		}
		return out, nil
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
			if *side.dst, err = linear(side.lc); err != nil {
				return nil, fmt.Errorf("circomconv: constraint %d, %c: %w", i, "ABC"[j], err)
			}
		}
		sys.AddR1C(r1c, generic)
	}
	for s := 0; s <= r.NumPublic(); s++ {
		one := constraint.Term{CID: constraint.CoeffIdOne, VID: uint32(s)}
		sys.AddR1C(constraint.R1C{L: constraint.LinearExpression{one}}, generic)
	}
	if got, want := uint64(sys.GetNbConstraints()), circom.NumRows(r); got != want {
		return nil, fmt.Errorf("circomconv: the constraint system has %d rows, want %d", got, want)
	}
	return sys, nil
}

// Assignment returns w's values as the wire vector W of the system ConstraintSystem
// builds, in the scalar field whose element is S (BLS12-381's or BN254's fr.Element):
// the same order, each value checked to be canonical. It refuses a witness of
// another curve.
func Assignment[S any, PS curve.Scalar[S]](w *circom.Witness) ([]S, error) {
	id, err := scalarCurve[S, PS]()
	if err != nil {
		return nil, err
	}
	if err := checkCurve(w.Curve, id, "the witness"); err != nil {
		return nil, err
	}
	out := make([]S, len(w.Values))
	for i := range w.Values {
		if out[i], err = scalar[S, PS](&w.Values[i]); err != nil {
			return nil, fmt.Errorf("circomconv: witness value %d: %w", i, err)
		}
	}
	return out, nil
}

// scalar returns the element of S whose value is e (circom's canonical little-endian
// bytes), refusing a value not below S's modulus.
func scalar[S any, PS curve.Scalar[S]](e *circom.FieldElement) (S, error) {
	// SetBytesCanonical reads big-endian.
	var be [circom.FieldElementSize]byte
	for i := range e {
		be[len(be)-1-i] = e[i]
	}
	var s S
	err := PS(&s).SetBytesCanonical(be[:])
	return s, err
}

// scalarModulus is the modulus of S's field: −1 + 1 as an integer. Deriving it from
// S's own arithmetic keeps the curve of a scalar type out of a per-curve table.
func scalarModulus[S any, PS curve.Scalar[S]]() *big.Int {
	var minusOne S
	PS(&minusOne).SetOne()
	PS(&minusOne).Neg(&minusOne)
	m := PS(&minusOne).BigInt(new(big.Int))
	return m.Add(m, big.NewInt(1))
}

// scalarCurve returns the curve whose scalar field S's is, recognised by its modulus.
func scalarCurve[S any, PS curve.Scalar[S]]() (ecc.ID, error) {
	m := scalarModulus[S, PS]()
	for _, id := range curve.IDs {
		if m.Cmp(id.ScalarField()) == 0 {
			return id, nil
		}
	}
	var s S
	return ecc.UNKNOWN, fmt.Errorf("circomconv: %T is the scalar of neither BLS12-381 nor BN254", s)
}
