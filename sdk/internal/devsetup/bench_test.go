package devsetup

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/groth16"

	"github.com/zkhost/zkhost/sdk/procfs"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// cpuSeconds returns the CPU time (user and system) this process has used so far.
func cpuSeconds(b *testing.B) float64 {
	cpu, err := procfs.CPUTime()
	if err != nil {
		b.Fatal(err)
	}
	return cpu.Seconds()
}

// BenchmarkSetup compares Setup with gnark's groth16.Setup on chain circuits of 2^k
// constraints, same compiled circuit, same run; k is 12 and 14, or ZKHOST_BENCH_LOG.
// Besides wall time it reports cpu-s/op, the process's CPU time per setup, which a busy
// shared machine distorts less. Figures in BENCHMARKS.md.
func BenchmarkSetup(b *testing.B) {
	ks := []int{12, 14}
	if s := os.Getenv("ZKHOST_BENCH_LOG"); s != "" {
		k, err := strconv.Atoi(s)
		if err != nil || k < 2 || k > 26 {
			b.Fatalf("ZKHOST_BENCH_LOG=%q: want an integer in [2, 26]", s)
		}
		ks = []int{k}
	}
	for _, k := range ks {
		_, ccs := testcircuit.Compile(b, "chain", map[string]int{"k": k})
		b.Run(fmt.Sprintf("k=%d/devsetup", k), func(b *testing.B) {
			cpu := cpuSeconds(b)
			for b.Loop() {
				if _, _, err := Setup(context.Background(), ccs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((cpuSeconds(b)-cpu)/float64(b.N), "cpu-s/op")
		})
		b.Run(fmt.Sprintf("k=%d/gnark", k), func(b *testing.B) {
			cpu := cpuSeconds(b)
			for b.Loop() {
				if _, _, err := groth16.Setup(ccs); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric((cpuSeconds(b)-cpu)/float64(b.N), "cpu-s/op")
		})
	}
}

// BenchmarkFixedBase times the multiplications alone at several digit widths (table
// building included), against gnark-crypto's BatchScalarMultiplication.
func BenchmarkFixedBase(b *testing.B) {
	const n = 1 << 18
	scalars := make([]fr.Element, n)
	for i := range scalars {
		scalars[i].SetRandom()
	}
	_, _, g1, g2 := bls12381.Generators()
	ctx := context.Background()
	for _, c := range []int{12, 16, 20} {
		w := window{c: c, nbWindows: (scalarBits + c) / c}
		// Deliberately parallel to the G2 run below: gnark-crypto's G1 and
		// G2 types share no interface (as g1Table and g2Table, which see).
		b.Run(fmt.Sprintf("G1/c=%d", c), func(b *testing.B) {
			dst := make([]bls12381.G1Affine, n)
			for b.Loop() {
				t, err := newG1Table(ctx, w, &g1)
				if err != nil {
					b.Fatal(err)
				}
				if err := t.mul(ctx, dst, scalars); err != nil {
					b.Fatal(err)
				}
			}
		})
		// Deliberately parallel to the G1 run above: see why there.
		b.Run(fmt.Sprintf("G2/c=%d", c), func(b *testing.B) {
			dst := make([]bls12381.G2Affine, n)
			for b.Loop() {
				t, err := newG2Table(ctx, w, &g2)
				if err != nil {
					b.Fatal(err)
				}
				if err := t.mul(ctx, dst, scalars); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("G1/gnark-crypto", func(b *testing.B) {
		for b.Loop() {
			bls12381.BatchScalarMultiplicationG1(&g1, scalars)
		}
	})
}
