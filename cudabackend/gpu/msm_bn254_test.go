//go:build cuda

package gpu

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bn254"
	bn254fr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// bn254FrTop is the top 64-bit limb of BN254's r: a value whose top limb is
// below it is canonical, and a valid Montgomery representation.
const bn254FrTop = 0x30644e72e131a029

// bn254Scalars returns n pseudo-random elements over the whole range below r.
func bn254Scalars(rng *rand.Rand, n int) []bn254fr.Element {
	return scalarsBelow[bn254fr.Element](rng, n, bn254FrTop)
}

// bn254Group is what the BN254 tests need of a group: the upload, points
// (the generator times scalars), gnark-crypto's MSM as the reference, and
// the group's equality and negation.
type bn254Group[A, J any] struct {
	name   string
	upload func(dev int, points []A) (*Bases[A, J, bn254fr.Element], error)
	points func(scalars []bn254fr.Element) []A
	ref    func(points []A, scalars []bn254fr.Element) (J, error)
	equal  func(a, b *J) bool
	neg    func(p A) A
}

// bn254G1 and bn254G2: deliberately parallel, each wiring its group's
// gnark-crypto functions, which share no interface.
var (
	bn254G1 = bn254Group[bn254.G1Affine, bn254.G1Jac]{
		name:   "BN254 G1",
		upload: UploadBN254G1,
		points: func(s []bn254fr.Element) []bn254.G1Affine {
			_, _, g, _ := bn254.Generators()
			return bn254.BatchScalarMultiplicationG1(&g, s)
		},
		ref: func(p []bn254.G1Affine, s []bn254fr.Element) (bn254.G1Jac, error) {
			var r bn254.G1Jac
			_, err := r.MultiExp(p, s, ecc.MultiExpConfig{})
			return r, err
		},
		equal: func(a, b *bn254.G1Jac) bool { return a.Equal(b) },
		neg:   func(p bn254.G1Affine) bn254.G1Affine { p.Neg(&p); return p },
	}
	bn254G2 = bn254Group[bn254.G2Affine, bn254.G2Jac]{
		name:   "BN254 G2",
		upload: UploadBN254G2,
		points: func(s []bn254fr.Element) []bn254.G2Affine {
			_, _, _, g := bn254.Generators()
			return bn254.BatchScalarMultiplicationG2(&g, s)
		},
		ref: func(p []bn254.G2Affine, s []bn254fr.Element) (bn254.G2Jac, error) {
			var r bn254.G2Jac
			_, err := r.MultiExp(p, s, ecc.MultiExpConfig{})
			return r, err
		},
		equal: func(a, b *bn254.G2Jac) bool { return a.Equal(b) },
		neg:   func(p bn254.G2Affine) bn254.G2Affine { p.Neg(&p); return p },
	}
)

// checkBN254 uploads points, runs the MSM of scalars (at most len(points):
// the first resident points) on the device and compares it with
// gnark-crypto's. With depth > 1 the bases get copies first, and the MSM must
// read them; with pieces > 0 host scalars go in that many pieces (chunks
// that resume one set of buckets).
func checkBN254[A, J any](t *testing.T, g bn254Group[A, J], points []A, scalars []bn254fr.Element, depth, pieces int) {
	t.Helper()
	b, err := g.upload(0, points)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Free()
	if depth > 1 {
		if err := b.Precompute(depth); err != nil {
			t.Fatal(err)
		}
	}
	if pieces > 0 {
		if err := b.SetPieces(pieces, 1<<10); err != nil {
			t.Fatal(err)
		}
	}
	got, tm, err := b.MSM(scalars)
	if err != nil {
		t.Fatal(err)
	}
	want, err := g.ref(points[:len(scalars)], scalars)
	if err != nil {
		t.Fatal(err)
	}
	if !g.equal(&got, &want) {
		t.Fatalf("%s: GPU MSM of %d differs from gnark-crypto's (c=%d, depth %d, %d chunks)", g.name, len(scalars), tm.WindowBits, tm.Depth, tm.Chunks)
	}
	if depth > 1 && tm.Depth < 2 {
		t.Fatalf("%s: copies asked for (up to %d), the MSM read depth %d", g.name, depth, tm.Depth)
	}
	if pieces > 1 && tm.Chunks < 2 {
		t.Fatalf("%s: %d pieces asked for, the MSM ran %d chunks", g.name, pieces, tm.Chunks)
	}
}

