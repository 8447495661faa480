//go:build cuda

package gpu

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bn254"
	bn254fr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// pinnedCopy returns sc in pinned host memory, freed when tb ends.
func pinnedCopy(tb testing.TB, sc []fr.Element) *PinnedScalars {
	tb.Helper()
	p, err := NewPinnedScalars(len(sc))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { p.Free() })
	copy(p.Elements(), sc)
	return p
}

// TestMSMStreamMatchesGnark checks the streamed MSM (points and scalars from
// pinned host memory, chunk by chunk into one set of buckets) against
// gnark-crypto, for G1 and G2: one chunk, several with a short last one,
// chunks of one point, windows capped or not, and fewer scalars than points.
func TestMSMStreamMatchesGnark(t *testing.T) {
	needDevice(t)
	rng := rand.New(rand.NewPCG(31, 32))
	cases := []struct {
		n, chunk, scalars, maxC int
	}{
		{n: 1000, chunk: 1000, scalars: 1000},
		{n: 1000, chunk: 1000, scalars: 1000, maxC: 8},
		{n: 1 << 12, chunk: 1 << 10, scalars: 1 << 12},
		{n: 5000, chunk: 768, scalars: 5000, maxC: 10},
		{n: 5000, chunk: 768, scalars: 4097, maxC: 13},
		{n: 37, chunk: 1, scalars: 37},
		{n: 1 << 16, chunk: 1 << 13, scalars: 1 << 16, maxC: 12},
	}
	for _, g2 := range []bool{false, true} {
		for _, tc := range cases {
			name := fmt.Sprintf("g2=%v/n=%d/chunk=%d/scalars=%d/c<=%d", g2, tc.n, tc.chunk, tc.scalars, tc.maxC)
			t.Run(name, func(t *testing.T) {
				sc := msmScalars(rng, tc.scalars)
				// Some 0s and 1s, as a witness has.
				for i := 0; i < len(sc); i += 7 {
					sc[i].SetZero()
				}
				for i := 3; i < len(sc); i += 11 {
					sc[i].SetOne()
				}
				ps := pinnedCopy(t, sc)
				// The group's points, the run's output and its check
				// against gnark-crypto.
				var s *streamedBases
				var err error
				var out unsafe.Pointer
				var matches func() bool
				if g2 {
					pts := pointsG2(tc.n)
					s, err = newStreamedG2(0, pts, tc.chunk)
					var got bls12381.G2Jac
					out = unsafe.Pointer(&got)
					matches = func() bool { want := refG2(t, pts[:tc.scalars], sc); return got.Equal(&want) }
				} else {
					pts := pointsG1(tc.n)
					s, err = newStreamedG1(0, pts, tc.chunk)
					var got bls12381.G1Jac
					out = unsafe.Pointer(&got)
					matches = func() bool { want := refG1(t, pts[:tc.scalars], sc); return got.Equal(&want) }
				}
				if err != nil {
					t.Fatal(err)
				}
				defer s.free()
				if _, err := s.run(ps, tc.maxC, out); err != nil {
					t.Fatal(err)
				}
				if !matches() {
					t.Fatal("the streamed MSM differs from gnark-crypto")
				}
			})
		}
	}
	// Bad arguments are refused before any device work.
	if _, err := newStreamedG1(0, pointsG1(4), 5); err == nil {
		t.Error("a chunk larger than the points: no error")
	}
	if _, err := newStreamedG1(0, nil, 1); err == nil {
		t.Error("no points: no error")
	}
}

