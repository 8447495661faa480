//go:build cuda

package gpu

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// splitCase is one input of the split MSM: scalars W over the whole
// classified vector, points idx (pool indices as in msmCase: -1 infinity,
// -2 the negation of pool[9]) for W[lo : lo+len(idx)].
type splitCase struct {
	name    string
	scalars []fr.Element
	lo      int
	idx     []int
}

// binaryScalars returns n scalars that are 0 or 1 except a share other of
// random ones, at random places.
func binaryScalars(rng *rand.Rand, n int, other float64) []fr.Element {
	v := make([]fr.Element, n)
	for i := range v {
		switch {
		case rng.Float64() < other:
			v[i] = msmScalars(rng, 1)[0]
		case rng.IntN(2) == 1:
			v[i].SetOne()
		}
	}
	return v
}

// splitCases covers the split's edge cases (every scalar 0, every scalar 1,
// none binary, a single non-binary scalar among bits, one scalar of each
// class, infinity bases, repeated points, P and -P both with scalar 1,
// ranges that skip a prefix or both ends) and random mixed vectors 90%
// binary at the given sizes.
func splitCases(rng *rand.Rand, sizes []int) []splitCase {
	fill := repeat[fr.Element]
	one := frOf(1)
	single := binaryScalars(rng, 5000, 0)
	single[2501] = msmScalars(rng, 1)[0]
	cases := []splitCase{
		{"all zero", make([]fr.Element, 1000), 0, seq(1000)},
		{"all one", fill(1000, one), 0, seq(1000)},
		{"none binary", msmScalars(rng, 1000), 0, seq(1000)},
		{"single non-binary among bits", single, 0, seq(5000)},
		{"single non-binary, range from 3", single, 3, seq(4997)},
		{"n=1 zero", fill(1, fr.Element{}), 0, seq(1)},
		{"n=1 one", fill(1, one), 0, seq(1)},
		{"n=1 other", msmScalars(rng, 1), 0, seq(1)},
		{"n=1 of 3, the other two out of range", []fr.Element{one, frOf(2), one}, 1, seq(1)},
		{"one point repeated, all one", fill(1001, one), 0, make([]int, 1001)},
		{"bits and 2 and r-1", func() []fr.Element {
			v := binaryScalars(rng, 3000, 0)
			for i := 0; i < len(v); i += 5 {
				v[i] = frOf(2)
			}
			for i := 1; i < len(v); i += 7 {
				v[i] = frOf(-1)
			}
			return v
		}(), 0, seq(3000)},
	}
	// Infinity every 7th, pool[3] every 11th, P and -P with scalar 1.
	{
		n := 4099
		idx := seq(n)
		for i := range idx {
			switch {
			case i%7 == 0:
				idx[i] = -1
			case i%11 == 0:
				idx[i] = 3
			}
		}
		idx[100], idx[101] = 9, -2
		sc := binaryScalars(rng, n, 0.1)
		sc[100], sc[101] = one, one
		cases = append(cases,
			splitCase{"infinity, repeats, P and -P", sc, 0, idx},
			splitCase{"infinity, repeats, both ends out of range", sc, 2, idx[:n-5]},
		)
	}
	for _, n := range sizes {
		sc := binaryScalars(rng, n, 0.1)
		cases = append(cases,
			splitCase{fmt.Sprintf("90%% binary, n=%d", n), sc, 0, seq(n)},
			splitCase{fmt.Sprintf("90%% binary, n=%d, range from 3", n), sc, 3, seq(n - 3)},
		)
	}
	return cases
}

// classOf counts the scalars of each class on the CPU.
func classOf(sc []fr.Element) (zeros, ones, other int) {
	for i := range sc {
		switch {
		case sc[i].IsZero():
			zeros++
		case sc[i].IsOne():
			ones++
		default:
			other++
		}
	}
	return
}

// classify uploads sc and classifies it, checking the counts against the CPU's.
func classify(tb testing.TB, sc []fr.Element) *ScalarSplit {
	tb.Helper()
	buf := deviceScalars(tb, sc, nil)
	sp, err := ClassifyScalars(buf, 0, len(sc), nil)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := sp.Free(); err != nil {
			tb.Error(err)
		}
	})
	z, o, r := sp.Counts()
	wz, wo, wr := classOf(sc)
	if z != wz || o != wo || r != wr || sp.Len() != len(sc) {
		tb.Fatalf("classified %d scalars as %d zero, %d one, %d other; want %d as %d, %d, %d", sp.Len(), z, o, r, len(sc), wz, wo, wr)
	}
	return sp
}

func pointsOf[P any](pool []P, idx []int, neg9 P) []P {
	pts := make([]P, len(idx))
	for i, j := range idx {
		switch {
		case j == -1: // infinity: the zero value
		case j == -2:
			pts[i] = neg9
		default:
			pts[i] = pool[j]
		}
	}
	return pts
}

