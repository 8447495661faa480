//go:build cuda

package gpu

import (
	"errors"
	"fmt"
	"math/big"
	"math/rand/v2"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// frTop is the top 64-bit limb of r; a value whose top limb is below it is
// a canonical element (and a valid Montgomery representation).
const frTop = 0x73eda753299d7d48

// msmScalars returns n pseudo-random field elements drawn over the whole
// range below r (so the top window is exercised).
func msmScalars(rng *rand.Rand, n int) []fr.Element { return scalarsBelow[fr.Element](rng, n, frTop) }

// scalarsBelow returns n elements of four 64-bit limbs whose top limb is
// below top, a modulus's top limb: canonical, and valid Montgomery forms,
// over nearly the whole range (BLS12-381's and BN254's fr alike).
func scalarsBelow[E ~[4]uint64](rng *rand.Rand, n int, top uint64) []E {
	v := make([]E, n)
	for i := range v {
		v[i] = E{rng.Uint64(), rng.Uint64(), rng.Uint64(), rng.Uint64N(top)}
	}
	return v
}

func randBig(rng *rand.Rand) *big.Int {
	return msmScalars(rng, 1)[0].BigInt(new(big.Int))
}

// parallel runs f(lo, hi) over [0, n) cut into one piece per core.
func parallel(n int, f func(w, lo, hi int)) {
	workers := runtime.GOMAXPROCS(0)
	chunk := (n + workers - 1) / workers
	var wg sync.WaitGroup
	for w := 0; w*chunk < n; w++ {
		lo, hi := w*chunk, min((w+1)*chunk, n)
		wg.Go(func() {
			f(w, lo, hi)
		})
	}
	wg.Wait()
}

// Point pools: random points made cheaply (per core a random start and a
// random step, P_i = start + i*step, batch-converted to affine), grown on
// demand and shared by tests and benchmarks, which use prefixes.
var (
	poolMu sync.Mutex
	poolG1 []bls12381.G1Affine
	poolG2 []bls12381.G2Affine
)

func pointsG1(n int) []bls12381.G1Affine {
	poolMu.Lock()
	defer poolMu.Unlock()
	if len(poolG1) < n {
		have := len(poolG1)
		more := make([]bls12381.G1Affine, n-have)
		parallel(len(more), func(w, lo, hi int) {
			rng := rand.New(rand.NewPCG(uint64(have), uint64(w)))
			var start, step bls12381.G1Jac
			start.ScalarMultiplicationBase(randBig(rng))
			step.ScalarMultiplicationBase(randBig(rng))
			var stepAff bls12381.G1Affine
			stepAff.FromJacobian(&step)
			jac := make([]bls12381.G1Jac, hi-lo)
			for i := range jac {
				jac[i] = start
				start.AddMixed(&stepAff)
			}
			copy(more[lo:hi], bls12381.BatchJacobianToAffineG1(jac))
		})
		poolG1 = append(poolG1, more...)
	}
	return poolG1[:n]
}

func pointsG2(n int) []bls12381.G2Affine {
	poolMu.Lock()
	defer poolMu.Unlock()
	if len(poolG2) < n {
		have := len(poolG2)
		more := make([]bls12381.G2Affine, n-have)
		parallel(len(more), func(w, lo, hi int) {
			rng := rand.New(rand.NewPCG(uint64(have)+7, uint64(w)))
			_, g2, _, _ := bls12381.Generators()
			var start, step bls12381.G2Jac
			start.ScalarMultiplication(&g2, randBig(rng))
			step.ScalarMultiplication(&g2, randBig(rng))
			var stepAff bls12381.G2Affine
			stepAff.FromJacobian(&step)
			for i := lo; i < hi; i++ {
				more[i].FromJacobian(&start)
				start.AddMixed(&stepAff)
			}
		})
		poolG2 = append(poolG2, more...)
	}
	return poolG2[:n]
}

func refG1(tb testing.TB, pts []bls12381.G1Affine, sc []fr.Element) bls12381.G1Jac {
	tb.Helper()
	var r bls12381.G1Jac
	if len(pts) == 0 {
		r.X.SetOne()
		r.Y.SetOne()
		return r
	}
	if _, err := r.MultiExp(pts, sc, ecc.MultiExpConfig{}); err != nil {
		tb.Fatal(err)
	}
	return r
}

func refG2(tb testing.TB, pts []bls12381.G2Affine, sc []fr.Element) bls12381.G2Jac {
	tb.Helper()
	var r bls12381.G2Jac
	if len(pts) == 0 {
		r.X.SetOne()
		r.Y.SetOne()
		return r
	}
	if _, err := r.MultiExp(pts, sc, ecc.MultiExpConfig{}); err != nil {
		tb.Fatal(err)
	}
	return r
}

func uploadG1(tb testing.TB, pts []bls12381.G1Affine) *G1Bases {
	tb.Helper()
	b, err := UploadG1(0, pts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := b.Free(); err != nil {
			tb.Error(err)
		}
	})
	return b
}

