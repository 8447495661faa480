//go:build cuda

package gpu

import (
	"errors"
	"fmt"
	"math/big"
	"os"
	"strconv"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
)

// probeConfigs are the madd probe's settings: k_accum0's (registers for
// two blocks a multiprocessor, two launched), one block, and registers for
// three blocks, three launched.
var probeConfigs = []struct{ regBlocks, blocks int }{{2, 2}, {2, 1}, {3, 3}}

// probeWant is accumulator s's sum: points[s] + points[(s+1+i) mod n], i < iters.
func probeWant(points []bls12381.G1Affine, s, iters int) bls12381.G1Affine {
	n := len(points)
	var acc bls12381.G1Jac
	acc.FromAffine(&points[s%n])
	for i := 0; i < iters; i++ {
		acc.AddMixed(&points[(s+1+i)%n])
	}
	var r bls12381.G1Affine
	r.FromJacobian(&acc)
	return r
}

// TestProbeMadd checks the probe's sums against gnark-crypto in every
// setting (a sample of threads), so its rates count additions that were
// right; bad settings are refused by name.
func TestProbeMadd(t *testing.T) {
	needDevice(t)
	points := pointsG1(64)
	const iters = 37
	for _, c := range probeConfigs {
		t.Run(fmt.Sprintf("regs=%d/blocks=%d", c.regBlocks, c.blocks), func(t *testing.T) {
			p, sums, err := ProbeMadd(0, c.regBlocks, c.blocks, iters, points)
			if err != nil {
				t.Fatal(err)
			}
			if len(sums) != p.Threads || p.Adds() != int64(p.Threads*iters) {
				t.Fatalf("%d sums from %d threads, %d adds", len(sums), p.Threads, p.Adds())
			}
			for th := 0; th < p.Threads; th += 61 {
				for _, k := range []int{th, p.Threads - 1 - th} {
					if want := probeWant(points, k, iters); !sums[k].Equal(&want) {
						t.Fatalf("thread %d: wrong sum", k)
					}
				}
			}
			t.Logf("%d threads, %d registers, %d bytes spilled", p.Threads, p.Regs, p.SpillBytes)
		})
	}
	bad := []struct {
		name                      string
		regBlocks, blocks, npoint int
	}{
		{"registers for 4 blocks", 4, 2, 64},
		{"more blocks than fit", 2, 8, 64},
		{"points not a power of two", 2, 2, 48},
		{"one point", 2, 2, 1},
		{"no blocks", 2, 0, 64},
	}
	for _, b := range bad {
		if _, _, err := ProbeMadd(0, b.regBlocks, b.blocks, 3, points[:b.npoint]); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err %v, want ErrInvalid", b.name, err)
		}
	}
}

// BenchmarkMaddProbe reports the device's mixed additions a second in each
// setting (Gadd/s) and what that rate makes of the G1 MSM's accumulation at
// 2^24 (2^24 scalars x 12 windows of one addition each: ms/acc24), the
// floor of k_accum0's time there.
// ZK_BENCH_PROBE_ITERS sets the additions an accumulator (probeIters).
func BenchmarkMaddProbe(b *testing.B) {
	needDevice(b)
	points := pointsG1(256)
	iters := probeIters(b)
	for _, c := range probeConfigs {
		b.Run(fmt.Sprintf("regs=%d/blocks=%d", c.regBlocks, c.blocks), func(b *testing.B) {
			var adds int64
			var secs float64
			var last MaddProbe
			for i := 0; i < b.N; i++ {
				p, _, err := ProbeMadd(0, c.regBlocks, c.blocks, iters, points)
				if err != nil {
					b.Fatal(err)
				}
				adds += p.Adds()
				secs += p.Time.Seconds()
				last = p
			}
			rate := float64(adds) / secs
			b.ReportMetric(rate/1e9, "Gadd/s")
			b.ReportMetric(float64(uint64(12)<<24)/rate*1e3, "ms/acc24")
			b.ReportMetric(float64(last.Regs), "regs")
			b.ReportMetric(float64(last.SpillBytes), "spillB")
		})
	}
}

