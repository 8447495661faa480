package constraints

import (
	"errors"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

func small() *Matrices {
	m := &Matrices{NbWires: 4, Coefficients: make([]fr.Element, 3)}
	m.Coefficients[1].SetOne()
	m.Coefficients[2].SetUint64(3)
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
// that breaks constraint 0.
func TestEval(t *testing.T) {
	m := small()
	// Row 0: w1 · w1 = w3. Row 1: (3·w2 + w0) · w0 = w2, so w2 = -1/2.
	var x, w2, w3 fr.Element
	x.SetUint64(5)
	w3.Mul(&x, &x)
	w2.SetInt64(-2)
	w2.Inverse(&w2)
	w := []fr.Element{{}, x, w2, w3}
	w[0].SetOne()
	a, b, c := make([]fr.Element, 2), make([]fr.Element, 2), make([]fr.Element, 2)
	if bad := m.Eval(w, a, b, c); bad != -1 {
		t.Fatalf("constraint %d fails on a satisfying W", bad)
	}
	w[3].SetUint64(26)
	if bad := m.Eval(w, a, b, nil); bad != 0 {
		t.Fatalf("Eval names %d, want constraint 0", bad)
	}
}

// TestEvalParallel agrees with Eval on a system of several chunks, with a
// failure in a late chunk and in an early one.
func TestEvalParallel(t *testing.T) {
	const rows = 3*evalChunk + 7
	m := &Matrices{NbWires: 3, Coefficients: make([]fr.Element, 2)}
	m.Coefficients[1].SetOne()
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
	var w [3]fr.Element
	w[0].SetOne()
	w[1].SetUint64(7)
	w[2].SetUint64(49)
	for _, tc := range []struct {
		breakRow int
	}{{-1}, {2*evalChunk + 3}, {5}} {
		mm := *m
		mm.C.Wire = append([]uint32(nil), m.C.Wire...)
		if tc.breakRow >= 0 {
			mm.C.Wire[tc.breakRow] = 1 // w1 · w1 = w1: false for 7
		}
		n := rows
		a1, b1 := make([]fr.Element, n), make([]fr.Element, n)
		a2, b2 := make([]fr.Element, n), make([]fr.Element, n)
		want := mm.Eval(w[:], a1, b1, nil)
		for _, threads := range []int{1, 3} {
			if got := mm.EvalParallel(w[:], a2, b2, threads); got != want || got != tc.breakRow {
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
