package partcheck

import (
	"fmt"
	"math"
	"slices"

	"github.com/consensys/gnark-crypto/ecc"
	blsfr "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	bnfr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	cs_bn254 "github.com/consensys/gnark/constraint/bn254"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/curve"
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

// CheckPartition checks partition p (sdk.OpenPartition) against ccs, gnark's
// R1CS of BLS12-381 or BN254: it dispatches on the constraint system's curve
// and runs Check with that curve's scalars. A partition of another curve than
// the circuit's is a *Failure naming both; a compact partition, whose W is
// packed, is refused too (the host checks a synthesizer's partitions, which are
// full).
func CheckPartition(ccs constraint.ConstraintSystem, p *sdk.Partition) error {
	switch ccs.(type) {
	case *cs.R1CS:
		return checkPartition[blsfr.Element](ccs, p)
	case *cs_bn254.R1CS:
		return checkPartition[bnfr.Element](ccs, p)
	}
	return fmt.Errorf("partcheck: a constraint system of type %T; it checks gnark's R1CS of BLS12-381 or BN254", ccs)
}

// checkPartition is CheckPartition for a circuit whose scalars are S.
func checkPartition[S ~[4]uint64, PS curve.Scalar[S]](ccs constraint.ConstraintSystem, p *sdk.Partition) error {
	h := p.Handle()
	if want := curve.Name(curve.ScalarIDOf[S]()); string(h.Curve) != want {
		return &Failure{Constraint: -1, Reason: fmt.Sprintf("the partition is %s, the circuit is %s", curve.TitleOf(string(h.Curve)), curve.TitleOf(want))}
	}
	if h.Format != sdk.FormatFull {
		return &Failure{Constraint: -1, Reason: fmt.Sprintf("the partition's format is %s, not W, A and B", h.Format)}
	}
	W, A, B, err := sdk.Vectors[S](p)
	if err != nil {
		return err
	}
	return Check[S, PS](ccs, W, A, B)
}

// Check evaluates every constraint L·R = O of ccs, gnark's R1CS of BLS12-381 or
// BN254, on the wire vector W and returns a *Failure for the first constraint
// where A[i] ≠ L(W), B[i] ≠ R(W) or L(W)·R(W) ≠ O(W), for vectors of the wrong
// length, or for scalars S of another curve than the system's (naming both). A
// nil error means the partition satisfies the circuit and its A and B are the
// ones a prover expects. S is the fr.Element of the circuit's curve: one code
// path serves both, the curve a parameter.
func Check[S any, PS curve.Scalar[S]](ccs constraint.ConstraintSystem, W, A, B []S) error {
	sys, coeffs, err := systemOf[S](ccs)
	if err != nil {
		return err
	}
	nbWires := sys.GetNbInternalVariables() + sys.GetNbPublicVariables() + sys.GetNbSecretVariables()
	nbConstraints := sys.GetNbConstraints()
	switch {
	case len(W) != nbWires:
		return &Failure{Constraint: -1, Reason: fmt.Sprintf("W has %d elements, the circuit has %d wires", len(W), nbWires)}
	case len(A) != nbConstraints:
		return &Failure{Constraint: -1, Reason: fmt.Sprintf("A has %d elements, the circuit has %d constraints", len(A), nbConstraints)}
	case len(B) != nbConstraints:
		return &Failure{Constraint: -1, Reason: fmt.Sprintf("B has %d elements, the circuit has %d constraints", len(B), nbConstraints)}
	}
	if !PS(&W[0]).IsOne() {
		return &Failure{Constraint: -1, Reason: "W[0], the constant wire, is not 1"}
	}
	it := sys.GetR1CIterator()
	i := 0
	for r := it.Next(); r != nil; r = it.Next() {
		if i >= nbConstraints {
			return &Failure{Constraint: i, Reason: "the constraint system has more constraints than it declares"}
		}
		a, err := eval[S, PS](coeffs, r.L, W)
		if err != nil {
			return &Failure{Constraint: i, Reason: "left side: " + err.Error()}
		}
		b, err := eval[S, PS](coeffs, r.R, W)
		if err != nil {
			return &Failure{Constraint: i, Reason: "right side: " + err.Error()}
		}
		o, err := eval[S, PS](coeffs, r.O, W)
		if err != nil {
			return &Failure{Constraint: i, Reason: "output side: " + err.Error()}
		}
		if !PS(&a).Equal(&A[i]) {
			return &Failure{Constraint: i, Reason: "A differs from the left side evaluated on W"}
		}
		if !PS(&b).Equal(&B[i]) {
			return &Failure{Constraint: i, Reason: "B differs from the right side evaluated on W"}
		}
		var ab S
		PS(&ab).Mul(&a, &b)
		if !PS(&ab).Equal(&o) {
			return &Failure{Constraint: i, Reason: "not satisfied: A·B differs from the output side evaluated on W"}
		}
		i++
	}
	if i != nbConstraints {
		return &Failure{Constraint: -1, Reason: fmt.Sprintf("the constraint system has %d constraints, it declares %d", i, nbConstraints)}
	}
	return nil
}

// systemOf returns ccs's curve-independent part and its coefficient table as
// scalars S, or a *Failure naming both curves when S is not the system's
// scalar: the two curves' scalars are alike in memory, and a partition of one
// checked against the other's constraints would fail at a constraint for a
// reason that is not the constraint's.
func systemOf[S any](ccs constraint.ConstraintSystem) (*constraint.System, []S, error) {
	var sys *constraint.System
	var table any
	var id ecc.ID
	switch r := ccs.(type) {
	case *cs.R1CS:
		sys, table, id = &r.System, r.Coefficients, ecc.BLS12_381
	case *cs_bn254.R1CS:
		sys, table, id = &r.System, r.Coefficients, ecc.BN254
	default:
		return nil, nil, fmt.Errorf("partcheck: a constraint system of type %T; it checks gnark's R1CS of BLS12-381 or BN254", ccs)
	}
	coeffs, ok := table.([]S)
	if !ok {
		return nil, nil, &Failure{Constraint: -1, Reason: fmt.Sprintf("the partition holds %s scalars, the circuit is %s",
			scalarTitle[S](), curve.Title(id))}
	}
	return sys, coeffs, nil
}

// scalarTitle names the curve whose scalars are S, or S's type.
func scalarTitle[S any]() string {
	if id := curve.ScalarIDOf[S](); slices.Contains(curve.IDs, id) {
		return curve.Title(id)
	}
	return fmt.Sprintf("%T", *new(S))
}

// eval returns the linear expression l evaluated on W with coefficient table
// coeffs.
func eval[S any, PS curve.Scalar[S]](coeffs []S, l constraint.LinearExpression, W []S) (S, error) {
	var sum, t S
	for _, term := range l {
		if int(term.CID) >= len(coeffs) {
			return sum, fmt.Errorf("coefficient %d out of range", term.CID)
		}
		c := &coeffs[term.CID]
		if term.VID == math.MaxUint32 { // a constant term
			PS(&sum).Add(&sum, c)
			continue
		}
		if int(term.VID) >= len(W) {
			return sum, fmt.Errorf("wire %d out of range", term.VID)
		}
		PS(&t).Mul(c, &W[term.VID])
		PS(&sum).Add(&sum, &t)
	}
	return sum, nil
}

// Public checks that W carries the constant 1 at W[0] and, at W[1:], the public
// inputs public (the public part of the submitted witness, without the constant
// wire), in order. A partition whose public inputs differ proves another
// statement than the one the client asked about. S is the circuit's curve's
// fr.Element, as for Check.
func Public[S any, PS curve.Scalar[S]](W []S, public []S) error {
	if len(W) < 1+len(public) {
		return &Failure{Constraint: -1, Reason: fmt.Sprintf("W has %d elements, fewer than the constant wire and %d public inputs", len(W), len(public))}
	}
	if !PS(&W[0]).IsOne() {
		return &Failure{Constraint: -1, Reason: "W[0], the constant wire, is not 1"}
	}
	for i := range public {
		if !PS(&W[1+i]).Equal(&public[i]) {
			return &Failure{Constraint: -1, Reason: fmt.Sprintf("public input %d (W[%d]) differs from the submitted witness", i, 1+i)}
		}
	}
	return nil
}
