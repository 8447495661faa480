package constraints

import (
	"errors"
	"fmt"
	"math"
	"sync"
	"unsafe"

	"github.com/zkhost/zkhost/sdk/curve"
)

// ErrInvalid says a Matrices value is inconsistent (Check names what).
var ErrInvalid = errors.New("constraints: invalid matrices")

// MaxTerms bounds the terms of one matrix: Start is 32-bit, which keeps the
// row index a device holds to 4 bytes a constraint. A system beyond it is
// proved from full partitions (W, A and B) instead.
const MaxTerms = math.MaxUint32

// Matrix is one of the three linear expressions of every constraint, in
// compressed sparse rows: row i's terms are Wire[k] times
// Coefficients[Coeff[k]] for k in Start[i]..Start[i+1].
type Matrix struct {
	Start []uint32 // NbConstraints+1 entries, Start[0] == 0, non-decreasing
	Wire  []uint32 // a wire index below NbWires, per term
	Coeff []uint32 // an index into Matrices.Coefficients, per term
}

// Terms is the number of terms in m.
func (m *Matrix) Terms() int { return len(m.Wire) }

// Matrices is an R1CS: constraint i says (L_i·W)·(R_i·W) = O_i·W, with L, R
// and O the rows of A, B and C. Coefficients is the system's coefficient
// table: scalars of its curve's field as gnark-crypto's fr.Element holds them
// (four little-endian words, Montgomery form), of BLS12-381 or BN254 alike.
// The matrices do not say which: the key they are loaded with does, and Eval
// reads the table as that curve's scalars.
type Matrices struct {
	NbWires      uint64
	Coefficients [][4]uint64
	A, B, C      Matrix
}

// CoefficientsOf copies a coefficient table of scalars S (a gnark system's,
// of either curve) into Matrices.Coefficients' form.
func CoefficientsOf[S ~[4]uint64](table []S) [][4]uint64 {
	out := make([][4]uint64, len(table))
	for i, c := range table {
		out[i] = [4]uint64(c)
	}
	return out
}

// NbConstraints is the number of constraints (rows).
func (m *Matrices) NbConstraints() uint64 {
	if len(m.A.Start) == 0 {
		return 0
	}
	return uint64(len(m.A.Start) - 1)
}

// Check verifies that m is consistent: three matrices of the same number of
// rows, each Start beginning at 0, non-decreasing and ending at the number of
// terms, every wire below NbWires and every coefficient index inside the
// table. A backend checks this before it indexes anything with the values: a
// device kernel must never read out of bounds, whatever the file said.
func (m *Matrices) Check() error {
	if len(m.A.Start) == 0 {
		return fmt.Errorf("%w: A has no row index", ErrInvalid)
	}
	rows := len(m.A.Start) - 1
	for i, x := range m.matrices() {
		if err := x.check(string("ABC"[i]), rows, m.NbWires, uint64(len(m.Coefficients))); err != nil {
			return err
		}
	}
	return nil
}

func (x *Matrix) check(name string, rows int, nbWires, nbCoeffs uint64) error {
	if len(x.Start) != rows+1 {
		return fmt.Errorf("%w: %s has %d rows, A has %d", ErrInvalid, name, len(x.Start)-1, rows)
	}
	if len(x.Wire) != len(x.Coeff) {
		return fmt.Errorf("%w: %s has %d wires and %d coefficients", ErrInvalid, name, len(x.Wire), len(x.Coeff))
	}
	if uint64(len(x.Wire)) > MaxTerms {
		return fmt.Errorf("%w: %s has %d terms, at most %d", ErrInvalid, name, len(x.Wire), uint64(MaxTerms))
	}
	if x.Start[0] != 0 {
		return fmt.Errorf("%w: %s's row 0 starts at term %d, not 0", ErrInvalid, name, x.Start[0])
	}
	for i := 1; i <= rows; i++ {
		if x.Start[i] < x.Start[i-1] {
			return fmt.Errorf("%w: %s's row %d starts at term %d, before row %d's %d", ErrInvalid, name, i, x.Start[i], i-1, x.Start[i-1])
		}
	}
	if int(x.Start[rows]) != len(x.Wire) {
		return fmt.Errorf("%w: %s's rows end at term %d, it has %d", ErrInvalid, name, x.Start[rows], len(x.Wire))
	}
	for k, w := range x.Wire {
		if uint64(w) >= nbWires {
			return fmt.Errorf("%w: %s's term %d is on wire %d, the system has %d", ErrInvalid, name, k, w, nbWires)
		}
	}
	for k, c := range x.Coeff {
		if uint64(c) >= nbCoeffs {
			return fmt.Errorf("%w: %s's term %d has coefficient %d, the table has %d", ErrInvalid, name, k, c, nbCoeffs)
		}
	}
	return nil
}