func uploadG2(tb testing.TB, pts []bls12381.G2Affine) *G2Bases {
	tb.Helper()
	b, err := UploadG2(0, pts)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		if err := b.Free(); err != nil {
			tb.Error(err)
		}
	})
	return b
}

func frOf(v int64) fr.Element {
	var e fr.Element
	e.SetInt64(v)
	return e
}

// msmCase is one input set; pts are indices into a pool, so cases can
// repeat points and mix in infinity (index -1).
type msmCase struct {
	name    string
	idx     []int
	scalars []fr.Element
}

// seq returns 0, 1, ..., n-1: the indices of the first n points of a pool.
func seq(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// repeat returns n copies of v.
func repeat[T any](n int, v T) []T {
	s := make([]T, n)
	for i := range s {
		s[i] = v
	}
	return s
}

// deviceScalars copies sc into a new buffer on device 0, on stream s (nil:
// the default stream); the buffer is freed when the test ends.
func deviceScalars(tb testing.TB, sc []fr.Element, s *Stream) *Buffer {
	tb.Helper()
	buf, err := Alloc(0, max(1, len(sc))*FrBytes)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { buf.Free() })
	if err := buf.UploadFr(sc, 0, s); err != nil {
		tb.Fatal(err)
	}
	return buf
}

