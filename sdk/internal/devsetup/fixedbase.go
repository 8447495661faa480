package devsetup

import (
	"context"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/zkhost/zkhost/sdk/internal/par"
)

// scalarBits is the width of the scalars fixed-base multiplication takes: fr elements
// are below r < 2^255.
const scalarBits = 255

// mulChunk is how many points a worker multiplies together, sharing one field inversion
// per window: large enough that the inversion (about 100 multiplications) is noise, small
// enough that the chunk's points, addends and digits (about 200 KiB for G1) stay in cache.
const mulChunk = 1024

// window is a fixed-base multiplication plan: scalars are cut into nbWindows signed
// digits of c bits, d_w in [-2^(c-1), 2^(c-1)], so that s = Σ d_w·2^(c·w); table w holds
// m·2^(c·w)·G for m = 1..2^(c-1), and s·G is one addition per nonzero digit, no doubling.
type window struct {
	c, nbWindows int
}

// chooseWindow picks the digit width that minimises the table's size plus the additions
// for n scalars (both in point additions). Widths stop at 16: a G2 table of 16-bit
// windows is already 96 MiB, and wider ones spend their saving in cache misses.
func chooseWindow(n int) window {
	best, bestCost := window{}, -1
	for c := 2; c <= 16; c++ {
		w := window{c: c, nbWindows: (scalarBits + c) / c} // one bit to spare for the last carry
		cost := w.nbWindows<<(c-1) + n*w.nbWindows
		if bestCost < 0 || cost < bestCost {
			best, bestCost = w, cost
		}
	}
	return best
}

// digits writes s's signed digits, least significant first, into d (len nbWindows).
// A digit above 2^(c-1) becomes d − 2^c with a carry into the next one; the last digit
// takes the carry unreduced, which the spare bit keeps within 2^(c-1).
func (w window) digits(s *fr.Element, d []int32) {
	limbs := s.Bits() // regular (non-Montgomery) form, little-endian limbs
	mask := uint64(1)<<w.c - 1
	half := int32(1) << (w.c - 1)
	carry := int32(0)
	for i := range w.nbWindows {
		bit := i * w.c
		limb, shift := bit/64, uint(bit%64)
		var v uint64
		if limb < 4 {
			v = limbs[limb] >> shift
			if shift+uint(w.c) > 64 && limb+1 < 4 {
				v |= limbs[limb+1] << (64 - shift)
			}
		}
		digit := int32(v&mask) + carry
		carry = 0
		if digit > half && i < w.nbWindows-1 {
			digit -= 1 << w.c
			carry = 1
		}
		d[i] = digit
	}
}

// g1Table is a window plan with its tables for one G1 base point.
// Deliberately parallel to g2Table below: see why there.
type g1Table struct {
	window
	pts [][]bls12381.G1Affine // pts[w][m-1] = m·2^(c·w)·G
}

