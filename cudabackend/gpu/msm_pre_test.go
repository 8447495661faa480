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

// preDepths are the copy limits the precomputed-bases tests run with: 2, 5
// (which divides no window count the cost model picks above 2^10 points, so
// the last copy holds fewer windows than the others) and the most.
var preDepths = []int{2, 5, MSMMaxDepth}

// precomputable is what G1Bases and G2Bases share for their copies.
type precomputable interface {
	Precompute(int) error
	Precomputed() (int, int)
	Len() int
}

// precompute asks b (G1Bases or G2Bases) for up to maxDepth copies and
// checks that it keeps what MSMPrecomputeChoice says for its length.
func precompute(tb testing.TB, b precomputable, maxDepth int) (c, d int) {
	tb.Helper()
	if err := b.Precompute(maxDepth); err != nil {
		tb.Fatal(err)
	}
	c, d = b.Precomputed()
	wc, wd := MSMPrecomputeChoice(uint64(b.Len()), maxDepth)
	if c != wc || d != wd {
		tb.Fatalf("%d points, depth <= %d: precomputed c=%d d=%d, MSMPrecomputeChoice says c=%d d=%d", b.Len(), maxDepth, c, d, wc, wd)
	}
	return c, d
}

// checkDepth fails unless an MSM over all d-copy bases of its own length
// read the copies (the plan's cost model compares the same sizes as the
// choice, so it must).
func checkDepth(tb testing.TB, tm MSMTiming, c, d int) {
	tb.Helper()
	if d > 1 && (tm.Depth != d || tm.WindowBits != c) {
		tb.Fatalf("the MSM read %d copies with window %d; the bases hold %d for window %d", tm.Depth, tm.WindowBits, d, c)
	}
}

// TestMSMPrecomputeG1EdgeCases checks the G1 MSM over precomputed bases
// against gnark-crypto on the edge cases (zero scalars, infinity, repeated
// points, P and -P, all 1, r-1...), at each depth limit, over all the points
// and over a prefix, then after returning to the points alone.
// Deliberately parallel to TestMSMPrecomputeG2EdgeCases: see why there.
// Deliberately parallel to TestMSMG1EdgeCases too: the same inputs, here
// checked at every depth of copies, so that a failure names the path that
// broke.
func TestMSMPrecomputeG1EdgeCases(t *testing.T) {
	needDevice(t)
	rng := rand.New(rand.NewPCG(61, 62))
	pool := pointsG1(1 << 17)
	var neg9 bls12381.G1Affine
	neg9.Neg(&pool[9])
	for _, cs := range edgeCases(rng) {
		t.Run(cs.name, func(t *testing.T) {
			pts := pointsOf(pool, cs.idx, neg9)
			b := uploadG1(t, pts)
			want := refG1(t, pts, cs.scalars)
			half := (len(pts) + 1) / 2
			wantHalf := refG1(t, pts[:half], cs.scalars[:half])
			for _, maxd := range preDepths {
				c, d := precompute(t, b, maxd)
				got, tm, err := b.MSM(cs.scalars)
				if err != nil {
					t.Fatal(err)
				}
				if !got.Equal(&want) {
					t.Fatalf("depth <= %d (c=%d d=%d): GPU MSM differs from gnark (run c=%d d=%d)", maxd, c, d, tm.WindowBits, tm.Depth)
				}
				checkDepth(t, tm, c, d)
				got, tm, err = b.MSM(cs.scalars[:half])
				if err != nil {
					t.Fatal(err)
				}
				if !got.Equal(&wantHalf) {
					t.Fatalf("depth <= %d (c=%d d=%d): GPU MSM of the first %d differs from gnark (run c=%d d=%d)", maxd, c, d, half, tm.WindowBits, tm.Depth)
				}
			}
			if _, d := precompute(t, b, 1); d != 1 {
				t.Fatalf("Precompute(1) left %d copies", d)
			}
			got, tm, err := b.MSM(cs.scalars)
			if err != nil {
				t.Fatal(err)
			}
			if !got.Equal(&want) || tm.Depth > 1 {
				t.Fatalf("after Precompute(1): equal to gnark %v, %d copies read", got.Equal(&want), tm.Depth)
			}
		})
	}
}

