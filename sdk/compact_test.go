package sdk

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	bnfr "github.com/consensys/gnark-crypto/ecc/bn254/fr"

	"github.com/zkhost/zkhost/sdk/curve"
)

// witnessLike returns n BLS12-381 wires like a real witness: mostly 0 and 1,
// with a share of other values (full-field ones, and 2, which is neither).
func witnessLike(t testing.TB, n int, otherShare float64, seed uint64) []fr.Element {
	return witnessLikeOf[fr.Element](t, n, otherShare, seed)
}

// witnessLikeOf is witnessLike over either curve's scalars S.
func witnessLikeOf[S any, PS curve.Scalar[S]](t testing.TB, n int, otherShare float64, seed uint64) []S {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, 1))
	w := make([]S, n)
	for i := range w {
		switch x := r.Float64(); {
		case x < otherShare/2:
			PS(&w[i]).SetUint64(2)
		case x < otherShare:
			if _, err := PS(&w[i]).SetRandom(); err != nil {
				t.Fatal(err)
			}
		case r.IntN(2) == 1:
			PS(&w[i]).SetOne()
		}
	}
	return w
}

// TestPackExpandW packs vectors of many lengths (tails of every kind, pieces
// of several packing goroutines) and expands them back word for word, on
// each curve (a 1 is its field's: a Bits wire).
func TestPackExpandW(t *testing.T) {
	t.Run("BLS12-381", testPackExpandW[fr.Element])
	t.Run("BN254", testPackExpandW[bnfr.Element])
}

func testPackExpandW[S ~[4]uint64, PS curve.Scalar[S]](t *testing.T) {
	for _, tc := range []struct {
		n     int
		share float64
	}{
		{1, 0}, {1, 1}, {63, 0.5}, {64, 0.01}, {65, 0.3}, {1000, 0}, {1000, 1},
		{3*compactPiece*64 + 17, 0.003}, {2*compactPiece*64 - 1, 0.5},
	} {
		for _, threads := range []int{1, 3} {
			t.Run(fmt.Sprintf("n%d/share%v/threads%d", tc.n, tc.share, threads), func(t *testing.T) {
				w := witnessLikeOf[S, PS](t, tc.n, tc.share, uint64(tc.n))
				nbOther := CountOther[S, PS](w, threads)
				words := CompactWords(uint64(tc.n))
				other, bits := make([]uint64, words), make([]uint64, words)
				values := make([]S, nbOther)
				got, err := PackW[S, PS](w, other, bits, values, threads)
				if err != nil {
					t.Fatal(err)
				}
				if got != nbOther {
					t.Fatalf("PackW wrote %d values, CountOther says %d", got, nbOther)
				}
				back := make([]S, tc.n)
				if err := ExpandW[S, PS](other, bits, values, back); err != nil {
					t.Fatal(err)
				}
				for i := range w {
					if back[i] != w[i] {
						t.Fatalf("wire %d: %s expanded, %s packed", i, PS(&back[i]).String(), PS(&w[i]).String())
					}
				}
				if want := uint64(tc.n) - countZeroOne[S, PS](w); nbOther != want {
					t.Fatalf("%d values neither 0 nor 1, the vector has %d", nbOther, want)
				}
			})
		}
	}
}

// countZeroOne counts the 0s and 1s of w by the field's own comparisons.
func countZeroOne[S any, PS curve.Scalar[S]](w []S) uint64 {
	var n uint64
	for i := range w {
		if PS(&w[i]).IsZero() || PS(&w[i]).IsOne() {
			n++
		}
	}
	return n
}

// TestCompactRefusals: what a device would trust is checked.
func TestCompactRefusals(t *testing.T) {
	w := witnessLike(t, 100, 0.2, 5)
	other, bits := make([]uint64, 2), make([]uint64, 2)
	values := make([]fr.Element, CountOther(w, 1))
	if _, err := PackW(w, other, bits, values, 1); err != nil {
		t.Fatal(err)
	}
	back := make([]fr.Element, 100)
	if err := ExpandW(other, bits, values[:len(values)-1], back); err == nil {
		t.Error("ExpandW took one value fewer than the Other bits say")
	}
	o2 := append([]uint64(nil), other...)
	o2[1] |= 1 << 40 // wire 104: beyond the last
	if err := ExpandW(o2, bits, append(values, fr.Element{}), back); err == nil {
		t.Error("ExpandW took a bit beyond the last wire")
	}
	if err := ExpandW(other[:1], bits, values, back); err == nil {
		t.Error("ExpandW took a short bitmap")
	}
	if _, err := PackW(w, other, bits, values[:0], 1); err == nil && len(values) > 0 {
		t.Error("PackW packed into too few values")
	}
}

