package refprover

import (
	"context"
	"math/big"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// naiveHSnarkjs is snarkjs's H computation written out by its definition, with
// O(N²) sums and no FFT: interpolate A, B, C on snarkjs's ω, evaluate at ρ·ωⁱ.
func naiveHSnarkjs(a, b []fr.Element, n int) []fr.Element {
	omega, rho := snarkjsRoots[fr.Element](fr.Modulus(), uint64(n))
	var omegaInv, nInv fr.Element
	omegaInv.Inverse(&omega)
	nInv.SetUint64(uint64(n)).Inverse(&nInv)
	pad := func(v []fr.Element) []fr.Element {
		return append(append([]fr.Element{}, v...), make([]fr.Element, n-len(v))...)
	}
	c := make([]fr.Element, len(a))
	for i := range a {
		c[i].Mul(&a[i], &b[i])
	}
	oddValues := func(evals []fr.Element) []fr.Element {
		coeffs := make([]fr.Element, n)
		for j := range coeffs {
			for i := range evals {
				var w, t fr.Element
				w.Exp(omegaInv, big.NewInt(int64(i*j)))
				t.Mul(&evals[i], &w)
				coeffs[j].Add(&coeffs[j], &t)
			}
			coeffs[j].Mul(&coeffs[j], &nInv)
		}
		out := make([]fr.Element, n)
		for i := range out {
			var x, xj fr.Element
			x.Exp(omega, big.NewInt(int64(i))).Mul(&x, &rho)
			xj.SetOne()
			for j := range coeffs {
				var t fr.Element
				t.Mul(&coeffs[j], &xj)
				out[i].Add(&out[i], &t)
				xj.Mul(&xj, &x)
			}
		}
		return out
	}
	av, bv, cv := oddValues(pad(a)), oddValues(pad(b)), oddValues(pad(c))
	h := make([]fr.Element, n)
	for i := range h {
		h[i].Mul(&av[i], &bv[i]).Sub(&h[i], &cv[i])
	}
	return h
}

func TestComputeHSnarkjs(t *testing.T) {
	for _, tc := range []struct{ n, rows, threads int }{{2, 2, 1}, {8, 5, 1}, {16, 11, 3}, {64, 64, 4}} {
		a := make([]fr.Element, tc.rows)
		b := make([]fr.Element, tc.rows)
		for i := range a {
			a[i].SetRandom()
			b[i].SetRandom()
		}
		got, err := ComputeHSnarkjs(context.Background(), bls, a, b, uint64(tc.n), tc.threads)
		if err != nil {
			t.Fatal(err)
		}
		want := naiveHSnarkjs(a, b, tc.n)
		for i := range want {
			if !got[i].Equal(&want[i]) {
				t.Fatalf("N=%d: H[%d] = %s, the definition gives %s", tc.n, i, got[i].String(), want[i].String())
			}
		}
	}
}

// TestSnarkjsRoots checks the roots' orders: ω of order N exactly, ρ² = ω.
func TestSnarkjsRoots(t *testing.T) {
	for _, n := range []uint64{2, 1024, 1 << 20} {
		omega, rho := snarkjsRoots[fr.Element](fr.Modulus(), n)
		var x fr.Element
		if x.Exp(omega, new(big.Int).SetUint64(n)); !x.IsOne() {
			t.Fatalf("N=%d: ω^N != 1", n)
		}
		if x.Exp(omega, new(big.Int).SetUint64(n/2)); x.IsOne() {
			t.Fatalf("N=%d: ω^(N/2) = 1, ω is not primitive", n)
		}
		if x.Square(&rho); !x.Equal(&omega) {
			t.Fatalf("N=%d: ρ² != ω", n)
		}
	}
}

func TestComputeHSnarkjsBadInput(t *testing.T) {
	ctx := context.Background()
	two := make([]fr.Element, 2)
	for _, tc := range []struct {
		name string
		a, b []fr.Element
		n    uint64
	}{
		{"lengths differ", two, two[:1], 4},
		{"empty", nil, nil, 4},
		{"too many rows", make([]fr.Element, 5), make([]fr.Element, 5), 4},
		{"domain not a power of two", two, two, 6},
	} {
		if _, err := ComputeHSnarkjs(ctx, bls, tc.a, tc.b, tc.n, 1); err == nil {
			t.Errorf("%s: accepted", tc.name)
		}
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ComputeHSnarkjs(cancelled, bls, two, two, 4, 1); err == nil {
		t.Error("a cancelled context: accepted")
	}
}