// Clone returns a copy of m in memory of its own (m may alias a mapping
// that is about to go).
func (m *Matrices) Clone() *Matrices {
	c := &Matrices{NbWires: m.NbWires, Coefficients: make([][4]uint64, len(m.Coefficients))}
	for i, x := range m.matrices() {
		*c.matrices()[i] = Matrix{Start: make([]uint32, len(x.Start)), Wire: make([]uint32, len(x.Wire)), Coeff: make([]uint32, len(x.Coeff))}
	}
	m.CopyTo(c)
	return c
}

// CopyTo copies m's contents into dst, which has m's shape (every slice of
// the same length: a constraints file's view, or Clone's allocation).
func (m *Matrices) CopyTo(dst *Matrices) {
	dst.NbWires = m.NbWires
	copy(dst.Coefficients, m.Coefficients)
	for i, x := range m.matrices() {
		d := dst.matrices()[i]
		copy(d.Start, x.Start)
		copy(d.Wire, x.Wire)
		copy(d.Coeff, x.Coeff)
	}
}

// matrices lists A, B and C.
func (m *Matrices) matrices() [3]*Matrix { return [3]*Matrix{&m.A, &m.B, &m.C} }

// coefficientsAs views m's coefficient table as scalars S (the same four
// words a scalar).
func coefficientsAs[S ~[4]uint64](m *Matrices) []S {
	return unsafe.Slice((*S)(unsafe.Pointer(unsafe.SliceData(m.Coefficients))), len(m.Coefficients))
}

// row evaluates row i of x at w: the sum of its terms' coefficients times
// their wires' values.
func row[S ~[4]uint64, PS curve.Scalar[S]](coeffs []S, x *Matrix, i int, w []S) S {
	var acc, t S
	for k := x.Start[i]; k < x.Start[i+1]; k++ {
		PS(&t).Mul(&coeffs[x.Coeff[k]], &w[x.Wire[k]])
		PS(&acc).Add(&acc, &t)
	}
	return acc
}

// Eval writes A·w, B·w and C·w into a, b and c (each NbConstraints long; c may
// be nil) and returns the first constraint w does not satisfy (a_i·b_i != c_i),
// or -1, over the field of the scalars S (the curve of m's key: either
// curve's fr.Element). It is the reference every backend's evaluation is
// checked against: a plain loop, one core.
func Eval[S ~[4]uint64, PS curve.Scalar[S]](m *Matrices, w, a, b, c []S) int {
	coeffs := coefficientsAs[S](m)
	bad := -1
	for i := range int(m.NbConstraints()) {
		a[i] = row[S, PS](coeffs, &m.A, i, w)
		b[i] = row[S, PS](coeffs, &m.B, i, w)
		ci := row[S, PS](coeffs, &m.C, i, w)
		if c != nil {
			c[i] = ci
		}
		var ab S
		PS(&ab).Mul(&a[i], &b[i])
		if bad < 0 && ab != ci {
			bad = i
		}
	}
	return bad
}

// evalChunk is how many rows one goroutine of EvalParallel evaluates at a
// time.
const evalChunk = 1 << 14

// EvalParallel is Eval over up to threads goroutines (one when threads is
// below 2), without C: it writes A·w and B·w into a and b and returns the
// first constraint w does not satisfy, or -1. The rows are independent, so
// they split into chunks; the first failure is the least chunk's.
func EvalParallel[S ~[4]uint64, PS curve.Scalar[S]](m *Matrices, w, a, b []S, threads int) int {
	coeffs := coefficientsAs[S](m)
	n := int(m.NbConstraints())
	chunks := (n + evalChunk - 1) / evalChunk
	bad := make([]int, chunks)
	var wg sync.WaitGroup
	threads = max(1, min(threads, chunks))
	for t := range threads {
		wg.Go(func() {
			for ch := t; ch < chunks; ch += threads {
				bad[ch] = -1
				for i := ch * evalChunk; i < min(n, (ch+1)*evalChunk); i++ {
					a[i] = row[S, PS](coeffs, &m.A, i, w)
					b[i] = row[S, PS](coeffs, &m.B, i, w)
					c := row[S, PS](coeffs, &m.C, i, w)
					var ab S
					PS(&ab).Mul(&a[i], &b[i])
					if bad[ch] < 0 && ab != c {
						bad[ch] = i
					}
				}
			}
		})
	}
	wg.Wait()
	for _, i := range bad {
		if i >= 0 {
			return i
		}
	}
	return -1
}