// newStream returns a stream of device 0, closed when the test ends.
func newStream(tb testing.TB) *Stream {
	tb.Helper()
	s, err := NewStream(0)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// edgeCases builds inputs that hit the special paths: zero digits, the
// largest scalar, infinity bases, repeated and opposite points (P + P and
// P + (-P) inside one bucket), one bucket taking every point.
func edgeCases(rng *rand.Rand) []msmCase {
	same, fill := repeat[int], repeat[fr.Element]
	rMinus1 := frOf(-1)
	var cases []msmCase
	cases = append(cases,
		msmCase{"n=1", seq(1), msmScalars(rng, 1)},
		msmCase{"n=1 scalar 1", seq(1), fill(1, frOf(1))},
		msmCase{"n=1 scalar r-1", seq(1), fill(1, rMinus1)},
		msmCase{"n=3", seq(3), msmScalars(rng, 3)},
		msmCase{"all zero scalars", seq(1000), make([]fr.Element, 1000)},
		msmCase{"all scalars 1", seq(1000), fill(1000, frOf(1))},
		msmCase{"all scalars r-1", seq(1000), fill(1000, rMinus1)},
		msmCase{"one point repeated, random scalars", same(1000, 5), msmScalars(rng, 1000)},
		msmCase{"one point repeated, equal scalars", same(1001, 5), fill(1001, frOf(12345))},
		msmCase{"all infinity", same(300, -1), msmScalars(rng, 300)},
		msmCase{"2^16+3, all scalars equal", seq(1<<16 + 3), fill(1<<16+3, msmScalars(rng, 1)[0])},
	)
	// Mixed: infinity every 7th, repeats, small and extreme scalars.
	n := 4099
	idx := seq(n)
	sc := msmScalars(rng, n)
	for i := range idx {
		switch {
		case i%7 == 0:
			idx[i] = -1
		case i%11 == 0:
			idx[i] = 3
		}
		switch i % 13 {
		case 0:
			sc[i] = fr.Element{}
		case 1:
			sc[i] = frOf(1)
		case 2:
			sc[i] = rMinus1
		case 3:
			sc[i] = frOf(int64(i))
		case 4:
			sc[i].Exp(frOf(2), big.NewInt(int64(i%255)))
		}
	}
	cases = append(cases, msmCase{"mixed edge values", idx, sc})
	// P and -P with equal scalars cancel inside one bucket.
	cases = append(cases, msmCase{"P and -P", []int{9, -2, 9, -2}, fill(4, frOf(77))})
	return cases
}

// TestMSMG1EdgeCases checks the GPU G1 MSM against gnark-crypto's MultiExp on
// the edge cases. Deliberately parallel to TestMSMG2EdgeCases: see why there.
// Deliberately parallel to TestMSMPrecomputeG1EdgeCases too: see why there.
func TestMSMG1EdgeCases(t *testing.T) {
	needDevice(t)
	rng := rand.New(rand.NewPCG(1, 2))
	pool := pointsG1(1 << 17)
	var neg9 bls12381.G1Affine
	neg9.Neg(&pool[9])
	for _, c := range edgeCases(rng) {
		t.Run(c.name, func(t *testing.T) {
			pts := pointsOf(pool, c.idx, neg9)
			b := uploadG1(t, pts)
			got, tm, err := b.MSM(c.scalars)
			if err != nil {
				t.Fatal(err)
			}
			want := refG1(t, pts, c.scalars)
			if !got.Equal(&want) {
				t.Fatalf("GPU MSM differs from gnark (c=%d)", tm.WindowBits)
			}
		})
	}
}

// TestMSMG2EdgeCases is TestMSMG1EdgeCases for G2.
// Deliberately parallel to TestMSMG1EdgeCases: the groups' points are gnark-crypto
// types with no common interface, and a failure should name its group.
func TestMSMG2EdgeCases(t *testing.T) {
	needDevice(t)
	rng := rand.New(rand.NewPCG(3, 4))
	pool := pointsG2(1 << 17)
	var neg9 bls12381.G2Affine
	neg9.Neg(&pool[9])
	for _, c := range edgeCases(rng) {
		t.Run(c.name, func(t *testing.T) {
			pts := pointsOf(pool, c.idx, neg9)
			b := uploadG2(t, pts)
			got, tm, err := b.MSM(c.scalars)
			if err != nil {
				t.Fatal(err)
			}
			want := refG2(t, pts, c.scalars)
			if !got.Equal(&want) {
				t.Fatalf("GPU MSM differs from gnark (c=%d)", tm.WindowBits)
			}
		})
	}
}

// shortened returns sizes, or its first n under -short.
func shortened(sizes []int, n int) []int {
	if testing.Short() {
		return sizes[:n]
	}
	return sizes
}

// TestMSMG1Sizes checks random MSMs of growing size (powers of two and not)
// against gnark-crypto. Deliberately parallel to TestMSMG2Sizes: see why there.
func TestMSMG1Sizes(t *testing.T) {
	needDevice(t)
	sizes := shortened([]int{1 << 10, 1<<12 + 5, 1 << 16, 1 << 20, 1 << 22}, 3)
	rng := rand.New(rand.NewPCG(5, 6))
	b := uploadG1(t, pointsG1(sizes[len(sizes)-1]))
	for _, n := range sizes {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			sc := msmScalars(rng, n)
			got, tm, err := b.MSM(sc)
			if err != nil {
				t.Fatal(err)
			}
			want := refG1(t, pointsG1(n), sc)
			if !got.Equal(&want) {
				t.Fatalf("GPU MSM differs from gnark (c=%d)", tm.WindowBits)
			}
			t.Logf("n=%d c=%d device %v (sort %v, accumulate %v, reduce %v), upload %v, wall %v",
				n, tm.WindowBits, tm.Device, tm.Sort, tm.Accumulate, tm.Reduce, tm.Upload, tm.Wall)
		})
	}
}