// fmulConfigs are the product probe's settings (ilp, blocks a
// multiprocessor): one chain a thread at two and four blocks, two chains
// at two and four, four chains at two.
var fmulConfigs = []struct{ ilp, blocks int }{
	{1, 2}, {1, 4}, {2, 2}, {2, 4}, {4, 2},
}

// fmulInputs returns n random canonical Fq elements twice.
func fmulInputs(tb testing.TB, n int) (xs, ys []fp.Element) {
	xs, ys = make([]fp.Element, n), make([]fp.Element, n)
	for i := range xs {
		if _, err := xs[i].SetRandom(); err != nil {
			tb.Fatal(err)
		}
		if _, err := ys[i].SetRandom(); err != nil {
			tb.Fatal(err)
		}
	}
	return xs, ys
}

// TestProbeFmul checks the product probe's chains against gnark-crypto
// (xs[k] * ys[k]^iters) in every setting, on a sample of threads; bad
// settings are refused by name.
func TestProbeFmul(t *testing.T) {
	needDevice(t)
	xs, ys := fmulInputs(t, 64)
	const iters = 37
	for _, c := range fmulConfigs {
		t.Run(fmt.Sprintf("ilp=%d/blocks=%d", c.ilp, c.blocks), func(t *testing.T) {
			p, got, err := ProbeFmul(0, c.ilp, c.blocks, iters, xs, ys)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != p.Threads*c.ilp || p.Products() != int64(len(got)*iters) {
				t.Fatalf("%d results from %d threads, %d products", len(got), p.Threads, p.Products())
			}
			for i := 0; i < len(got); i += 97 {
				k := i % len(xs)
				var want fp.Element
				want.Exp(ys[k], big.NewInt(iters))
				want.Mul(&want, &xs[k])
				if !got[i].Equal(&want) {
					t.Fatalf("chain %d: got %s, want %s", i, got[i].String(), want.String())
				}
			}
		})
	}
	bad := []struct {
		name        string
		ilp, blocks int
		n, ny       int
	}{
		{"ilp 3", 3, 2, 64, 64},
		{"lengths differ", 1, 2, 64, 32},
		{"not a power of two", 1, 2, 48, 48},
		{"no blocks", 1, 0, 64, 64},
		{"more blocks than fit", 4, 16, 64, 64},
	}
	for _, b := range bad {
		if _, _, err := ProbeFmul(0, b.ilp, b.blocks, 3, xs[:b.n], ys[:b.ny]); !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err %v, want ErrInvalid", b.name, err)
		}
	}
}

// BenchmarkFmulProbe reports the device's Fq products a second in each
// setting (Gmul/s): the rate the products of an addition could reach if
// nothing else ran. A chain does 16 x probeIters products.
func BenchmarkFmulProbe(b *testing.B) {
	needDevice(b)
	xs, ys := fmulInputs(b, 256)
	iters := probeIters(b) * 16
	for _, c := range fmulConfigs {
		b.Run(fmt.Sprintf("ilp=%d/blocks=%d", c.ilp, c.blocks), func(b *testing.B) {
			var n int64
			var secs float64
			for i := 0; i < b.N; i++ {
				p, _, err := ProbeFmul(0, c.ilp, c.blocks, iters, xs, ys)
				if err != nil {
					b.Fatal(err)
				}
				n += p.Products()
				secs += p.Time.Seconds()
			}
			b.ReportMetric(float64(n)/secs/1e9, "Gmul/s")
		})
	}
}

// probeIters is ZK_BENCH_PROBE_ITERS, the probes' additions an
// accumulator (default 2048; the product probe runs 16 times as many).
func probeIters(b *testing.B) int {
	s := os.Getenv("ZK_BENCH_PROBE_ITERS")
	if s == "" {
		return 2048
	}
	v, err := strconv.Atoi(s)
	if err != nil || v < 1 {
		b.Fatalf("ZK_BENCH_PROBE_ITERS=%q: a positive count", s)
	}
	return v
}