// TestMSMStreamSplitMatchesGnark checks the streamed MSM with its scalars
// classified on the host (zk_msm_run_stream_split, a lean proof's MSMs over
// W with -lean-split) against gnark-crypto and against the dense streamed
// run, for G1 and G2, with scalars as a bit-heavy witness has them: chunks
// of zeros only (nothing copied), of ones only (no Pippenger), with no ones,
// every scalar 0 or 1 (no Pippenger at all), all zero, a short last chunk,
// chunks of one scalar; and the classification against the scalars.
func TestMSMStreamSplitMatchesGnark(t *testing.T) {
	needDevice(t)
	rng := rand.New(rand.NewPCG(33, 34))
	type fill func(i int, x *fr.Element)
	bits := func(every int) fill {
		return func(i int, x *fr.Element) {
			switch {
			case every > 0 && i%every == 0:
				*x = msmScalars(rng, 1)[0]
			case rng.IntN(2) == 0:
				x.SetZero()
			default:
				x.SetOne()
			}
		}
	}
	runs := func(i int, x *fr.Element) { // runs of zeros, ones and others, 300 each
		switch (i / 300) % 3 {
		case 0:
			x.SetZero()
		case 1:
			x.SetOne()
		default:
			*x = msmScalars(rng, 1)[0]
		}
	}
	cases := []struct {
		name            string
		n, chunk, maxC  int
		scalars         fill
		wantOnes, wantR bool // some ones, some others
	}{
		{"bits, every 50th other", 5000, 768, 10, bits(50), true, true},
		{"runs of zeros, ones, others", 2700, 300, 0, runs, true, true},
		{"runs, chunks across them", 2700, 256, 12, runs, true, true},
		{"only 0s and 1s", 4096, 1024, 0, bits(0), true, false},
		{"all zero", 1000, 128, 0, func(i int, x *fr.Element) { x.SetZero() }, false, false},
		{"all one", 1000, 333, 0, func(i int, x *fr.Element) { x.SetOne() }, true, false},
		{"no ones", 3000, 1000, 11, func(i int, x *fr.Element) {
			if i%3 == 0 {
				x.SetZero()
			} else {
				*x = msmScalars(rng, 1)[0]
			}
		}, false, true},
		{"chunks of one", 37, 1, 0, bits(5), true, true},
		{"one chunk, 2^16", 1 << 16, 1 << 16, 13, bits(300), true, true},
	}
	for _, g2 := range []bool{false, true} {
		for _, tc := range cases {
			t.Run(fmt.Sprintf("g2=%v/%s", g2, tc.name), func(t *testing.T) {
				sc := make([]fr.Element, tc.n)
				for i := range sc {
					tc.scalars(i, &sc[i])
				}
				ps := pinnedCopy(t, sc)
				var s *streamedBases
				var err error
				var got, dense unsafe.Pointer
				var matches func() (gnark, denseToo bool)
				if g2 {
					pts := pointsG2(tc.n)
					s, err = newStreamedG2(0, pts, tc.chunk)
					var r, d bls12381.G2Jac
					_, _, _, gen := bls12381.Generators()
					r.FromAffine(&gen) // not the sum: a run that writes nothing fails
					got, dense = unsafe.Pointer(&r), unsafe.Pointer(&d)
					matches = func() (bool, bool) { want := refG2(t, pts, sc); return r.Equal(&want), r.Equal(&d) }
				} else {
					pts := pointsG1(tc.n)
					s, err = newStreamedG1(0, pts, tc.chunk)
					var r, d bls12381.G1Jac
					r, _, _, _ = bls12381.Generators() // not the sum: a run that writes nothing fails
					got, dense = unsafe.Pointer(&r), unsafe.Pointer(&d)
					matches = func() (bool, bool) { want := refG1(t, pts, sc); return r.Equal(&want), r.Equal(&d) }
				}
				if err != nil {
					t.Fatal(err)
				}
				defer s.free()
				split, err := s.classify(ps)
				if err != nil {
					t.Fatal(err)
				}
				defer split.free()
				ones, rest := split.counts()
				var nOnes, nRest int
				for k := range ones {
					lo, hi := k*tc.chunk, min((k+1)*tc.chunk, tc.n)
					var o, r uint32
					for i := lo; i < hi; i++ {
						switch {
						case sc[i].IsOne():
							o++
						case !sc[i].IsZero():
							r++
						}
					}
					if ones[k] != o || rest[k] != r {
						t.Fatalf("chunk %d classified as %d ones and %d others, want %d and %d", k, ones[k], rest[k], o, r)
					}
					nOnes += int(o)
					nRest += int(r)
				}
				if (nOnes > 0) != tc.wantOnes || (nRest > 0) != tc.wantR {
					t.Fatalf("the case has %d ones and %d others: not what it is for", nOnes, nRest)
				}
				tm, err := s.runSplit(ps, split, tc.maxC, got)
				if err != nil {
					t.Fatal(err)
				}
				if tm.Pippenger != nRest {
					t.Errorf("%d scalars through Pippenger, want the %d others", tm.Pippenger, nRest)
				}
				if (tm.WindowBits == 0) != (nRest == 0) {
					t.Errorf("window of %d bits with %d scalars through Pippenger", tm.WindowBits, nRest)
				}
				if _, err := s.run(ps, tc.maxC, dense); err != nil {
					t.Fatal(err)
				}
				gnarkOK, denseOK := matches()
				if !gnarkOK {
					t.Fatal("the streamed split MSM differs from gnark-crypto")
				}
				if !denseOK {
					t.Fatal("the streamed split MSM differs from the dense streamed MSM")
				}
			})
		}
	}
}

