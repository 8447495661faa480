package oneshot

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/consensys/gnark/backend/groth16"

	"github.com/zkhost/zkhost/sdk/circuit"
	"github.com/zkhost/zkhost/sdk/circuits"
	"github.com/zkhost/zkhost/sdk/procfs"
)

// The CPU-path benchmarks compare gnark's own groth16.Prove with zkhost's path
// (synthesis, shared-memory transfer, CPU backend process through go-plugin,
// verification) on the same circuit and cores. They need key files and the backend
// binary: scripts/bench-cpu.sh (make bench-cpu) provides both through
// ZKHOST_BENCH_KEYS, ZKHOST_BENCH_CIRCUITS (comma-separated key names) and
// ZKHOST_BENCH_BACKEND.

func benchEnv(b *testing.B) (keys, backend string, names []string) {
	keys, backend = os.Getenv("ZKHOST_BENCH_KEYS"), os.Getenv("ZKHOST_BENCH_BACKEND")
	if keys == "" || backend == "" {
		b.Skip("set ZKHOST_BENCH_KEYS and ZKHOST_BENCH_BACKEND (make bench-cpu does)")
	}
	names = filepath.SplitList(os.Getenv("ZKHOST_BENCH_CIRCUITS"))
	if len(names) == 0 {
		names = []string{"chain-k16"}
	}
	return keys, backend, names
}

// BenchmarkGnarkProve is the peer: gnark's groth16.Prove (solve + prove) per op.
func BenchmarkGnarkProve(b *testing.B) {
	keys, _, names := benchEnv(b)
	for _, name := range names {
		b.Run(name, func(b *testing.B) {
			c, err := circuit.Load(keys, name)
			if err != nil {
				b.Fatal(err)
			}
			defer c.Close()
			pk, err := c.GnarkProvingKey()
			if err != nil {
				b.Fatal(err)
			}
			spec, err := circuits.FromID(name)
			if err != nil {
				b.Fatal(err)
			}
			w, err := spec.Witness(0, 0)
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			cpu0, _ := procfs.CPUTimeWithChildren()
			for i := 0; i < b.N; i++ {
				if _, err := groth16.Prove(c.System, pk, w); err != nil {
					b.Fatal(err)
				}
			}
			cpu1, _ := procfs.CPUTimeWithChildren()
			b.ReportMetric(float64((cpu1-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
		})
	}
}

// BenchmarkZkhostCPU proves b.N partitions through oneshot.Run (backend launch and
// key load included once) and reports the per-partition split.
func BenchmarkZkhostCPU(b *testing.B) {
	keys, backend, names := benchEnv(b)
	for _, name := range names {
		b.Run(name, func(b *testing.B) {
			out := b.TempDir()
			b.ResetTimer()
			cpu0, _ := procfs.CPUTimeWithChildren()
			res, err := Run(context.Background(), Options{
				KeyDir: keys, Circuit: name, Partitions: b.N, OutDir: out, Backend: backend,
			})
			if err != nil {
				b.Fatal(err)
			}
			b.StopTimer()
			// The backend process (and its workers, which it reaps) has exited by
			// now, so its CPU time is in this process's reaped children's.
			cpu1, _ := procfs.CPUTimeWithChildren()
			b.ReportMetric(float64((cpu1-cpu0).Milliseconds())/float64(b.N), "cpu-ms/op")
			var synth, transfer, prove, busy, verify time.Duration
			for _, p := range res.Partitions {
				synth += p.Synthesis
				transfer += p.Transfer
				prove += p.Prove
				busy += p.DeviceBusy
				verify += p.Verify
			}
			n := float64(len(res.Partitions))
			b.ReportMetric(float64(synth.Milliseconds())/n, "synth-ms/op")
			b.ReportMetric(float64(transfer.Microseconds())/1000/n, "transfer-ms/op")
			b.ReportMetric(float64(prove.Milliseconds())/n, "prove-ms/op")
			b.ReportMetric(float64(busy.Milliseconds())/n, "busy-ms/op")
			b.ReportMetric(float64(verify.Microseconds())/1000/n, "verify-ms/op")
		})
	}
}
