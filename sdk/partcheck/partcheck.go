package partcheck

import (
	"fmt"
	"math"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bls12-381"
)

// Failure says where a partition fails its circuit. It is the error Check and
// Public return for a partition that does not satisfy the circuit.
type Failure struct {
	// Constraint is the index of the first failing constraint, or -1 when the
	// failure is not a constraint's (a size, a public input).
	Constraint int
	// Reason says what is wrong.
	Reason string
}

func (f *Failure) Error() string {
	if f.Constraint < 0 {
		return f.Reason
	}
	return fmt.Sprintf("constraint %d: %s", f.Constraint, f.Reason)
}

// Check evaluates every constraint L·R = O of ccs on the wire vector W and
// returns a *Failure for the first constraint where A[i] ≠ L(W), B[i] ≠ R(W)
// or L(W)·R(W) ≠ O(W), or for vectors of the wrong length. A nil error means
// the partition satisfies the circuit and its A and B are the ones a prover
// expects.
func Check(ccs *cs.R1CS, W, A, B []fr.Element) error {
	nbWires := ccs.GetNbInternalVariables() + ccs.GetNbPublicVariables() + ccs.GetNbSecretVariables()
	nbConstraints := ccs.GetNbConstraints()
	switch {
	case len(W) != nbWires:
		return &Failure{Constraint: -1, Reason: fmt.Sprintf("W has %d elements, the circuit has %d wires", len(W), nbWires)}
	case len(A) != nbConstraints:
		return &Failure{Constraint: -1, Reason: fmt.Sprintf("A has %d elements, the circuit has %d constraints", len(A), nbConstraints)}
	case len(B) != nbConstraints:
		return &Failure{Constraint: -1, Reason: fmt.Sprintf("B has %d elements, the circuit has %d constraints", len(B), nbConstraints)}
	}
	if !W[0].IsOne() {
		return &Failure{Constraint: -1, Reason: "W[0], the constant wire, is not 1"}
	}
	it := ccs.GetR1CIterator()
	i := 0
	for r := it.Next(); r != nil; r = it.Next() {
		if i >= nbConstraints {
			return &Failure{Constraint: i, Reason: "the constraint system has more constraints than it declares"}
		}
		a, err := eval(ccs, r.L, W)
		if err != nil {
			return &Failure{Constraint: i, Reason: "left side: " + err.Error()}
		}
		b, err := eval(ccs, r.R, W)
		if err != nil {
			return &Failure{Constraint: i, Reason: "right side: " + err.Error()}
		}
		o, err := eval(ccs, r.O, W)
		if err != nil {
			return &Failure{Constraint: i, Reason: "output side: " + err.Error()}
		}
		if !a.Equal(&A[i]) {
			return &Failure{Constraint: i, Reason: "A differs from the left side evaluated on W"}
		}
		if !b.Equal(&B[i]) {
			return &Failure{Constraint: i, Reason: "B differs from the right side evaluated on W"}
		}
		var ab fr.Element
		ab.Mul(&a, &b)
		if !ab.Equal(&o) {
			return &Failure{Constraint: i, Reason: "not satisfied: A·B differs from the output side evaluated on W"}
		}
		i++
	}
	if i != nbConstraints {
		return &Failure{Constraint: -1, Reason: fmt.Sprintf("the constraint system has %d constraints, it declares %d", i, nbConstraints)}
	}
	return nil
}

// eval returns the linear expression l evaluated on W.
func eval(ccs *cs.R1CS, l constraint.LinearExpression, W []fr.Element) (fr.Element, error) {
	var sum, t fr.Element
	for _, term := range l {
		if int(term.CID) >= len(ccs.Coefficients) {
			return sum, fmt.Errorf("coefficient %d out of range", term.CID)
		}
		c := &ccs.Coefficients[term.CID]
		if term.VID == math.MaxUint32 { // a constant term
			sum.Add(&sum, c)
			continue
		}
		if int(term.VID) >= len(W) {
			return sum, fmt.Errorf("wire %d out of range", term.VID)
		}
		t.Mul(c, &W[term.VID])
		sum.Add(&sum, &t)
	}
	return sum, nil
}

// Public checks that W carries the constant 1 at W[0] and, at W[1:], the public
// inputs public (the public part of the submitted witness, without the constant
// wire), in order. A partition whose public inputs differ proves another
// statement than the one the client asked about.
func Public(W []fr.Element, public []fr.Element) error {
	if len(W) < 1+len(public) {
		return &Failure{Constraint: -1, Reason: fmt.Sprintf("W has %d elements, fewer than the constant wire and %d public inputs", len(W), len(public))}
	}
	if !W[0].IsOne() {
		return &Failure{Constraint: -1, Reason: "W[0], the constant wire, is not 1"}
	}
	for i := range public {
		if !W[1+i].Equal(&public[i]) {
			return &Failure{Constraint: -1, Reason: fmt.Sprintf("public input %d (W[%d]) differs from the submitted witness", i, 1+i)}
		}
	}
	return nil
}
