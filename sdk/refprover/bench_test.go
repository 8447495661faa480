package refprover

import (
	"context"
	"os"
	"runtime"
	"runtime/metrics"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/groth16"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
)

// benchSteps is the chain length of the benchmarks: 2^ZKHOST_BENCH_LOG − 2 steps
// (default 14), so the circuit has 2^log − 1 constraints and fills the domain.
// It also holds the domain, as a backend holding a loaded key does, so the domain is
// not rebuilt inside the measured proofs.
func benchSteps(b *testing.B) int {
	log := 14
	if s := os.Getenv("ZKHOST_BENCH_LOG"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 4 || v > 26 {
			b.Fatalf("ZKHOST_BENCH_LOG=%q: want an integer in [4, 26]", s)
		}
		log = v
	}
	d, err := Domain(bls, 1<<log)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { runtime.KeepAlive(d) })
	return 1<<log - 2
}

// BenchmarkProve compares Prove with gnark's groth16.Prove on a chain circuit. gnark's
// Prove solves the witness too, so "refprover+solve" is the like-for-like number.
func BenchmarkProve(b *testing.B) {
	f := chainFixture(b, benchSteps(b))
	sol := f.solution
	ctx := context.Background()
	b.Run("refprover", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := Prove(ctx, bls, f.pk, sol.W, sol.A, sol.B, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("refprover+solve", func(b *testing.B) {
		for b.Loop() {
			if _, err := f.ccs.Solve(f.full); err != nil {
				b.Fatal(err)
			}
			if _, _, err := Prove(ctx, bls, f.pk, sol.W, sol.A, sol.B, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("gnark", func(b *testing.B) {
		for b.Loop() {
			if _, err := groth16.Prove(f.ccs, f.gnarkPK, f.full); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// msmInputs returns the benchmark's chain fixture with the MSMs' inputs computed:
// H and the filtered wires.
func msmInputs(b *testing.B) (*fixture, []fr.Element, WireScalars[fr.Element]) {
	b.Helper()
	f := chainFixture(b, benchSteps(b))
	h, err := ComputeH(context.Background(), bls, f.solution.A, f.solution.B, f.pk.DomainSize, 0)
	if err != nil {
		b.Fatal(err)
	}
	ws, err := FilterWires(f.pk, f.solution.W)
	if err != nil {
		b.Fatal(err)
	}
	return f, h, ws
}

// BenchmarkPhases times each phase alone.
func BenchmarkPhases(b *testing.B) {
	f, h, ws := msmInputs(b)
	sol := f.solution
	ctx := context.Background()
	b.Run("ntt", func(b *testing.B) {
		for b.Loop() {
			if _, err := ComputeH(ctx, bls, sol.A, sol.B, f.pk.DomainSize, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("msm_g1", func(b *testing.B) {
		var res MSMResults[bls12381.G1Jac, bls12381.G2Jac]
		for b.Loop() {
			if err := ComputeG1(ctx, bls, f.pk, ws, h, 0, &res); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("msm_g2", func(b *testing.B) {
		var res MSMResults[bls12381.G1Jac, bls12381.G2Jac]
		for b.Loop() {
			if err := ComputeG2(ctx, bls, f.pk, ws, 0, &res); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkProveMemory reports the heap a proof allocates per constraint: total
// allocations and the peak of live heap objects above the baseline (sampled every
// 100µs), which is what a backend's HostBytesPerConstraint must cover. The peer,
// gnark's groth16.Prove on the same key, also solves the circuit (refprover starts
// from the solution, as a backend does), so its figures include the solver's.
func BenchmarkProveMemory(b *testing.B) {
	f := chainFixture(b, benchSteps(b))
	sol := f.solution
	provers := []struct {
		name  string
		prove func() error
	}{
		{"refprover", func() error {
			_, _, err := Prove(context.Background(), bls, f.pk, sol.W, sol.A, sol.B, 0)
			return err
		}},
		{"gnark", func() error {
			_, err := groth16.Prove(f.ccs, f.gnarkPK, f.full)
			return err
		}},
	}
	for _, p := range provers {
		b.Run(p.name, func(b *testing.B) {
			constraints := float64(len(sol.A))
			var peakSum, allocSum float64
			for b.Loop() {
				var before, after runtime.MemStats
				var err error
				peakSum += float64(peakHeap(func() {
					runtime.ReadMemStats(&before)
					err = p.prove()
					runtime.ReadMemStats(&after)
				})) / constraints
				if err != nil {
					b.Fatal(err)
				}
				allocSum += float64(after.TotalAlloc-before.TotalAlloc) / constraints
			}
			b.ReportMetric(peakSum/float64(b.N), "peak-B/constraint")
			b.ReportMetric(allocSum/float64(b.N), "alloc-B/constraint")
		})
	}
}

// peakHeap runs f and returns the peak of live heap objects above the level before
// it, sampled every 100µs.
func peakHeap(f func()) uint64 {
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heap := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	runtime.GC()
	base := heap()
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(100 * time.Microsecond)
		defer t.Stop()
		for {
			if v := heap(); v > peak.Load() {
				peak.Store(v)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	f()
	close(stop)
	<-done
	return peak.Load() - min(base, peak.Load())
}

// BenchmarkMSMSchedule compares ways to run the G1 and G2 MSMs, in time and in peak
// heap per constraint: the G1 MSMs all at once (gnark) or one after another, and the
// G2 MSM after them or beside them (gnark).
func BenchmarkMSMSchedule(b *testing.B) {
	f, h, ws := msmInputs(b)
	sol := f.solution
	ctx := context.Background()
	constraints := float64(len(sol.A))
	for _, tt := range []struct {
		name     string
		schedule g1Schedule
		g2Beside bool
	}{
		{"g1_concurrent+g2_after", g1Concurrent, false},
		{"g1_sequential+g2_after", g1Sequential, false},
		{"g1_concurrent+g2_beside", g1Concurrent, true},
		{"g1_sequential+g2_beside", g1Sequential, true},
	} {
		b.Run(tt.name, func(b *testing.B) {
			var peakSum float64
			for b.Loop() {
				var res MSMResults[bls12381.G1Jac, bls12381.G2Jac]
				var errG1, errG2 error
				peakSum += float64(peakHeap(func() {
					if tt.g2Beside {
						var wg sync.WaitGroup
						wg.Go(func() { errG2 = ComputeG2(ctx, bls, f.pk, ws, 0, &res) })
						errG1 = computeG1(ctx, bls, f.pk, ws, h, 0, &res, tt.schedule)
						wg.Wait()
					} else {
						errG1 = computeG1(ctx, bls, f.pk, ws, h, 0, &res, tt.schedule)
						errG2 = ComputeG2(ctx, bls, f.pk, ws, 0, &res)
					}
				})) / constraints
				if errG1 != nil || errG2 != nil {
					b.Fatal(errG1, errG2)
				}
			}
			b.ReportMetric(peakSum/float64(b.N), "peak-B/constraint")
		})
	}
}