// TestMSMStreamSplitBN254 checks the streamed split over BN254 G1 points and
// scalars (zk_msm_classify_chunk's BN254 branch: its 1 is BN254's R mod r)
// against gnark-crypto, bit-heavy and with chunks of 0s and of 1s.
func TestMSMStreamSplitBN254(t *testing.T) {
	needDevice(t)
	rng := rand.New(rand.NewPCG(35, 36))
	const n, chunk = 3000, 512
	sc := make([]bn254fr.Element, n)
	for i := range sc {
		switch {
		case i < 512: // a chunk of 0s
		case i < 1024:
			sc[i].SetOne()
		case i%40 == 0:
			sc[i] = bn254Scalars(rng, 1)[0]
		case rng.IntN(2) == 1:
			sc[i].SetOne()
		}
	}
	pts := bn254G1.points(bn254Scalars(rng, n))
	want, err := bn254G1.ref(pts, sc)
	if err != nil {
		t.Fatal(err)
	}
	s, err := newStreamedBN254G1(0, pts, chunk)
	if err != nil {
		t.Fatal(err)
	}
	defer s.free()
	ps, err := NewPinnedScalars(n)
	if err != nil {
		t.Fatal(err)
	}
	defer ps.Free()
	copy(unsafe.Slice((*bn254fr.Element)(ps.p), n), sc) // the same 32-byte layout as BLS12-381's
	split, err := s.classify(ps)
	if err != nil {
		t.Fatal(err)
	}
	defer split.free()
	if ones, rest := split.counts(); ones[0] != 0 || rest[0] != 0 || ones[1] != chunk || rest[1] != 0 {
		t.Fatalf("chunks 0 and 1 (0s, then 1s) classified as %d/%d and %d/%d ones/others", ones[0], rest[0], ones[1], rest[1])
	}
	var got bn254.G1Jac
	got, _, _, _ = bn254.Generators() // not the sum: a run that writes nothing fails
	if _, err := s.runSplit(ps, split, 0, unsafe.Pointer(&got)); err != nil {
		t.Fatal(err)
	}
	if !got.Equal(&want) {
		t.Fatal("the streamed split BN254 MSM differs from gnark-crypto")
	}
}

// groupName names the streamed benchmarks' group.
func groupName(g2 bool) string {
	if g2 {
		return "G2"
	}
	return "G1"
}

// newStreamedOf is newStreamedG2 (g2) or newStreamedG1 over the test
// points of the group, on device 0.
func newStreamedOf(g2 bool, n, chunk int) (*streamedBases, error) {
	if g2 {
		return newStreamedG2(0, pointsG2(n), chunk)
	}
	return newStreamedG1(0, pointsG1(n), chunk)
}

// BenchmarkMSMStream times a streamed MSM alone (the MSMs of a lean key,
// apart from a proof): 2^n points and scalars in pinned host memory, for
// each chunk 2^k of ZK_BENCH_STREAM_CHUNKS and window cap of
// ZK_BENCH_STREAM_CS (0: no cap), with the device memory it takes (work
// and chunk buffers) and its phases. The resident MSM of the same points
// (host scalars, no copies) runs first as the peer, and each result is
// checked against it.
func BenchmarkMSMStream(b *testing.B) {
	needDevice(b)
	rng := rand.New(rand.NewPCG(41, 42))
	for _, g2 := range []bool{false, true} {
		group := groupName(g2)
		for _, lg := range benchLogs(b, "ZK_BENCH_STREAM_LOGS", []int{22}) {
			n := 1 << lg
			sc := msmScalars(rng, n)
			ps := pinnedCopy(b, sc)
			var want1 bls12381.G1Jac
			var want2 bls12381.G2Jac
			b.Run(fmt.Sprintf("%s/n=2^%d/resident", group, lg), func(b *testing.B) {
				// The group's resident MSM, keeping its result for the
				// streamed runs to match.
				var msm func() (MSMTiming, error)
				if g2 {
					bases, err := UploadG2(0, pointsG2(n))
					if err != nil {
						b.Fatal(err)
					}
					defer bases.Free()
					msm = func() (tm MSMTiming, err error) { want2, tm, err = bases.MSM(ps.Elements()); return }
				} else {
					bases, err := UploadG1(0, pointsG1(n))
					if err != nil {
						b.Fatal(err)
					}
					defer bases.Free()
					msm = func() (tm MSMTiming, err error) { want1, tm, err = bases.MSM(ps.Elements()); return }
				}
				var sum MSMTiming
				for i := 0; i < b.N; i++ {
					tm, err := msm()
					if err != nil {
						b.Fatal(err)
					}
					sum = addTiming(sum, tm)
				}
				reportTiming(b, sum, 0)
			})
			for _, ck := range benchLogs(b, "ZK_BENCH_STREAM_CHUNKS", []int{16, 18, 20}) {
				if ck > lg {
					continue
				}
				for _, maxC := range benchLogs(b, "ZK_BENCH_STREAM_CS", []int{0, 15, 13}) {
					b.Run(fmt.Sprintf("%s/n=2^%d/chunk=2^%d/c<=%d", group, lg, ck, maxC), func(b *testing.B) {
						s, err := newStreamedOf(g2, n, 1<<ck)
						if err != nil {
							b.Fatal(err)
						}
						defer s.free()
						work, err := s.workBytes(n, maxC)
						if err != nil {
							b.Fatal(err)
						}
						var sum MSMTiming
						for i := 0; i < b.N; i++ {
							var r1 bls12381.G1Jac
							var r2 bls12381.G2Jac
							out := unsafe.Pointer(&r1)
							if g2 {
								out = unsafe.Pointer(&r2)
							}
							tm, err := s.run(ps, maxC, out)
							if err != nil {
								b.Fatal(err)
							}
							if g2 && !r2.Equal(&want2) || !g2 && !r1.Equal(&want1) {
								b.Fatalf("streamed %s MSM differs from the resident one", group)
							}
							sum = addTiming(sum, tm)
						}
						reportTiming(b, sum, work+s.bufferBytes())
					})
				}
			}
		}
	}
}