// TestMSMPrecomputeG2EdgeCases is TestMSMPrecomputeG1EdgeCases for G2.
// Deliberately parallel to TestMSMPrecomputeG1EdgeCases: the groups' points are gnark-crypto
// types with no common interface, and a failure should name its group.
func TestMSMPrecomputeG2EdgeCases(t *testing.T) {
	needDevice(t)
	rng := rand.New(rand.NewPCG(63, 64))
	pool := pointsG2(1 << 17)
	var neg9 bls12381.G2Affine
	neg9.Neg(&pool[9])
	for _, cs := range edgeCases(rng) {
		t.Run(cs.name, func(t *testing.T) {
			pts := pointsOf(pool, cs.idx, neg9)
			b := uploadG2(t, pts)
			want := refG2(t, pts, cs.scalars)
			for _, maxd := range preDepths {
				c, d := precompute(t, b, maxd)
				got, tm, err := b.MSM(cs.scalars)
				if err != nil {
					t.Fatal(err)
				}
				if !got.Equal(&want) {
					t.Fatalf("depth <= %d (c=%d d=%d): GPU MSM differs from gnark (run c=%d d=%d)", maxd, c, d, tm.WindowBits, tm.Depth)
				}
				checkDepth(t, tm, c, d)
			}
		})
	}
}

// TestMSMPrecomputeSizes checks random MSMs over precomputed bases of
// growing size against gnark-crypto, G1 to 2^22 and G2 to 2^20, at each
// depth limit, from host and from device scalars.
func TestMSMPrecomputeSizes(t *testing.T) {
	needDevice(t)
	g1 := shortened([]int{1 << 10, 1<<12 + 5, 1 << 16, 1 << 20, 1 << 22}, 3)
	g2 := shortened([]int{1 << 10, 1<<12 + 5, 1 << 16, 1 << 20}, 3)
	rng := rand.New(rand.NewPCG(65, 66))
	for _, group := range []int{groupG1, groupG2} {
		sizes := g1
		if group == groupG2 {
			sizes = g2
		}
		for _, n := range sizes {
			sc := msmScalars(rng, n)
			buf := deviceScalars(t, sc, nil)
			t.Run(fmt.Sprintf("G%d/n=%d", group, n), func(t *testing.T) {
				// The group's bases, and its MSMs from host and device
				// scalars, each compared with gnark-crypto's result.
				var b precomputable
				var hostMSM func() (bool, MSMTiming, error)
				var devMSM func() (bool, error)
				if group == groupG1 {
					g, want := uploadG1(t, pointsG1(n)), refG1(t, pointsG1(n), sc)
					b = g
					hostMSM = func() (bool, MSMTiming, error) { got, tm, err := g.MSM(sc); return got.Equal(&want), tm, err }
					devMSM = func() (bool, error) { got, _, err := g.MSMDevice(buf, 0, n, nil); return got.Equal(&want), err }
				} else {
					g, want := uploadG2(t, pointsG2(n)), refG2(t, pointsG2(n), sc)
					b = g
					hostMSM = func() (bool, MSMTiming, error) { got, tm, err := g.MSM(sc); return got.Equal(&want), tm, err }
					devMSM = func() (bool, error) { got, _, err := g.MSMDevice(buf, 0, n, nil); return got.Equal(&want), err }
				}
				for _, maxd := range preDepths {
					start := time.Now()
					c, d := precompute(t, b, maxd)
					took := time.Since(start)
					same, tm, err := hostMSM()
					if err == nil && !same {
						err = errors.New("host scalars: differs from gnark")
					}
					checkDepth(t, tm, c, d)
					sameDev, err2 := devMSM()
					if err == nil && err2 == nil && !sameDev {
						err = errors.New("device scalars: differs from gnark")
					}
					if err != nil || err2 != nil {
						t.Fatalf("depth <= %d (c=%d d=%d): %v %v", maxd, c, d, err, err2)
					}
					t.Logf("G%d n=%d depth <= %d: c=%d d=%d, precomputed in %v; MSM device %v (sort %v, accumulate %v, reduce %v), upload %v, wall %v",
						group, n, maxd, c, d, took, tm.Device, tm.Sort, tm.Accumulate, tm.Reduce, tm.Upload, tm.Wall)
				}
			})
			buf.Free()
		}
	}
}