// testBN254Group runs a group's cases: sizes from 1 to 2^16 (2^20 unless
// -short), precomputed copies, host scalars in pieces, fewer scalars than
// points, and the edge cases: zero, one and r-1 scalars, infinity points, one
// point repeated, P beside -P.
func testBN254Group[A, J any](t *testing.T, g bn254Group[A, J], seed uint64) {
	needDevice(t)
	rng := rand.New(rand.NewPCG(seed, seed+1))
	largest := 1 << 20
	if testing.Short() {
		largest = 1 << 16
	}
	pool := g.points(bn254Scalars(rng, largest))
	for _, n := range []int{1, 3, 1<<10 + 3, 1 << 16, 1 << 20} {
		if n > largest {
			continue
		}
		checkBN254(t, g, pool[:n], bn254Scalars(rng, n), 1, 0)
	}
	checkBN254(t, g, pool[:1<<16], bn254Scalars(rng, 1<<16), 4, 0)
	checkBN254(t, g, pool[:1<<16], bn254Scalars(rng, 1<<16), 1, 4)
	// Fewer scalars than resident points: the first of them.
	checkBN254(t, g, pool[:1<<16], bn254Scalars(rng, 1<<15+7), 1, 0)

	const n = 1000
	var one, rm1 bn254fr.Element
	one.SetOne()
	rm1.SetOne()
	rm1.Neg(&rm1)
	fill := func(v bn254fr.Element) []bn254fr.Element {
		s := make([]bn254fr.Element, n)
		for i := range s {
			s[i] = v
		}
		return s
	}
	repeated := make([]A, n)
	for i := range repeated {
		repeated[i] = pool[5]
	}
	withInf := append([]A(nil), pool[:n]...)
	var inf A
	for i := 0; i < n; i += 7 {
		withInf[i] = inf
	}
	pairs := append([]A(nil), pool[:n]...)
	for i := 1; i < n; i += 2 {
		pairs[i] = g.neg(pairs[i-1])
	}
	cases := []struct {
		name    string
		points  []A
		scalars []bn254fr.Element
	}{
		{"zero scalars", pool[:n], fill(bn254fr.Element{})},
		{"scalars 1", pool[:n], fill(one)},
		{"scalars r-1", pool[:n], fill(rm1)},
		{"infinity points", withInf, bn254Scalars(rng, n)},
		{"one point repeated", repeated, bn254Scalars(rng, n)},
		{"P beside -P, equal scalars", pairs, fill(rm1)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkBN254(t, g, c.points, c.scalars, 1, 0) })
	}
}

// TestBN254MSMMatchesGnark checks the kernels instantiated for BN254 (msm.cu,
// ZK_MSM_BN254_G1 and G2) against gnark-crypto's bn254 MultiExp.
func TestBN254MSMMatchesGnark(t *testing.T) {
	t.Run("G1", func(t *testing.T) { testBN254Group(t, bn254G1, 11) })
	t.Run("G2", func(t *testing.T) { testBN254Group(t, bn254G2, 13) })
}

// BenchmarkBN254MSMG1 is the BN254 G1 MSM at 2^k for k in ZK_BENCH_MSM_LOGS
// (default 16 to 24), the shape of sppark's msmbench-bn254 (../shared/peers)
// for a same-call comparison: 2^16 random points tiled to n, full-width
// random scalars from pinned host memory, the bases without copies (d=1)
// and with the copies Precompute picks (best); every result checked against
// the others of its size.
func BenchmarkBN254MSMG1(b *testing.B) {
	needDevice(b)
	rng := rand.New(rand.NewPCG(71, 72))
	pool := bn254G1.points(bn254Scalars(rng, 1<<16))
	for _, lg := range benchLogs(b, "ZK_BENCH_MSM_LOGS", []int{16, 18, 20, 22, 24}) {
		n := 1 << lg
		points := make([]bn254.G1Affine, n)
		for i := range points {
			points[i] = pool[i&(1<<16-1)]
		}
		pinned, err := NewPinnedScalars(n)
		if err != nil {
			b.Fatal(err)
		}
		// A pinned BLS12-381 scalar vector holds as many BN254 scalars: both
		// are four 64-bit limbs.
		scalars := unsafe.Slice((*bn254fr.Element)(unsafe.Pointer(unsafe.SliceData(pinned.Elements()))), n)
		copy(scalars, bn254Scalars(rng, n))
		bases, err := UploadBN254G1(0, points)
		if err != nil {
			b.Fatal(err)
		}
		var first *bn254.G1Jac
		for _, depth := range []string{"d=1", "best"} {
			b.Run(fmt.Sprintf("n=2^%d/%s/pinned", lg, depth), func(b *testing.B) {
				maxd := 1
				if depth == "best" {
					maxd = MSMMaxDepth
				}
				if err := bases.Precompute(maxd); err != nil {
					b.Fatal(err)
				}
				var sum MSMTiming
				var res bn254.G1Jac
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					var tm MSMTiming
					if res, tm, err = bases.MSM(scalars); err != nil {
						b.Fatal(err)
					}
					sum = addTiming(sum, tm)
				}
				b.StopTimer()
				reportTiming(b, sum, 0)
				if first == nil {
					first = &res
				} else if !first.Equal(&res) {
					b.Fatalf("n=2^%d: the %s result differs from d=1's", lg, depth)
				}
			})
		}
		bases.Free()
		pinned.Free()
	}
}
