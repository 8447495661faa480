package solve

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	csolver "github.com/consensys/gnark/constraint/solver"

	"github.com/zkhost/zkhost/sdk/circuits"
)

// BenchmarkSolve compares gnark's R1CS Solve with the program's on the
// example circuits, one thread and four; ns/constraint is the figure to read.
// go test -run '^$' -bench Solve ./solve/
func BenchmarkSolve(b *testing.B) {
	for _, tc := range []struct {
		name   string
		params map[string]int
	}{
		{"sha256", map[string]int{"b": 8}},
		{"merkle", map[string]int{"k": 16, "d": 20}},
		{"chain", map[string]int{"k": 18}},
	} {
		spec, err := circuits.Lookup(tc.name, tc.params)
		if err != nil {
			b.Fatal(err)
		}
		ccs := compileCircuit(b, spec.Circuit())
		p, err := Compile(ccs)
		if err != nil {
			b.Fatal(err)
		}
		w, err := spec.Witness(0, 1)
		if err != nil {
			b.Fatal(err)
		}
		n := float64(p.NbConstraints())
		for _, threads := range []int{1, 4} {
			opt := csolver.WithNbTasks(threads)
			b.Run(fmt.Sprintf("%s/gnark/threads%d", spec.ID(), threads), func(b *testing.B) {
				cpu := processCPU()
				for b.Loop() {
					if _, err := ccs.Solve(w, opt); err != nil {
						b.Fatal(err)
					}
				}
				report(b, cpu, n)
			})
			b.Run(fmt.Sprintf("%s/fast/threads%d", spec.ID(), threads), func(b *testing.B) {
				W := make([]fr.Element, p.NbWires())
				A := make([]fr.Element, p.NbConstraints())
				B := make([]fr.Element, p.NbConstraints())
				cpu := processCPU()
				for b.Loop() {
					if err := p.Solve(w.Vector().(fr.Vector), W, A, B, opt); err != nil {
						b.Fatal(err)
					}
				}
				report(b, cpu, n)
			})
		}
	}
}

// processCPU is the CPU time the process has used, user and system, every
// thread (the garbage collector's included).
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		panic(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// report adds wall and CPU nanoseconds per constraint to b's results: on a
// shared machine the CPU time is the steadier figure.
func report(b *testing.B, cpuStart time.Duration, constraints float64) {
	per := float64(b.N) * constraints
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/per, "ns/constraint")
	b.ReportMetric(float64((processCPU()-cpuStart).Nanoseconds())/per, "cpu-ns/constraint")
}