// TestMSMPrecomputeSplit checks the witness-aware MSM over precomputed bases
// (its Pippenger part reads the copies when they pay for the rest's length)
// against gnark-crypto on the split's edge cases, G1 and G2, and that the
// copies were read where the rest is the whole range.
func TestMSMPrecomputeSplit(t *testing.T) {
	needDevice(t)
	rng := rand.New(rand.NewPCG(67, 68))
	pool1, pool2 := pointsG1(1<<16), pointsG2(1<<16)
	var neg1 bls12381.G1Affine
	var neg2 bls12381.G2Affine
	neg1.Neg(&pool1[9])
	neg2.Neg(&pool2[9])
	read := 0
	for _, cs := range splitCases(rng, []int{1 << 10, 1 << 16}) {
		t.Run(cs.name, func(t *testing.T) {
			sp := classify(t, cs.scalars)
			rg := cs.scalars[cs.lo : cs.lo+len(cs.idx)]
			p1, p2 := pointsOf(pool1, cs.idx, neg1), pointsOf(pool2, cs.idx, neg2)
			b1, b2 := uploadG1(t, p1), uploadG2(t, p2)
			want1, want2 := refG1(t, p1, rg), refG2(t, p2, rg)
			for _, maxd := range preDepths {
				c, d := precompute(t, b1, maxd)
				got1, tm1, err := b1.MSMSplit(sp, cs.lo, len(p1), nil)
				if err != nil {
					t.Fatal(err)
				}
				if !got1.Equal(&want1) {
					t.Fatalf("G1 depth <= %d (c=%d d=%d): split MSM differs from gnark (run c=%d, %d copies, %d through Pippenger)", maxd, c, d, tm1.WindowBits, tm1.Depth, tm1.Pippenger)
				}
				if tm1.Depth > 1 {
					read++
				}
				c, d = precompute(t, b2, maxd)
				got2, tm2, err := b2.MSMSplit(sp, cs.lo, len(p2), nil)
				if err != nil {
					t.Fatal(err)
				}
				if !got2.Equal(&want2) {
					t.Fatalf("G2 depth <= %d (c=%d d=%d): split MSM differs from gnark (run c=%d, %d copies, %d through Pippenger)", maxd, c, d, tm2.WindowBits, tm2.Depth, tm2.Pippenger)
				}
			}
		})
	}
	if read == 0 {
		t.Error("no split MSM read the precomputed copies")
	}
}

// TestMSMPrecomputeBadArguments checks the depth's range and freed bases.
func TestMSMPrecomputeBadArguments(t *testing.T) {
	needDevice(t)
	b := uploadG1(t, pointsG1(100))
	for _, d := range []int{0, -1, MSMMaxDepth + 1} {
		if err := b.Precompute(d); !errors.Is(err, ErrInvalid) {
			t.Errorf("Precompute(%d) = %v, want ErrInvalid", d, err)
		}
	}
	if c, d := b.Precomputed(); c != 0 || d != 1 {
		t.Errorf("after refused precomputes: c=%d d=%d, want none", c, d)
	}
	if err := b.Free(); err != nil {
		t.Fatal(err)
	}
	if err := b.Precompute(4); !errors.Is(err, ErrInvalid) {
		t.Errorf("Precompute after Free = %v, want ErrInvalid", err)
	}
	var nb *G2Bases
	if err := nb.Precompute(4); !errors.Is(err, ErrInvalid) {
		t.Errorf("Precompute on nil = %v, want ErrInvalid", err)
	}
}

