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

	"github.com/consensys/gnark/backend/groth16"
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
	d, err := Domain(1 << log)
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
			if _, _, err := Prove(ctx, f.pk, sol.W, sol.A, sol.B, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("refprover+solve", func(b *testing.B) {
		for b.Loop() {
			if _, err := f.ccs.Solve(f.full); err != nil {
				b.Fatal(err)
			}
			if _, _, err := Prove(ctx, f.pk, sol.W, sol.A, sol.B, 0); err != nil {
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

// BenchmarkPhases times each phase alone, and the G1 and G2 MSMs run one after the
// other (as Prove does) against run at the same time (as gnark does).
func BenchmarkPhases(b *testing.B) {
	f := chainFixture(b, benchSteps(b))
	sol := f.solution
	ctx := context.Background()
	h, err := ComputeH(ctx, sol.A, sol.B, f.pk.DomainSize, 0)
	if err != nil {
		b.Fatal(err)
	}
	ws, err := FilterWires(f.pk, sol.W)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("ntt", func(b *testing.B) {
		for b.Loop() {
			if _, err := ComputeH(ctx, sol.A, sol.B, f.pk.DomainSize, 0); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("msm_g1", func(b *testing.B) {
		var res MSMResults
		for b.Loop() {
			if err := ComputeG1(ctx, f.pk, ws, h, 0, &res); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("msm_g2", func(b *testing.B) {
		var res MSMResults
		for b.Loop() {
			if err := ComputeG2(ctx, f.pk, ws, 0, &res); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("msm_sequential", func(b *testing.B) {
		var res MSMResults
		for b.Loop() {
			if err := ComputeG1(ctx, f.pk, ws, h, 0, &res); err != nil {
				b.Fatal(err)
			}
			if err := ComputeG2(ctx, f.pk, ws, 0, &res); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("msm_concurrent", func(b *testing.B) {
		var res MSMResults
		for b.Loop() {
			var wg sync.WaitGroup
			var errG1 error
			wg.Go(func() { errG1 = ComputeG1(ctx, f.pk, ws, h, 0, &res) })
			// gnark gives the G2 MSM twice the cores when there are 16 or fewer.
			threads := runtime.NumCPU()
			if threads <= 16 {
				threads *= 2
			}
			if err := ComputeG2(ctx, f.pk, ws, threads, &res); err != nil {
				b.Fatal(err)
			}
			wg.Wait()
			if errG1 != nil {
				b.Fatal(errG1)
			}
		}
	})
}

// BenchmarkProveMemory reports the heap Prove allocates per constraint: total
// allocations and the peak of live heap objects above the baseline (sampled every
// 100µs), which is what a backend's HostBytesPerConstraint must cover.
func BenchmarkProveMemory(b *testing.B) {
	f := chainFixture(b, benchSteps(b))
	sol := f.solution
	constraints := float64(len(sol.A))
	sample := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	heap := func() uint64 {
		metrics.Read(sample)
		return sample[0].Value.Uint64()
	}
	var peakSum, allocSum float64
	for b.Loop() {
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
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if _, _, err := Prove(context.Background(), f.pk, sol.W, sol.A, sol.B, 0); err != nil {
			b.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		close(stop)
		<-done
		peakSum += float64(peak.Load()-min(base, peak.Load())) / constraints
		allocSum += float64(after.TotalAlloc-before.TotalAlloc) / constraints
	}
	b.ReportMetric(peakSum/float64(b.N), "peak-B/constraint")
	b.ReportMetric(allocSum/float64(b.N), "alloc-B/constraint")
}
