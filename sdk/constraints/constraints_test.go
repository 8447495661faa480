package constraints

import (
	"errors"
	"testing"

	blsfr "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	bnfr "github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"github.com/zkhost/zkhost/sdk/curve"
)

// small is a two-constraint system over the scalars S.
func small() *Matrices { return smallOver[blsfr.Element]() }

func smallOver[S ~[4]uint64, PS curve.Scalar[S]]() *Matrices {
	coeffs := make([]S, 3)
	PS(&coeffs[1]).SetOne()
	PS(&coeffs[2]).SetUint64(3)
	m := &Matrices{NbWires: 4, Coefficients: CoefficientsOf(coeffs)}
	m.A = Matrix{Start: []uint32{0, 1, 3}, Wire: []uint32{1, 2, 0}, Coeff: []uint32{1, 2, 1}}
	m.B = Matrix{Start: []uint32{0, 1, 2}, Wire: []uint32{1, 0}, Coeff: []uint32{1, 1}}
	m.C = Matrix{Start: []uint32{0, 1, 2}, Wire: []uint32{3, 2}, Coeff: []uint32{1, 1}}
	return m
}

// TestCheck refuses every inconsistency a device would index with.
func TestCheck(t *testing.T) {
	if err := small().Check(); err != nil {
		t.Fatalf("valid matrices refused: %v", err)
	}
	for _, tc := range []struct {
		name string
		edit func(m *Matrices)
	}{
		{"no rows", func(m *Matrices) { m.A.Start = nil }},
		{"rows differ", func(m *Matrices) { m.B.Start = m.B.Start[:2] }},
		{"start not 0", func(m *Matrices) { m.C.Start[0] = 1 }},
		{"start decreasing", func(m *Matrices) { m.A.Start[1] = 3; m.A.Start[2] = 2 }},
		{"end not terms", func(m *Matrices) { m.B.Start[2] = 1 }},
		{"wire out of range", func(m *Matrices) { m.C.Wire[0] = 4 }},
		{"coefficient out of range", func(m *Matrices) { m.A.Coeff[2] = 3 }},
		{"lengths differ", func(m *Matrices) { m.A.Coeff = m.A.Coeff[:2] }},
	} {
		m := small()
		tc.edit(m)
		if err := m.Check(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: %v, want ErrInvalid", tc.name, err)
		}
	}
}

// TestEval evaluates a two-constraint system at a satisfying W and at one
// that breaks constraint 0, on either curve's field.
func TestEval(t *testing.T) {
	t.Run("BLS12-381", testEval[blsfr.Element])
	t.Run("BN254", testEval[bnfr.Element])
}

func testEval[S ~[4]uint64, PS curve.Scalar[S]](t *testing.T) {
	m := smallOver[S, PS]()
	// Row 0: w1 · w1 = w3. Row 1: (3·w2 + w0) · w0 = w2, so w2 = -1/2.
	w := make([]S, 4)
	PS(&w[0]).SetOne()
	PS(&w[1]).SetUint64(5)
	PS(&w[3]).Mul(&w[1], &w[1])
	PS(&w[2]).SetUint64(2)
	PS(&w[2]).Neg(&w[2])
	PS(&w[2]).Inverse(&w[2])
	a, b, c := make([]S, 2), make([]S, 2), make([]S, 2)
	if bad := Eval[S, PS](m, w, a, b, c); bad != -1 {
		t.Fatalf("constraint %d fails on a satisfying W", bad)
	}
	PS(&w[3]).SetUint64(26)
	if bad := Eval[S, PS](m, w, a, b, nil); bad != 0 {
		t.Fatalf("Eval names %d, want constraint 0", bad)
	}
}

// TestEvalReadsTheCurve: a table built over one curve's field and W solved
// over it satisfy the system there, and not when read as the other curve's
// scalars (-1/2 differs between the fields): Eval's field is its S.
func TestEvalReadsTheCurve(t *testing.T) {
	m := smallOver[blsfr.Element]()
	w := make([]blsfr.Element, 4)
	w[0].SetOne()
	w[1].SetUint64(5)
	w[3].Mul(&w[1], &w[1])
	w[2].SetInt64(-2)
	w[2].Inverse(&w[2])
	if bad := Eval(m, w, make([]blsfr.Element, 2), make([]blsfr.Element, 2), nil); bad != -1 {
		t.Fatalf("BLS12-381: constraint %d fails on a satisfying W", bad)
	}
	wbn := make([]bnfr.Element, 4)
	for i := range w {
		wbn[i] = bnfr.Element(w[i])
	}
	if bad := Eval(m, wbn, make([]bnfr.Element, 2), make([]bnfr.Element, 2), nil); bad == -1 {
		t.Fatal("BLS12-381 words read as BN254 scalars satisfied the system")
	}
}

// TestEvalParallel agrees with Eval on a system of several chunks, with a
// failure in a late chunk and in an early one.
func TestEvalParallel(t *testing.T) {
	t.Run("BLS12-381", testEvalParallel[blsfr.Element])
	t.Run("BN254", testEvalParallel[bnfr.Element])
}

func testEvalParallel[S ~[4]uint64, PS curve.Scalar[S]](t *testing.T) {
	const rows = 3*evalChunk + 7
	coeffs := make([]S, 2)
	PS(&coeffs[1]).SetOne()
	m := &Matrices{NbWires: 3, Coefficients: CoefficientsOf(coeffs)}
	// Every row: w1 · w1 = w2.
	for _, x := range []*Matrix{&m.A, &m.B, &m.C} {
		x.Start = make([]uint32, rows+1)
		x.Wire = make([]uint32, rows)
		x.Coeff = make([]uint32, rows)
		for i := range rows {
			x.Start[i+1] = uint32(i + 1)
			x.Wire[i], x.Coeff[i] = 1, 1
		}
	}
	for i := range m.C.Wire {
		m.C.Wire[i] = 2
	}
	var w [3]S
	PS(&w[0]).SetOne()
	PS(&w[1]).SetUint64(7)
	PS(&w[2]).SetUint64(49)
	for _, tc := range []struct {
		breakRow int
	}{{-1}, {2*evalChunk + 3}, {5}} {
		mm := *m
		mm.C.Wire = append([]uint32(nil), m.C.Wire...)
		if tc.breakRow >= 0 {
			mm.C.Wire[tc.breakRow] = 1 // w1 · w1 = w1: false for 7
		}
		n := rows
		a1, b1 := make([]S, n), make([]S, n)
		a2, b2 := make([]S, n), make([]S, n)
		want := Eval[S, PS](&mm, w[:], a1, b1, nil)
		for _, threads := range []int{1, 3} {
			if got := EvalParallel[S, PS](&mm, w[:], a2, b2, threads); got != want || got != tc.breakRow {
				t.Fatalf("threads %d: EvalParallel names %d, Eval %d, broken row %d", threads, got, want, tc.breakRow)
			}
			for i := range a1 {
				if a1[i] != a2[i] || b1[i] != b2[i] {
					t.Fatalf("row %d differs", i)
				}
			}
		}
	}
}