// BenchmarkMSMPrecompute times the G1 and G2 MSMs at 2^20, 2^22 and 2^24
// (ZK_BENCH_MSM_LOGS="16 18 26" picks others) over the bases alone (d=1) and
// with the copies the cost model picks (best), scalars from pageable Go
// memory and from pinned memory: wall-ms/op is the call's wall time, upload
// included; the device phases are reported beside it. The results of every
// variant of a size must agree (d=1 is checked against gnark by the tests).
// Pick with -bench, e.g. 'MSMPrecompute/G1/n=2^24'.
func BenchmarkMSMPrecompute(b *testing.B) {
	needDevice(b)
	rng := rand.New(rand.NewPCG(69, 70))
	for _, group := range []int{groupG1, groupG2} {
		for _, lg := range benchLogs(b, "ZK_BENCH_MSM_LOGS", []int{20, 22, 24}) {
			n := 1 << lg
			name := fmt.Sprintf("G%d/n=2^%d", group, lg)
			var sc []fr.Element
			var pinned *PinnedScalars
			var b1 *G1Bases
			var b2 *G2Bases
			results := map[string]any{}
			setup := func(b *testing.B) {
				if sc != nil {
					return
				}
				sc = msmScalars(rng, n)
				var err error
				if pinned, err = NewPinnedScalars(n); err != nil {
					b.Fatal(err)
				}
				copy(pinned.Elements(), sc)
				if group == groupG1 {
					b1, err = UploadG1(0, pointsG1(n))
				} else {
					b2, err = UploadG2(0, pointsG2(n))
				}
				if err != nil {
					b.Fatal(err)
				}
			}
			// ZK_BENCH_MSM_PIECES="1 2 4" runs each case with the upload in
			// that many pieces (SetPieces), named .../p=N; unset, the
			// default.
			pieces := benchLogs(b, "ZK_BENCH_MSM_PIECES", []int{0})
			for _, depth := range []string{"d=1", "best"} {
				for _, mem := range []string{"pageable", "pinned"} {
					for _, np := range pieces {
						sub := fmt.Sprintf("%s/%s/%s", name, depth, mem)
						if np > 0 {
							sub += fmt.Sprintf("/p=%d", np)
						}
						b.Run(sub, func(b *testing.B) {
							setup(b)
							// The bases keep their pieces: every case sets its own.
							var err error
							if b1 != nil {
								err = b1.SetPieces(np, 0)
							} else {
								err = b2.SetPieces(np, 0)
							}
							if err != nil {
								b.Fatal(err)
							}
							maxd := 1
							if depth == "best" {
								maxd = MSMMaxDepth
							}
							start := time.Now()
							if b1 != nil {
								err = b1.Precompute(maxd)
							} else {
								err = b2.Precompute(maxd)
							}
							if err != nil {
								b.Fatal(err)
							}
							pre := time.Since(start)
							in := sc
							if mem != "pageable" {
								in = pinned.Elements()
							}
							var sum MSMTiming
							b.ResetTimer()
							for i := 0; i < b.N; i++ {
								var tm MSMTiming
								var r any
								if b1 != nil {
									var p bls12381.G1Jac
									p, tm, err = b1.MSM(in)
									r = p
								} else {
									var p bls12381.G2Jac
									p, tm, err = b2.MSM(in)
									r = p
								}
								if err != nil {
									b.Fatal(err)
								}
								results[sub] = r
								sum = addTiming(sum, tm)
							}
							reportTiming(b, sum, 0)
							b.ReportMetric(float64(pre.Microseconds())/1000, "precompute-ms")
						})
					}
				}
			}
			if b1 != nil {
				b1.Free()
			}
			if b2 != nil {
				b2.Free()
			}
			if pinned != nil {
				pinned.Free()
			}
			var first any
			for k, r := range results {
				if first == nil {
					first = r
					continue
				}
				same := false
				switch p := r.(type) {
				case bls12381.G1Jac:
					q := first.(bls12381.G1Jac)
					same = p.Equal(&q)
				case bls12381.G2Jac:
					q := first.(bls12381.G2Jac)
					same = p.Equal(&q)
				}
				if !same {
					b.Fatalf("%s: the MSM %s differs from another variant", name, k)
				}
			}
		}
	}
}