// newG1Table builds the tables of plan w for base, one window per worker.
func newG1Table(ctx context.Context, w window, base *bls12381.G1Affine) (*g1Table, error) {
	t := &g1Table{window: w, pts: make([][]bls12381.G1Affine, w.nbWindows)}
	size := 1 << (w.c - 1)
	err := par.ForChunks(ctx, w.nbWindows, 1, func(i, _ int) {
		// b = 2^(c·i)·G, then m·b for m = 1..size by repeated mixed addition.
		var bj bls12381.G1Jac
		bj.FromAffine(base)
		for range w.c * i {
			bj.DoubleAssign()
		}
		var b bls12381.G1Affine
		b.FromJacobian(&bj)
		jac := make([]bls12381.G1Jac, size)
		jac[0].FromAffine(&b)
		for m := 1; m < size; m++ {
			jac[m] = jac[m-1]
			jac[m].AddMixed(&b)
		}
		t.pts[i] = make([]bls12381.G1Affine, size)
		g1ToAffine(t.pts[i], jac)
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// mul sets dst[i] = scalars[i]·G for every i, in parallel chunks. dst and scalars have
// the same length.
//
// Each chunk adds in affine coordinates, all its points' additions of one window
// together, with one field inversion for the lot (Montgomery's trick): about 5M + 1S per
// addition against 7M + 4S for a mixed Jacobian one, and the results need no conversion.
// An addition whose two x coordinates are equal (P + P or P − P: possible only for
// contrived scalars) goes through gnark-crypto's complete G1Affine.Add instead.
func (t *g1Table) mul(ctx context.Context, dst []bls12381.G1Affine, scalars []fr.Element) error {
	return par.ForChunks(ctx, len(scalars), mulChunk, func(start, end int) {
		m := end - start
		acc := dst[start:end]
		inf := make([]bool, m) // acc[i] is still the point at infinity
		digits := make([]int32, m*t.nbWindows)
		for i := range m {
			t.digits(&scalars[start+i], digits[i*t.nbWindows:(i+1)*t.nbWindows])
			inf[i] = true
		}
		idx := make([]int, 0, m)          // the points added in this window's batch
		q := make([]bls12381.G1Affine, m) // their addends, sign applied
		den := make([]fp.Element, m)      // x2 − x1, then prefix products
		for w := range t.nbWindows {
			idx = idx[:0]
			for i := range m {
				d := digits[i*t.nbWindows+w]
				if d == 0 {
					continue
				}
				k := len(idx)
				if d > 0 {
					q[k] = t.pts[w][d-1]
				} else {
					q[k] = t.pts[w][-d-1]
					q[k].Y.Neg(&q[k].Y)
				}
				switch {
				case inf[i]:
					acc[i], inf[i] = q[k], false
				case acc[i].X.Equal(&q[k].X):
					acc[i].Add(&acc[i], &q[k])
					inf[i] = acc[i].IsInfinity()
				default:
					idx = append(idx, i)
				}
			}
			if len(idx) == 0 {
				continue
			}
			// den[k] = Π_{j<k} (x2 − x1)_j, then one inversion walked back down.
			var prod, diff fp.Element
			prod.SetOne()
			for k, i := range idx {
				den[k] = prod
				diff.Sub(&q[k].X, &acc[i].X)
				prod.Mul(&prod, &diff)
			}
			prod.Inverse(&prod)
			var lambda, x3 fp.Element
			for k := len(idx) - 1; k >= 0; k-- {
				i := idx[k]
				p := &acc[i]
				diff.Sub(&q[k].X, &p.X)
				lambda.Mul(&den[k], &prod) // 1/(x2 − x1)
				prod.Mul(&prod, &diff)
				diff.Sub(&q[k].Y, &p.Y)
				lambda.Mul(&lambda, &diff)
				x3.Square(&lambda).Sub(&x3, &p.X).Sub(&x3, &q[k].X)
				diff.Sub(&p.X, &x3).Mul(&diff, &lambda)
				p.Y.Sub(&diff, &p.Y)
				p.X = x3
			}
		}
		for i := range m {
			if inf[i] {
				acc[i] = bls12381.G1Affine{}
			}
		}
	})
}

// g1ToAffine sets dst[i] to jac[i] in affine form with one inversion for all of them
// (Montgomery's trick); infinity (Z = 0) becomes gnark-crypto's affine infinity, (0, 0).
func g1ToAffine(dst []bls12381.G1Affine, jac []bls12381.G1Jac) {
	// dst[i].X holds the product of the nonzero Z before i while the inverse is built.
	acc := fp.One()
	for i := range jac {
		if jac[i].Z.IsZero() {
			continue
		}
		dst[i].X = acc
		acc.Mul(&acc, &jac[i].Z)
	}
	acc.Inverse(&acc)
	for i := len(jac) - 1; i >= 0; i-- {
		if jac[i].Z.IsZero() {
			dst[i] = bls12381.G1Affine{}
			continue
		}
		var zInv, zInv2 fp.Element
		zInv.Mul(&dst[i].X, &acc)
		acc.Mul(&acc, &jac[i].Z)
		zInv2.Square(&zInv)
		dst[i].X.Mul(&jac[i].X, &zInv2)
		dst[i].Y.Mul(&jac[i].Y, &zInv2).Mul(&dst[i].Y, &zInv)
	}
}

// g2Table is g1Table for a G2 base point. Deliberately parallel to g1Table,
// g1Table.mul and g1ToAffine above: gnark-crypto's G1 and G2 types share no
// interface, and a generic version would send every field operation of the
// inner loops through Go's generic dictionaries.
type g2Table struct {
	window
	pts [][]bls12381.G2Affine // pts[w][m-1] = m·2^(c·w)·G
}

// newG2Table builds the tables of plan w for base, one window per worker.
func newG2Table(ctx context.Context, w window, base *bls12381.G2Affine) (*g2Table, error) {
	t := &g2Table{window: w, pts: make([][]bls12381.G2Affine, w.nbWindows)}
	size := 1 << (w.c - 1)
	err := par.ForChunks(ctx, w.nbWindows, 1, func(i, _ int) {
		var bj bls12381.G2Jac
		bj.FromAffine(base)
		for range w.c * i {
			bj.DoubleAssign()
		}
		var b bls12381.G2Affine
		b.FromJacobian(&bj)
		jac := make([]bls12381.G2Jac, size)
		jac[0].FromAffine(&b)
		for m := 1; m < size; m++ {
			jac[m] = jac[m-1]
			jac[m].AddMixed(&b)
		}
		t.pts[i] = make([]bls12381.G2Affine, size)
		g2ToAffine(t.pts[i], jac)
	})
	if err != nil {
		return nil, err
	}
	return t, nil
}

// mul sets dst[i] = scalars[i]·G for every i, in parallel chunks. dst and scalars have
// the same length.
// It is g1Table.mul in G2.
func (t *g2Table) mul(ctx context.Context, dst []bls12381.G2Affine, scalars []fr.Element) error {
	return par.ForChunks(ctx, len(scalars), mulChunk, func(start, end int) {
		m := end - start
		acc := dst[start:end]
		inf := make([]bool, m) // acc[i] is still the point at infinity
		digits := make([]int32, m*t.nbWindows)
		for i := range m {
			t.digits(&scalars[start+i], digits[i*t.nbWindows:(i+1)*t.nbWindows])
			inf[i] = true
		}
		idx := make([]int, 0, m)          // the points added in this window's batch
		q := make([]bls12381.G2Affine, m) // their addends, sign applied
		den := make([]bls12381.E2, m)     // x2 − x1, then prefix products
		for w := range t.nbWindows {
			idx = idx[:0]
			for i := range m {
				d := digits[i*t.nbWindows+w]
				if d == 0 {
					continue
				}
				k := len(idx)
				if d > 0 {
					q[k] = t.pts[w][d-1]
				} else {
					q[k] = t.pts[w][-d-1]
					q[k].Y.Neg(&q[k].Y)
				}
				switch {
				case inf[i]:
					acc[i], inf[i] = q[k], false
				case acc[i].X.Equal(&q[k].X):
					acc[i].Add(&acc[i], &q[k])
					inf[i] = acc[i].IsInfinity()
				default:
					idx = append(idx, i)
				}
			}
			if len(idx) == 0 {
				continue
			}
			// den[k] = Π_{j<k} (x2 − x1)_j, then one inversion walked back down.
			var prod, diff bls12381.E2
			prod.SetOne()
			for k, i := range idx {
				den[k] = prod
				diff.Sub(&q[k].X, &acc[i].X)
				prod.Mul(&prod, &diff)
			}
			prod.Inverse(&prod)
			var lambda, x3 bls12381.E2
			for k := len(idx) - 1; k >= 0; k-- {
				i := idx[k]
				p := &acc[i]
				diff.Sub(&q[k].X, &p.X)
				lambda.Mul(&den[k], &prod) // 1/(x2 − x1)
				prod.Mul(&prod, &diff)
				diff.Sub(&q[k].Y, &p.Y)
				lambda.Mul(&lambda, &diff)
				x3.Square(&lambda).Sub(&x3, &p.X).Sub(&x3, &q[k].X)
				diff.Sub(&p.X, &x3).Mul(&diff, &lambda)
				p.Y.Sub(&diff, &p.Y)
				p.X = x3
			}
		}
		for i := range m {
			if inf[i] {
				acc[i] = bls12381.G2Affine{}
			}
		}
	})
}

// g2ToAffine is g1ToAffine for G2.
func g2ToAffine(dst []bls12381.G2Affine, jac []bls12381.G2Jac) {
	var acc bls12381.E2
	acc.SetOne()
	for i := range jac {
		if jac[i].Z.IsZero() {
			continue
		}
		dst[i].X = acc
		acc.Mul(&acc, &jac[i].Z)
	}
	acc.Inverse(&acc)
	for i := len(jac) - 1; i >= 0; i-- {
		if jac[i].Z.IsZero() {
			dst[i] = bls12381.G2Affine{}
			continue
		}
		var zInv, zInv2 bls12381.E2
		zInv.Mul(&dst[i].X, &acc)
		acc.Mul(&acc, &jac[i].Z)
		zInv2.Square(&zInv)
		dst[i].X.Mul(&jac[i].X, &zInv2)
		dst[i].Y.Mul(&jac[i].Y, &zInv2).Mul(&dst[i].Y, &zInv)
	}
}
