package circom

import (
	"fmt"
	"math/big"
)

// Check evaluates every constraint A·B = C over the field for the witness w and returns nil when
// all hold. A witness for another prime or another number of wires, or whose wire 0 is not 1, is
// refused with ErrWitnessMismatch; the first constraint that fails, in file order, is returned as
// an *UnsatisfiedError (errors.Is(err, ErrUnsatisfied)).
//
// Check works in math/big so that one code path serves both fields; each linear combination is
// summed unreduced and reduced once. That is several times slower than gnark-crypto's field
// arithmetic (BenchmarkCheck gives the cost per constraint); a caller that checks every witness
// of a large circuit on a hot path may want a curve-specific evaluation over fr elements.
func (cs *R1CS) Check(w *Witness) error {
	if w.Prime == nil || cs.Prime == nil || w.Prime.Cmp(cs.Prime) != 0 {
		return fmt.Errorf("%w: witness for the %s field, r1cs for the %s field", ErrWitnessMismatch, w.Curve, cs.Curve)
	}
	if uint64(len(w.Values)) != uint64(cs.NumWires) {
		return fmt.Errorf("%w: witness has %d values, the r1cs has %d wires", ErrWitnessMismatch, len(w.Values), cs.NumWires)
	}
	// A Witness may be built by hand rather than read, so its values are checked as the reader
	// checks them: what Check accepts is then what the readers accept and what
	// fr.LittleEndian.Element converts, with no value that stands for another after reduction.
	values := make([]*big.Int, len(w.Values))
	for i := range w.Values {
		values[i] = w.Values[i].BigInt()
		if values[i].Cmp(cs.Prime) >= 0 {
			return fmt.Errorf("%w: witness value %d", ErrNotCanonical, i)
		}
	}
	if len(values) == 0 {
		return fmt.Errorf("%w: the witness has no values, not even wire 0", ErrWitnessMismatch)
	}
	if values[0].Cmp(big.NewInt(1)) != 0 {
		return fmt.Errorf("%w: wire 0 is the constant 1, the witness has %v", ErrWitnessMismatch, values[0])
	}

	var a, b, c, product, coefficient big.Int
	for i := range cs.Constraints {
		constraint := &cs.Constraints[i]
		for j, lc := range [...]struct {
			sum *big.Int
			lc  LinearCombination
		}{{&a, constraint.A}, {&b, constraint.B}, {&c, constraint.C}} {
			if err := cs.evaluate(lc.sum, lc.lc, values, &product, &coefficient); err != nil {
				return fmt.Errorf("constraint %d, %c: %w", i, "ABC"[j], err)
			}
		}
		product.Mul(&a, &b)
		product.Mod(&product, cs.Prime)
		if product.Cmp(&c) != 0 {
			return &UnsatisfiedError{Constraint: i}
		}
	}
	return nil
}

// evaluate sets sum to the value of lc for the wire values, reduced modulo the prime. A read
// R1CS has its wire indices checked already; a hand-built one may not, and gets an error rather
// than a panic.
func (cs *R1CS) evaluate(sum *big.Int, lc LinearCombination, values []*big.Int, product, coefficient *big.Int) error {
	sum.SetInt64(0)
	for k := range lc {
		wire := lc[k].Wire
		if uint64(wire) >= uint64(len(values)) {
			return fmt.Errorf("%w: term %d: wire %d, the witness has %d values", ErrWireIndex, k, wire, len(values))
		}
		lc[k].Coefficient.setBigInt(coefficient)
		product.Mul(coefficient, values[wire])
		sum.Add(sum, product)
	}
	sum.Mod(sum, cs.Prime)
	return nil
}
