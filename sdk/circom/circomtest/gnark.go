package circomtest

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"

	"github.com/zkhost/zkhost/sdk/curve"
)

// Rows evaluates the L and R of every row of sys, a gnark R1CS (such as
// circomconv.ConstraintSystem makes of a circom .r1cs), for the wire values w: a
// partition's A and B, as the host evaluates them, for tests that prove a circom
// circuit without the host.
func Rows[S any, PS curve.Scalar[S]](sys constraint.ConstraintSystem, w []S) (a, b []S, err error) {
	r1cs, ok := sys.(constraint.R1CS[constraint.U64])
	if !ok {
		return nil, nil, fmt.Errorf("circomtest: %T is not an R1CS", sys)
	}
	coeffs := make([]S, sys.GetNbCoefficients())
	for i := range coeffs {
		PS(&coeffs[i]).SetBigInt(sys.ToBigInt(sys.GetCoefficient(i)))
	}
	eval := func(l constraint.LinearExpression) (s S) {
		for _, term := range l {
			var v S
			PS(&v).Mul(&coeffs[term.CID], &w[term.VID])
			PS(&s).Add(&s, &v)
		}
		return s
	}
	for _, r := range r1cs.GetR1Cs() {
		a = append(a, eval(r.L))
		b = append(b, eval(r.R))
	}
	return a, b, nil
}

// PublicWitness returns gnark's public witness of the values public (the curve's
// fr.Elements), over id's scalar field: what groth16.Verify takes for a circom
// circuit's public signals.
func PublicWitness[S any](id ecc.ID, public []S) (witness.Witness, error) {
	w, err := witness.New(id.ScalarField())
	if err != nil {
		return nil, err
	}
	values := make(chan any, len(public))
	for _, v := range public {
		values <- v
	}
	close(values)
	if err := w.Fill(len(public), 0, values); err != nil {
		return nil, err
	}
	return w, nil
}
