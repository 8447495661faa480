package cpubackend

import (
	"context"
	"os"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/consensys/gnark/backend/groth16"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/circuit"
	"github.com/zkhost/zkhost/sdk/circuits"
	"github.com/zkhost/zkhost/sdk/shm"
)

// BenchmarkWorkerAgainstGnark proves one partition of a real key set in turn with
// gnark's groth16.Prove in this process and with the key's warm prove worker,
// each iteration one of each, so the machine's noise falls on both alike. It
// isolates the worker from the rest of the host's path (make bench-cpu measures
// that): the same witness, the same key file, the same cores. gnark's figure
// includes its solve, as groth16.Prove does; the worker's is the backend's Prove
// call. CPU time is each side's own: this process's during gnark's proof, the
// worker's (from /proc) during its proof, and unlike wall time it holds still
// on a shared machine; so do the minor page faults each side takes. The worker
// waits through gnark's proof, longer than refprover.WorkerIdleRelease, so each
// of its proofs starts after it gave its heap back: the case of a worker's first
// proof and of one after an idle second.
//
// It needs a key directory (ZKHOST_BENCH_KEYS, keys from zkhost keygen, as
// make bench-cpu makes them), a key name (ZKHOST_BENCH_CIRCUITS, e.g.
// chain-k18, or chain-k18-bn254 for BN254) and, optionally, the worker binary (ZKHOST_BENCH_BACKEND;
// this test binary by default).
func BenchmarkWorkerAgainstGnark(b *testing.B) {
	keys, name := os.Getenv("ZKHOST_BENCH_KEYS"), os.Getenv("ZKHOST_BENCH_CIRCUITS")
	if keys == "" || name == "" {
		// No key set named: make a small one here rather than skip.
		keys, name = b.TempDir(), "chain-k12"
		spec, err := circuits.FromID(name)
		if err != nil {
			b.Fatal(err)
		}
		if err := circuit.Keygen(spec, keys); err != nil {
			b.Fatal(err)
		}
	}
	worker := os.Getenv("ZKHOST_BENCH_BACKEND")
	if worker == "" {
		worker = testExecutable(b)
	}
	c, err := circuit.Load(keys, name)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	spec, err := circuits.FromID(name)
	if err != nil {
		b.Fatal(err)
	}
	full, err := spec.Witness(0, 0)
	if err != nil {
		b.Fatal(err)
	}
	data, err := full.MarshalBinary()
	if err != nil {
		b.Fatal(err)
	}
	store := shm.NewStore()
	defer store.Close()
	h, err := store.WriteRaw("bench", c.Curve, uint64(c.NbWires), uint64(c.NbConstraints), func(w, a, bv []byte) error {
		_, err := circuit.SynthesizeInputRaw(c, data, 0, w, a, bv)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	pk, err := c.GnarkProvingKey()
	if err != nil {
		b.Fatal(err)
	}

	be := New(Options{WorkerPath: worker})
	defer be.Close()
	if _, err := be.LoadKey(context.Background(), sdk.KeyRef{ID: name, Path: c.PKPath, Digest: c.PKDigest}); err != nil {
		b.Fatal(err)
	}
	lease, err := be.keys.Acquire(name)
	if err != nil {
		b.Fatal(err)
	}
	pid := lease.Key().worker.proc.Pid()
	lease.Release()

	var gnarkWall, gnarkCPU, workerWall, workerCPU time.Duration
	var gnarkFaults, workerFaults int64 // minor page faults
	b.ResetTimer()
	for range b.N {
		cpu0, _ := processCPU()
		faults0 := selfFaults()
		t0 := time.Now()
		if _, err := groth16.Prove(c.System, pk, full); err != nil {
			b.Fatal(err)
		}
		gnarkWall += time.Since(t0)
		cpu1, _ := processCPU()
		gnarkCPU += cpu1 - cpu0
		gnarkFaults += selfFaults() - faults0

		cpu0, faults0, t0 = liveCPU(pid), liveFaults(pid), time.Now()
		res, err := be.Prove(context.Background(), sdk.ProveRequest{KeyID: name, Partition: h})
		if err != nil {
			b.Fatal(err)
		}
		workerWall += time.Since(t0)
		workerCPU += liveCPU(pid) - cpu0
		workerFaults += liveFaults(pid) - faults0
		if len(res.Proof) == 0 {
			b.Fatal("the worker answered no proof")
		}
	}
	b.StopTimer()
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return float64(d.Milliseconds()) / n }
	b.ReportMetric(ms(gnarkWall), "gnark-ms/op")
	b.ReportMetric(ms(workerWall), "worker-ms/op")
	b.ReportMetric(ms(gnarkCPU), "gnark-cpu-ms/op")
	b.ReportMetric(ms(workerCPU), "worker-cpu-ms/op")
	b.ReportMetric(float64(gnarkFaults)/n, "gnark-faults/op")
	b.ReportMetric(float64(workerFaults)/n, "worker-faults/op")
}

// selfFaults is this process's count of minor page faults so far.
func selfFaults() int64 {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return ru.Minflt
}

// liveFaults reads a running process's count of minor page faults from
// /proc/PID/stat (0 when it is gone).
func liveFaults(pid int) int64 {
	f := procStatFields(pid)
	if len(f) < 8 {
		return 0
	}
	n, _ := strconv.ParseInt(f[7], 10, 64) // minflt, field 10 of the whole line
	return n
}