// TestMSMSplitG1 checks the split MSM (0s dropped, 1s summed, the rest
// through Pippenger) against gnark-crypto's MultiExp over the same range, on
// edge cases and random vectors 90% binary; where it differs, it says
// whether the dense GPU MSM of the same input agrees with gnark.
// Deliberately parallel to TestMSMSplitG2: see why there.
func TestMSMSplitG1(t *testing.T) {
	needDevice(t)
	sizes := shortened([]int{1 << 10, 1<<12 + 5, 1 << 16, 1 << 20}, 2)
	rng := rand.New(rand.NewPCG(21, 22))
	pool := pointsG1(1 << 20)
	var neg9 bls12381.G1Affine
	neg9.Neg(&pool[9])
	for _, c := range splitCases(rng, sizes) {
		t.Run(c.name, func(t *testing.T) {
			pts := pointsOf(pool, c.idx, neg9)
			b := uploadG1(t, pts)
			sp := classify(t, c.scalars)
			want := refG1(t, pts, c.scalars[c.lo:c.lo+len(pts)])
			got, tm, err := b.MSMSplit(sp, c.lo, len(pts), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(&want) {
				dense, _, err := b.MSM(c.scalars[c.lo : c.lo+len(pts)])
				z, o, r := sp.Counts()
				t.Fatalf("split MSM of W[%d:%d] (%d zero, %d one, %d other classified; %d through Pippenger, c=%d) differs from gnark; the dense GPU MSM agrees with gnark: %v (err %v)",
					c.lo, c.lo+len(pts), z, o, r, tm.Pippenger, tm.WindowBits, dense.Equal(&want), err)
			}
		})
	}
}

// TestMSMSplitG2 is TestMSMSplitG1 for G2.
// Deliberately parallel to TestMSMSplitG1: the groups' points are gnark-crypto
// types with no common interface, and a failure should name its group.
func TestMSMSplitG2(t *testing.T) {
	needDevice(t)
	sizes := shortened([]int{1 << 10, 1<<12 + 5, 1 << 16}, 2)
	rng := rand.New(rand.NewPCG(23, 24))
	pool := pointsG2(1 << 16)
	var neg9 bls12381.G2Affine
	neg9.Neg(&pool[9])
	for _, c := range splitCases(rng, sizes) {
		t.Run(c.name, func(t *testing.T) {
			pts := pointsOf(pool, c.idx, neg9)
			b := uploadG2(t, pts)
			sp := classify(t, c.scalars)
			want := refG2(t, pts, c.scalars[c.lo:c.lo+len(pts)])
			got, tm, err := b.MSMSplit(sp, c.lo, len(pts), nil)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(&want) {
				dense, _, err := b.MSM(c.scalars[c.lo : c.lo+len(pts)])
				z, o, r := sp.Counts()
				t.Fatalf("split MSM of W[%d:%d] (%d zero, %d one, %d other classified; %d through Pippenger, c=%d) differs from gnark; the dense GPU MSM agrees with gnark: %v (err %v)",
					c.lo, c.lo+len(pts), z, o, r, tm.Pippenger, tm.WindowBits, dense.Equal(&want), err)
			}
		})
	}
}

// TestMSMSplitShared runs the MSMs of one classification on several point
// sets and streams, G1 and G2 interleaved, as a Groth16 proof does (A, B
// and K over W), and checks that the split reports what went to Pippenger.
func TestMSMSplitShared(t *testing.T) {
	needDevice(t)
	rng := rand.New(rand.NewPCG(25, 26))
	const n, lo = 20000, 2
	sc := binaryScalars(rng, n, 0.05)
	sp := classify(t, sc)
	p1 := pointsG1(2 * n)
	a, bb := uploadG1(t, p1[:n]), uploadG1(t, p1[n:])
	k := uploadG1(t, p1[n+lo:])
	g2 := uploadG2(t, pointsG2(n))
	s := newStream(t)
	_, _, other := sp.Counts()
	for i, m := range []struct {
		name string
		run  func() (bool, MSMTiming, error)
	}{
		{"A", func() (bool, MSMTiming, error) {
			got, tm, err := a.MSMSplit(sp, 0, n, s)
			want := refG1(t, p1[:n], sc)
			return got.Equal(&want), tm, err
		}},
		{"G2 B", func() (bool, MSMTiming, error) {
			got, tm, err := g2.MSMSplit(sp, 0, n, nil)
			want := refG2(t, pointsG2(n), sc)
			return got.Equal(&want), tm, err
		}},
		{"B", func() (bool, MSMTiming, error) {
			got, tm, err := bb.MSMSplit(sp, 0, n, nil)
			want := refG1(t, p1[n:], sc)
			return got.Equal(&want), tm, err
		}},
		{"K from wire 2", func() (bool, MSMTiming, error) {
			got, tm, err := k.MSMSplit(sp, lo, n-lo, s)
			want := refG1(t, p1[n+lo:], sc[lo:])
			return got.Equal(&want), tm, err
		}},
	} {
		ok, tm, err := m.run()
		if err != nil {
			t.Fatalf("MSM %d (%s): %v", i, m.name, err)
		}
		if !ok {
			t.Errorf("MSM %d (%s) over the shared split differs from gnark", i, m.name)
		}
		if tm.Pippenger != other {
			t.Errorf("MSM %s: %d scalars went through Pippenger, want the %d classified as neither 0 nor 1", m.name, tm.Pippenger, other)
		}
	}
}

// TestMSMSplitBadArguments checks that misuse of a split is an ErrInvalid
// error, not a crash.
func TestMSMSplitBadArguments(t *testing.T) {
	needDevice(t)
	pts := pointsG1(8)
	b := uploadG1(t, pts)
	sc := []fr.Element{frOf(1), frOf(0), frOf(5), frOf(1)}
	sp := classify(t, sc)
	buf, err := Alloc(0, 4*FrBytes)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	freed := classify(t, sc)
	if err := freed.Free(); err != nil {
		t.Fatal(err)
	}
	cases := map[string]func() error{
		"nil split":        func() error { _, _, err := b.MSMSplit(nil, 0, 1, nil); return err },
		"freed split":      func() error { _, _, err := b.MSMSplit(freed, 0, 1, nil); return err },
		"past the split":   func() error { _, _, err := b.MSMSplit(sp, 1, 4, nil); return err },
		"negative lo":      func() error { _, _, err := b.MSMSplit(sp, -1, 2, nil); return err },
		"more than bases":  func() error { _, _, err := uploadG1(t, pts[:2]).MSMSplit(sp, 0, 3, nil); return err },
		"classify range":   func() error { _, err := ClassifyScalars(buf, 1, 4, nil); return err },
		"classify nil buf": func() error { _, err := ClassifyScalars(nil, 0, 1, nil); return err },
	}
	for name, f := range cases {
		if err := f(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	// The empty range is infinity.
	got, _, err := b.MSMSplit(sp, 2, 0, nil)
	if err != nil || !got.Z.IsZero() {
		t.Errorf("empty split MSM = %v, %v; want infinity", got, err)
	}
	if err := freed.Free(); err != nil {
		t.Errorf("second Free = %v", err)
	}
}

// BenchmarkMSMSplitG1 times the G1 MSM of device scalars 90% binary (as a
// bit-heavy witness) with the split (classification and split MSM,
// reported apart) and without it (the dense MSM of the same device
// scalars), and checks that both agree.
func BenchmarkMSMSplitG1(b *testing.B) {
	needDevice(b)
	rng := rand.New(rand.NewPCG(27, 28))
	for _, lg := range []int{20, 22} {
		n := 1 << lg
		sc := binaryScalars(rng, n, 0.1)
		bases, err := UploadG1(0, pointsG1(n))
		if err != nil {
			b.Fatal(err)
		}
		buf := deviceScalars(b, sc, nil)
		var dense, split bls12381.G1Jac
		var ranDense, ranSplit bool
		b.Run(fmt.Sprintf("n=2^%d/dense", lg), func(b *testing.B) {
			var dev time.Duration
			for i := 0; i < b.N; i++ {
				var tm MSMTiming
				if dense, tm, err = bases.MSMDevice(buf, 0, n, nil); err != nil {
					b.Fatal(err)
				}
				dev += tm.Device
			}
			b.ReportMetric(float64(dev.Microseconds())/1000/float64(b.N), "dev-ms/op")
			ranDense = true
		})
		b.Run(fmt.Sprintf("n=2^%d/split", lg), func(b *testing.B) {
			var dev, ones, classify time.Duration
			var pip int
			for i := 0; i < b.N; i++ {
				start := time.Now()
				sp, err := ClassifyScalars(buf, 0, n, nil)
				if err != nil {
					b.Fatal(err)
				}
				classify += time.Since(start)
				var tm MSMTiming
				split, tm, err = bases.MSMSplit(sp, 0, n, nil)
				if err != nil {
					b.Fatal(err)
				}
				if err := sp.Free(); err != nil {
					b.Fatal(err)
				}
				dev += tm.Device
				ones += tm.Ones
				pip = tm.Pippenger
			}
			per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
			b.ReportMetric(per(classify), "classify-wall-ms/op")
			b.ReportMetric(per(dev), "dev-ms/op")
			b.ReportMetric(per(ones), "ones-ms/op")
			b.ReportMetric(float64(pip), "pippenger-n")
			ranSplit = true
		})
		buf.Free()
		bases.Free()
		if ranDense && ranSplit && !dense.Equal(&split) {
			b.Fatalf("n=2^%d: the split MSM differs from the dense one", lg)
		}
	}
}
