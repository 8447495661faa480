//go:build linux

package shm

import (
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	bnfr "github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/constraints"
	"github.com/zkhost/zkhost/sdk/curve"
)

// TestWriteCompact writes a witness-like W as a compact partition, on each
// curve, and reads it back as a backend does (ReadCompactPartition, sealed)
// and as the host does (ReadW of its first wires); Remove releases it.
func TestWriteCompact(t *testing.T) {
	t.Run("BLS12-381", func(t *testing.T) { testWriteCompact[fr.Element](t, sdk.CurveBLS12381) })
	t.Run("BN254", func(t *testing.T) { testWriteCompact[bnfr.Element](t, sdk.CurveBN254) })
}

// testWriteCompact writes and reads back a compact partition of S, whose
// handle must name wantCurve.
func testWriteCompact[S ~[4]uint64, PS curve.Scalar[S]](t *testing.T, wantCurve sdk.Curve) {
	s := newTestStore(t)
	const n = 3000
	w := make([]S, n)
	for i := range w {
		switch i % 7 {
		case 1, 4:
			PS(&w[i]).SetOne()
		case 5:
			PS(&w[i]).SetUint64(uint64(i) * 1000003)
		}
	}
	h, err := WriteCompact[S, PS](s, "compact", w, 1234, 2)
	if err != nil {
		t.Fatal(err)
	}
	if h.Format != sdk.FormatCompactW || h.NbOther != uint64(n/7) || h.NbConstraints != 1234 || h.Curve != wantCurve {
		t.Fatalf("handle %+v: want compact, %s, %d others, 1234 constraints", h, wantCurve, n/7)
	}
	// The 1s are the curve's own: two bits a wire, and only the n/7 others
	// as values.
	if _, _, _, size := sdk.CompactLayout(n, n/7); h.Size != int64(size) {
		t.Fatalf("a compact partition of %d bytes, want %d", h.Size, size)
	}
	words := sdk.CompactWords(n)
	other, bits, values := make([]uint64, words), make([]uint64, words), make([]S, h.NbOther)
	if err := sdk.ReadCompactPartition(h, other, bits, values, 1); err != nil {
		t.Fatal(err)
	}
	back := make([]S, n)
	if err := sdk.ExpandW[S, PS](other, bits, values, back); err != nil {
		t.Fatal(err)
	}
	for i := range w {
		if back[i] != w[i] {
			t.Fatalf("wire %d: read %s, wrote %s", i, PS(&back[i]).String(), PS(&w[i]).String())
		}
	}
	for _, k := range []int{0, 1, 6, 64, 100, n} {
		head, err := ReadWOf[S, PS](s, h, k)
		if err != nil {
			t.Fatalf("ReadW(%d): %v", k, err)
		}
		for i := range head {
			if head[i] != w[i] {
				t.Fatalf("ReadW(%d): wire %d differs", k, i)
			}
		}
	}
	// Read as the other curve's scalars: refused, naming both.
	var wrong error
	if wantCurve == sdk.CurveBN254 {
		_, wrong = s.ReadW(h, 1)
	} else {
		_, wrong = ReadWOf[bnfr.Element](s, h, 1)
	}
	if wrong == nil || !strings.Contains(wrong.Error(), "the partition is") {
		t.Errorf("W of a %s partition read as the other curve's scalars: %v, want a refusal naming both", wantCurve, wrong)
	}
	if err := s.Remove(h); err != nil {
		t.Fatal(err)
	}
	if s.Len() != 0 {
		t.Fatalf("%d partitions left after Remove", s.Len())
	}
}

// TestWriteConstraints writes matrices into a sealed memfd and opens them as a
// backend does; a handle that lies about the counts is refused.
func TestWriteConstraints(t *testing.T) {
	s := newTestStore(t)
	coeffs := make([]fr.Element, 4)
	coeffs[1].SetOne()
	coeffs[3].SetUint64(7)
	m := &constraints.Matrices{NbWires: 5, Coefficients: constraints.CoefficientsOf(coeffs)}
	m.A = constraints.Matrix{Start: []uint32{0, 2, 3}, Wire: []uint32{0, 4, 2}, Coeff: []uint32{1, 3, 1}}
	m.B = constraints.Matrix{Start: []uint32{0, 1, 1}, Wire: []uint32{1}, Coeff: []uint32{1}}
	m.C = constraints.Matrix{Start: []uint32{0, 1, 2}, Wire: []uint32{3, 0}, Coeff: []uint32{1, 2}}
	c, err := s.WriteConstraints("matrices", m)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	got, closeFn, err := sdk.OpenConstraints(c.Handle())
	if err != nil {
		t.Fatal(err)
	}
	if got.NbWires != 5 || got.NbConstraints() != 2 || got.Coefficients[3] != m.Coefficients[3] {
		t.Fatalf("read %+v", got)
	}
	for i, pair := range [][2]*constraints.Matrix{{&got.A, &m.A}, {&got.B, &m.B}, {&got.C, &m.C}} {
		g, w := pair[0], pair[1]
		for k := range w.Start {
			if g.Start[k] != w.Start[k] {
				t.Fatalf("matrix %d: Start[%d] = %d, want %d", i, k, g.Start[k], w.Start[k])
			}
		}
		for k := range w.Wire {
			if g.Wire[k] != w.Wire[k] || g.Coeff[k] != w.Coeff[k] {
				t.Fatalf("matrix %d: term %d differs", i, k)
			}
		}
	}
	if err := closeFn(); err != nil {
		t.Fatal(err)
	}
	h := c.Handle()
	h.NbTerms[0]++
	if _, _, err := sdk.OpenConstraints(h); sdk.KindOf(err) != sdk.ErrInvalidArgument {
		t.Errorf("a handle with a wrong term count: %v, want invalid argument", err)
	}
	bad := *m
	bad.A.Wire = []uint32{0, 5, 2}
	if _, err := s.WriteConstraints("bad", &bad); err == nil {
		t.Error("WriteConstraints took a term on wire 5 of 5")
	}
}
