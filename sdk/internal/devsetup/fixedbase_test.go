package devsetup

import (
	"context"
	"math/big"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// edgeScalars are the scalars whose digits hit the corners of the signed recoding: zero,
// one, r − 1 (the largest), powers of two at window edges, and digits equal to 2^(c-1)
// and 2^c − 1 for every width (all-ones bit patterns), plus random ones.
func edgeScalars(t *testing.T, nbRandom int) []fr.Element {
	t.Helper()
	var s []fr.Element
	add := func(b *big.Int) {
		var e fr.Element
		e.SetBigInt(b)
		s = append(s, e)
	}
	add(big.NewInt(0))
	add(big.NewInt(1))
	rMinus1 := new(big.Int).Sub(fr.Modulus(), big.NewInt(1))
	add(rMinus1)
	for _, bit := range []uint{1, 2, 7, 8, 15, 16, 31, 32, 63, 64, 127, 128, 239, 240, 253, 254} {
		add(new(big.Int).Lsh(big.NewInt(1), bit))
		add(new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), bit), big.NewInt(1)))
	}
	// 2^254 + 2^253 + ... (all ones below r's top bit) and r − 2^k.
	add(new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 254), big.NewInt(1)))
	for _, k := range []uint{0, 15, 16, 100} {
		add(new(big.Int).Sub(fr.Modulus(), new(big.Int).Lsh(big.NewInt(1), k)))
	}
	// 14·2^252 mod r: with 7-bit digits, the sum of the lower digits equals the top
	// window's addend, so the affine batch meets P + P.
	add(new(big.Int).Mod(new(big.Int).Lsh(big.NewInt(14), 252), fr.Modulus()))
	for range nbRandom {
		var e fr.Element
		if _, err := e.SetRandom(); err != nil {
			t.Fatal(err)
		}
		s = append(s, e)
	}
	return s
}

// The widths a test covers: the smallest, odd ones, the one large inputs get, and
// whatever chooseWindow picks for a small input.
var testWindows = []window{
	{c: 2, nbWindows: (scalarBits + 2) / 2},
	{c: 3, nbWindows: (scalarBits + 3) / 3},
	{c: 7, nbWindows: (scalarBits + 7) / 7},
	{c: 16, nbWindows: (scalarBits + 16) / 16},
	chooseWindow(100),
}

func TestDigitsRecompose(t *testing.T) {
	for _, w := range testWindows {
		d := make([]int32, w.nbWindows)
		for _, s := range edgeScalars(t, 50) {
			w.digits(&s, d)
			sum := new(big.Int)
			for i := w.nbWindows - 1; i >= 0; i-- {
				if d[i] < -(1<<(w.c-1)) || d[i] > 1<<(w.c-1) {
					t.Fatalf("c=%d: digit %d of %s is %d, outside ±2^%d", w.c, i, s.String(), d[i], w.c-1)
				}
				sum.Lsh(sum, uint(w.c)).Add(sum, big.NewInt(int64(d[i])))
			}
			var want big.Int
			s.BigInt(&want)
			if sum.Cmp(&want) != 0 {
				t.Fatalf("c=%d: digits of %s recompose to %s", w.c, want.String(), sum.String())
			}
		}
	}
}

func TestFixedBaseMatchesScalarMultiplication(t *testing.T) {
	ctx := context.Background()
	_, _, g1, g2 := bls12381.Generators()
	// A base other than the generator, so a table built from the wrong point fails.
	var b1 bls12381.G1Affine
	b1.ScalarMultiplication(&g1, big.NewInt(12345))
	var b2 bls12381.G2Affine
	b2.ScalarMultiplication(&g2, big.NewInt(67890))

	scalars := edgeScalars(t, mulChunk+5) // more than one chunk, and a ragged last one
	// gnark-crypto's batch multiplication is the reference (it is what groth16.Setup
	// uses); it is spot-checked against ScalarMultiplication below.
	want1 := bls12381.BatchScalarMultiplicationG1(&b1, scalars)
	want2 := bls12381.BatchScalarMultiplicationG2(&b2, scalars)
	for _, w := range testWindows {
		// Deliberately parallel to the G2 lines below: gnark-crypto's G1 and
		// G2 types share no interface (as g1Table and g2Table, which see).
		t1, err := newG1Table(ctx, w, &b1)
		if err != nil {
			t.Fatal(err)
		}
		got1 := make([]bls12381.G1Affine, len(scalars))
		if err := t1.mul(ctx, got1, scalars); err != nil {
			t.Fatal(err)
		}
		// Deliberately parallel to the G1 lines above: see why there.
		t2, err := newG2Table(ctx, w, &b2)
		if err != nil {
			t.Fatal(err)
		}
		got2 := make([]bls12381.G2Affine, len(scalars))
		if err := t2.mul(ctx, got2, scalars); err != nil {
			t.Fatal(err)
		}
		for i := range scalars {
			if got1[i] != want1[i] {
				t.Fatalf("c=%d: G1 scalar %d (%s): got %s, want %s", w.c, i, scalars[i].String(), got1[i].String(), want1[i].String())
			}
			if got2[i] != want2[i] {
				t.Fatalf("c=%d: G2 scalar %d (%s): got %s, want %s", w.c, i, scalars[i].String(), got2[i].String(), want2[i].String())
			}
		}
		for i := range 5 {
			var s big.Int
			scalars[i].BigInt(&s)
			var p bls12381.G1Affine
			p.ScalarMultiplication(&b1, &s)
			if got1[i] != p {
				t.Fatalf("c=%d: G1 scalar %d differs from ScalarMultiplication", w.c, i)
			}
		}
		if !got1[0].IsInfinity() || !got2[0].IsInfinity() {
			t.Errorf("c=%d: 0·G is not the point at infinity", w.c)
		}
	}
}

func TestFixedBaseStopsOnCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, g1, _ := bls12381.Generators()
	if _, err := newG1Table(ctx, chooseWindow(10), &g1); err != context.Canceled {
		t.Fatalf("newG1Table with a cancelled context: %v, want context.Canceled", err)
	}
}
