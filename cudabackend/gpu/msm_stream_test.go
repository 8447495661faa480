//go:build cuda

package gpu

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
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
		group := "G1"
		if g2 {
			group = "G2"
		}
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
						var s *streamedBases
						var err error
						if g2 {
							s, err = newStreamedG2(0, pointsG2(n), 1<<ck)
						} else {
							s, err = newStreamedG1(0, pointsG1(n), 1<<ck)
						}
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