// TestCompactPartitionHandle checks the compact layout through the handle
// checks and ReadCompactPartition, on a sealed memfd written here.
func TestCompactPartitionHandle(t *testing.T) {
	const n = 5000
	w := witnessLike(t, n, 0.01, 9)
	nbOther := CountOther(w, 1)
	oOff, bOff, vOff, size := CompactLayout(n, nbOther)
	buf := make([]byte, size)
	nw := CompactWords(n)
	if _, err := PackW(w, words(buf[oOff:oOff+nw*8]), words(buf[bOff:bOff+nw*8]), elements(buf[vOff:vOff+nbOther*ElementSize]), 1); err != nil {
		t.Fatal(err)
	}
	path, ino := testMemfd(t, RequiredSeals, buf)
	h := PartitionHandle{Path: path, Inode: ino, Size: int64(size), Curve: CurveBLS12381, NbWires: n, NbConstraints: 7,
		Format: FormatCompactW, NbOther: nbOther, OtherOffset: oOff, BitsOffset: bOff, ValuesOffset: vOff}
	other, bits, values := make([]uint64, nw), make([]uint64, nw), make([]fr.Element, nbOther)
	if err := ReadCompactPartition(h, other, bits, values, 2); err != nil {
		t.Fatal(err)
	}
	back := make([]fr.Element, n)
	if err := ExpandW(other, bits, values, back); err != nil {
		t.Fatal(err)
	}
	for i := range w {
		if back[i] != w[i] {
			t.Fatalf("wire %d differs", i)
		}
	}
	p, err := OpenPartition(h)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.W() != nil {
		t.Error("a compact partition's W() is not nil")
	}
	o, _, v := p.Compact()
	if len(o) != int(nw) || uint64(len(v)) != nbOther {
		t.Errorf("Compact() views %d words and %d values, want %d and %d", len(o), len(v), nw, nbOther)
	}
	if err := ReadPartition(h, back, nil, nil, 1); KindOf(err) != ErrInvalidArgument {
		t.Errorf("ReadPartition of a compact partition: %v, want invalid argument", err)
	}
	for _, bad := range []struct {
		name string
		edit func(*PartitionHandle)
	}{
		{"nb_other above nb_wires", func(h *PartitionHandle) { h.NbOther = n + 1 }},
		{"nb_other wrong", func(h *PartitionHandle) { h.NbOther++; h.ValuesOffset = vOff }},
		{"values_offset", func(h *PartitionHandle) { h.ValuesOffset += PartitionAlign }},
		{"format", func(h *PartitionHandle) { h.Format = 7 }},
	} {
		h2 := h
		bad.edit(&h2)
		if err := ReadCompactPartition(h2, other, bits, make([]fr.Element, min(h2.NbOther, n)), 1); KindOf(err) != ErrInvalidArgument {
			t.Errorf("%s: %v, want invalid argument", bad.name, err)
		}
	}
}

// BenchmarkPackBits packs a W shaped like a bit-heavy witness (0s and 1s at
// random, three in a thousand other values) of 2^20 wires.
//
//	go test -run '^$' -bench PackBits .
func BenchmarkPackBits(b *testing.B) {
	w := witnessLike(b, 1<<20, 0.003, 7)
	words := CompactWords(uint64(len(w)))
	other, bits := make([]uint64, words), make([]uint64, words)
	b.SetBytes(int64(len(w)) * ElementSize)
	for b.Loop() {
		if _, err := PackBits(w, other, bits, 1); err != nil {
			b.Fatal(err)
		}
	}
}

// TestPackIntsMatchesPackBits: integers packed give the bitmaps their field
// elements packed give, negative and extreme values included, and bitmaps of
// the wrong length are refused.
func TestPackIntsMatchesPackBits(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	ints := make([]int32, 1000) // not a whole number of words
	w := make([]fr.Element, len(ints))
	for i := range ints {
		switch r.IntN(5) {
		case 0:
			ints[i] = []int32{-1, 2, -(1 << 31), 1<<31 - 1}[r.IntN(4)]
		default:
			ints[i] = int32(r.IntN(2))
		}
		w[i].SetInt64(int64(ints[i]))
	}
	words := CompactWords(uint64(len(ints)))
	other, bits := make([]uint64, words), make([]uint64, words)
	n, err := PackInts(ints, other, bits)
	if err != nil {
		t.Fatal(err)
	}
	wantOther, wantBits := make([]uint64, words), make([]uint64, words)
	want, err := PackBits(w, wantOther, wantBits, 1)
	if err != nil {
		t.Fatal(err)
	}
	if n != want || fmt.Sprint(other, bits) != fmt.Sprint(wantOther, wantBits) {
		t.Fatalf("PackInts: %d other and its bitmaps differ from PackBits' (%d other)", n, want)
	}
	if _, err := PackInts(ints, other[1:], bits); err == nil {
		t.Fatal("a short bitmap was taken")
	}
}