// BenchmarkMSMStreamBits times the streamed MSM over a bit-heavy witness's
// scalars (2^n, all 0 or 1 but every 300th, as sha256's W), dense
// (zk_msm_run_stream) and classified on the host (zk_msm_run_stream_split,
// its classification timed apart, as a lean proof does it while it gathers),
// for each chunk 2^k of ZK_BENCH_STREAM_CHUNKS and window cap of
// ZK_BENCH_STREAM_CS; the split's result is checked against the dense one's.
func BenchmarkMSMStreamBits(b *testing.B) {
	needDevice(b)
	rng := rand.New(rand.NewPCG(43, 44))
	for _, g2 := range []bool{false, true} {
		group := groupName(g2)
		for _, lg := range benchLogs(b, "ZK_BENCH_STREAM_LOGS", []int{22}) {
			n := 1 << lg
			sc := make([]fr.Element, n)
			for i := range sc {
				switch {
				case i%300 == 0:
					sc[i] = msmScalars(rng, 1)[0]
				case rng.IntN(2) == 1:
					sc[i].SetOne()
				}
			}
			ps := pinnedCopy(b, sc)
			for _, ck := range benchLogs(b, "ZK_BENCH_STREAM_CHUNKS", []int{16, 18, 20}) {
				if ck > lg {
					continue
				}
				for _, maxC := range benchLogs(b, "ZK_BENCH_STREAM_CS", []int{0, 15, 13}) {
					s, err := newStreamedOf(g2, n, 1<<ck)
					if err != nil {
						b.Fatal(err)
					}
					var dense1, split1 bls12381.G1Jac
					var dense2, split2 bls12381.G2Jac
					dense, split := unsafe.Pointer(&dense1), unsafe.Pointer(&split1)
					if g2 {
						dense, split = unsafe.Pointer(&dense2), unsafe.Pointer(&split2)
					}
					name := fmt.Sprintf("%s/n=2^%d/chunk=2^%d/c<=%d", group, lg, ck, maxC)
					b.Run(name+"/dense", func(b *testing.B) {
						var sum MSMTiming
						for i := 0; i < b.N; i++ {
							tm, err := s.run(ps, maxC, dense)
							if err != nil {
								b.Fatal(err)
							}
							sum = addTiming(sum, tm)
						}
						reportTiming(b, sum, 0)
					})
					b.Run(name+"/split", func(b *testing.B) {
						// The dense result to match, whichever sub-benchmarks run.
						if _, err := s.run(ps, maxC, dense); err != nil {
							b.Fatal(err)
						}
						// The lists' pinned memory made once, as a lean slot's staging is.
						hs, err := newHostSplit(n, 1<<ck)
						if err != nil {
							b.Fatal(err)
						}
						defer hs.free()
						b.ResetTimer()
						var sum MSMTiming
						var classify time.Duration
						for i := 0; i < b.N; i++ {
							start := time.Now()
							if err := s.classifyInto(ps, hs); err != nil {
								b.Fatal(err)
							}
							classify += time.Since(start)
							tm, err := s.runSplit(ps, hs, maxC, split)
							if err != nil {
								b.Fatal(err)
							}
							sum = addTiming(sum, tm)
						}
						reportTiming(b, sum, 0)
						b.ReportMetric(float64(classify.Microseconds())/1000/float64(b.N), "classify-ms")
						if g2 && !split2.Equal(&dense2) || !g2 && !split1.Equal(&dense1) {
							b.Fatalf("the streamed split %s MSM differs from the dense one", group)
						}
					})
					s.free()
				}
			}
		}
	}
}