// TestMSMG2Sizes is TestMSMG1Sizes for G2.
// Deliberately parallel to TestMSMG1Sizes: the groups' points are gnark-crypto
// types with no common interface, and a failure should name its group.
func TestMSMG2Sizes(t *testing.T) {
	needDevice(t)
	sizes := shortened([]int{1 << 10, 1<<12 + 5, 1 << 16, 1 << 20}, 3)
	rng := rand.New(rand.NewPCG(7, 8))
	b := uploadG2(t, pointsG2(sizes[len(sizes)-1]))
	for _, n := range sizes {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			sc := msmScalars(rng, n)
			got, tm, err := b.MSM(sc)
			if err != nil {
				t.Fatal(err)
			}
			want := refG2(t, pointsG2(n), sc)
			if !got.Equal(&want) {
				t.Fatalf("GPU MSM differs from gnark (c=%d)", tm.WindowBits)
			}
			t.Logf("n=%d c=%d device %v (sort %v, accumulate %v, reduce %v), upload %v, wall %v",
				n, tm.WindowBits, tm.Device, tm.Sort, tm.Accumulate, tm.Reduce, tm.Upload, tm.Wall)
		})
	}
}

// TestMSMMaskedAndDevice checks the Groth16 path: bases expanded over an
// infinity mask, scalars on the device at an offset, a caller's stream, and
// a prefix of the resident points; then against the filtered CPU MSM.
func TestMSMMaskedAndDevice(t *testing.T) {
	needDevice(t)
	rng := rand.New(rand.NewPCG(9, 10))
	const nw = 5003
	skip := make([]bool, nw)
	for i := range skip {
		skip[i] = rng.IntN(4) == 0
	}
	skip[0], skip[nw-1] = true, true
	var keep int
	for _, s := range skip {
		if !s {
			keep++
		}
	}
	pool1, pool2 := pointsG1(keep), pointsG2(keep)
	b1, err := UploadG1Masked(0, pool1, skip)
	if err != nil {
		t.Fatal(err)
	}
	defer b1.Free()
	b2, err := UploadG2Masked(0, pool2, skip)
	if err != nil {
		t.Fatal(err)
	}
	defer b2.Free()
	if b1.Len() != nw || b2.Len() != nw {
		t.Fatalf("Len = %d, %d; want %d", b1.Len(), b2.Len(), nw)
	}

	const off = 17
	w := msmScalars(rng, off+nw)
	s := newStream(t)
	buf := deviceScalars(t, w, s)
	if err := s.Sync(); err != nil {
		t.Fatal(err)
	}

	// The CPU reference on the filtered lists, as gnark's prover does.
	for _, n := range []int{nw, nw - 1000} {
		var fw []fr.Element
		var f1 []bls12381.G1Affine
		var f2 []bls12381.G2Affine
		k := 0
		for i := 0; i < n; i++ {
			if !skip[i] {
				fw = append(fw, w[off+i])
				f1 = append(f1, pool1[k])
				f2 = append(f2, pool2[k])
				k++
			}
		}
		want1, want2 := refG1(t, f1, fw), refG2(t, f2, fw)

		got1, tm, err := b1.MSMDevice(buf, off, n, s)
		if err != nil {
			t.Fatal(err)
		}
		if !got1.Equal(&want1) {
			t.Errorf("n=%d: masked G1 MSM on device scalars differs from gnark", n)
		}
		if tm.Upload != 0 {
			t.Errorf("n=%d: device scalars reported an upload of %v", n, tm.Upload)
		}
		got2, _, err := b2.MSMDevice(buf, off, n, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !got2.Equal(&want2) {
			t.Errorf("n=%d: masked G2 MSM on device scalars differs from gnark", n)
		}
		// Host scalars give the same.
		h1, _, err := b1.MSM(w[off : off+n])
		if err != nil {
			t.Fatal(err)
		}
		if !h1.Equal(&want1) {
			t.Errorf("n=%d: masked G1 MSM on host scalars differs from gnark", n)
		}
	}
}

// TestMSMBadArguments checks that misuse is an ErrInvalid error, not a crash.
func TestMSMBadArguments(t *testing.T) {
	needDevice(t)
	pts := pointsG1(8)
	b := uploadG1(t, pts)
	buf, err := Alloc(0, 4*FrBytes)
	if err != nil {
		t.Fatal(err)
	}
	defer buf.Free()
	cases := map[string]func() error{
		"too many scalars": func() error { _, _, err := b.MSM(make([]fr.Element, 9)); return err },
		"device range":     func() error { _, _, err := b.MSMDevice(buf, 2, 3, nil); return err },
		"negative offset":  func() error { _, _, err := b.MSMDevice(buf, -1, 1, nil); return err },
		"nil buffer":       func() error { _, _, err := b.MSMDevice(nil, 0, 1, nil); return err },
		"mask count": func() error {
			_, err := UploadG1Masked(0, pts, []bool{false, true})
			return err
		},
		"bad device": func() error { _, err := UploadG1(-1, pts); return err },
		"no such device": func() error {
			_, err := UploadG1(1<<20, pts)
			return err
		},
	}
	for name, f := range cases {
		if err := f(); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	// The empty MSM is infinity; after Free an MSM is an error.
	got, _, err := b.MSM(nil)
	if err != nil || !got.Z.IsZero() {
		t.Errorf("empty MSM = %v, %v; want infinity", got, err)
	}
	b2, err := UploadG1(0, pts)
	if err != nil {
		t.Fatal(err)
	}
	if err := b2.Free(); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b2.MSM(make([]fr.Element, 2)); !errors.Is(err, ErrInvalid) {
		t.Errorf("MSM after Free: err = %v, want ErrInvalid", err)
	}
	if err := b2.Free(); err != nil {
		t.Errorf("second Free = %v", err)
	}
	if c := msmWindowBits(false, 1<<24); c < 12 || c > 21 {
		t.Errorf("window for 2^24 = %d", c)
	}
}

// addTiming adds t's phases to sum; the window, copies and chunks are t's.
func addTiming(sum, t MSMTiming) MSMTiming {
	sum.Device += t.Device
	sum.Wall += t.Wall
	sum.Upload += t.Upload
	sum.Sort += t.Sort
	sum.Accumulate += t.Accumulate
	sum.Reduce += t.Reduce
	sum.WindowBits, sum.Depth, sum.Chunks = t.WindowBits, t.Depth, t.Chunks
	return sum
}

// reportTiming reports the MSM benchmarks' metrics: sum's phases per op (b.N
// MSMs), its window, copies and chunks, and the device memory the run took
// (MiB) when it is known (bytes > 0).
func reportTiming(b *testing.B, sum MSMTiming, bytes uint64) {
	per := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / float64(b.N) }
	b.ReportMetric(per(sum.Wall), "wall-ms/op")
	b.ReportMetric(per(sum.Device), "dev-ms/op")
	b.ReportMetric(per(sum.Device-sum.Upload), "compute-ms/op")
	b.ReportMetric(per(sum.Upload), "upload-ms/op")
	b.ReportMetric(per(sum.Sort), "sort-ms/op")
	b.ReportMetric(per(sum.Accumulate), "accum-ms/op")
	b.ReportMetric(per(sum.Reduce), "reduce-ms/op")
	b.ReportMetric(float64(sum.WindowBits), "c")
	b.ReportMetric(float64(sum.Depth), "d")
	b.ReportMetric(float64(sum.Chunks), "chunks")
	if bytes > 0 {
		b.ReportMetric(float64(bytes)/(1<<20), "MiB")
	}
}

// benchResults holds GPU results so the gnark sub-benchmark of the same size
// checks them (the large sizes are verified only here).
var benchResults sync.Map

func benchMSM(b *testing.B, g2 bool, logs []int) {
	needDevice(b)
	rng := rand.New(rand.NewPCG(11, 12))
	for _, lg := range logs {
		n := 1 << lg
		var b1 *G1Bases
		var b2 *G2Bases
		sc := msmScalars(rng, n)
		key := fmt.Sprintf("%v/%d", g2, lg)
		b.Run(fmt.Sprintf("n=2^%d/gpu", lg), func(b *testing.B) {
			var err error
			if g2 {
				if b2 == nil {
					if b2, err = UploadG2(0, pointsG2(n)); err != nil {
						b.Fatal(err)
					}
				}
			} else if b1 == nil {
				if b1, err = UploadG1(0, pointsG1(n)); err != nil {
					b.Fatal(err)
				}
			}
			var sum MSMTiming
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				var tm MSMTiming
				if g2 {
					var r bls12381.G2Jac
					r, tm, err = b2.MSM(sc)
					benchResults.Store(key, r)
				} else {
					var r bls12381.G1Jac
					r, tm, err = b1.MSM(sc)
					benchResults.Store(key, r)
				}
				if err != nil {
					b.Fatal(err)
				}
				sum = addTiming(sum, tm)
			}
			reportTiming(b, sum, 0)
		})
		if b1 != nil {
			b1.Free()
		}
		if b2 != nil {
			b2.Free()
		}
		b.Run(fmt.Sprintf("n=2^%d/gnark", lg), func(b *testing.B) {
			var r1 bls12381.G1Jac
			var r2 bls12381.G2Jac
			for i := 0; i < b.N; i++ {
				if g2 {
					r2 = refG2(b, pointsG2(n), sc)
				} else {
					r1 = refG1(b, pointsG1(n), sc)
				}
			}
			got, ok := benchResults.Load(key)
			if !ok {
				return
			}
			if g2 {
				if g := got.(bls12381.G2Jac); !g.Equal(&r2) {
					b.Fatalf("GPU G2 MSM of 2^%d differs from gnark", lg)
				}
			} else if g := got.(bls12381.G1Jac); !g.Equal(&r1) {
				b.Fatalf("GPU G1 MSM of 2^%d differs from gnark", lg)
			}
		})
	}
}

// BenchmarkMSMG1 times the G1 MSM with resident bases and host scalars
// uploaded per call (device time from CUDA events as dev-ms/op), beside
// gnark-crypto's MultiExp on all cores, and checks the two agree.
func BenchmarkMSMG1(b *testing.B) { benchMSM(b, false, []int{16, 18, 20, 22, 24}) }

// BenchmarkMSMG2 is BenchmarkMSMG1 for G2.
func BenchmarkMSMG2(b *testing.B) { benchMSM(b, true, []int{16, 18, 20, 22}) }

// benchLogs is the list of small integers (log2 sizes, piece counts) in the
// environment variable env (space-separated, e.g. "16 18 26"), or def when
// it is unset.
func benchLogs(b *testing.B, env string, def []int) []int {
	v := os.Getenv(env)
	if v == "" {
		return def
	}
	var logs []int
	for _, f := range strings.Fields(v) {
		lg, err := strconv.Atoi(f)
		if err != nil || lg < 0 || lg > 30 {
			b.Fatalf("%s=%q: %q is not an integer from 0 to 30", env, v, f)
		}
		logs = append(logs, lg)
	}
	return logs
}
