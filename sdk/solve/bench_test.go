package solve

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	cs "github.com/consensys/gnark/constraint/bls12-381"
	"golang.org/x/sync/errgroup"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/witness"
	csolver "github.com/consensys/gnark/constraint/solver"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/circuits"
	"github.com/zkhost/zkhost/sdk/procfs"
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
		p, w := programAndWitness(b, ccs, spec)
		n := float64(p.NbConstraints())
		for _, threads := range []int{1, 4} {
			opt := csolver.WithNbTasks(threads)
			b.Run(fmt.Sprintf("%s/gnark/threads%d", spec.ID(), threads), func(b *testing.B) {
				benchSolves(b, n, func() error { _, err := ccs.Solve(w, opt); return err })
			})
			W := make([]fr.Element, p.NbWires())
			A := make([]fr.Element, p.NbConstraints())
			B := make([]fr.Element, p.NbConstraints())
			b.Run(fmt.Sprintf("%s/fast/threads%d", spec.ID(), threads), func(b *testing.B) {
				benchSolves(b, n, func() error { return p.Solve(w.Vector().(fr.Vector), W, A, B, opt) })
			})
		}
	}
}

// processCPU is the CPU time the process has used, user and system, every
// thread (the garbage collector's included).
func processCPU() time.Duration {
	cpu, err := procfs.CPUTime()
	if err != nil {
		panic(err)
	}
	return cpu
}

// benchSolves runs solve b.N times and reports per constraint of n.
func benchSolves(b *testing.B, n float64, solve func() error) {
	cpu := processCPU()
	for b.Loop() {
		if err := solve(); err != nil {
			b.Fatal(err)
		}
	}
	report(b, cpu, n)
}

// report adds wall and CPU nanoseconds per constraint to b's results: on a
// shared machine the CPU time is the steadier figure.
func report(b *testing.B, cpuStart time.Duration, constraints float64) {
	per := float64(b.N) * constraints
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/per, "ns/constraint")
	b.ReportMetric(float64((processCPU()-cpuStart).Nanoseconds())/per, "cpu-ns/constraint")
}

// BenchmarkSolveKeySet compares gnark's Solve with R1CS (the fast solver, as
// the host calls it for a full partition: fresh W, A and B each time) and
// with W alone packed compactly (fastw, the host's compact partition) on one
// circuit of a key
// directory, as scripts/gpu-feed.sh runs it: ZKHOST_SOLVE_KEYS names NAME.ccs
// beside its NAME.json (a key set from `zkhost keygen`); unset, it runs
// sha256 with 8 blocks compiled here. "one" is one solve on one thread;
// "all" is GOMAXPROCS solves at once, a thread each, as a host under a
// backlog runs them (Mconstraints/s is their sum).
//
//	ZKHOST_SOLVE_KEYS=/keys/sha256-b134.ccs go test -run '^$' -bench SolveKeySet ./solve/
func BenchmarkSolveKeySet(b *testing.B) {
	ccs, spec := keySetCircuit(b)
	p, w := programAndWitness(b, ccs, spec)
	n := float64(p.NbConstraints())
	v := w.Vector().(fr.Vector)
	wPool := sync.Pool{New: func() any { w := make([]fr.Element, p.NbWires()); return &w }}
	b.Logf("%s: %d constraints, %d instructions in %d levels, parallel share %.2f",
		spec.ID(), p.NbConstraints(), p.NbInstructions(), p.NbLevels(), p.ParallelShare())
	// What the host does for a compact partition: W alone into a reused
	// vector with its bitmaps, then its other values gathered, as the daemon
	// and a synthesis host do.
	fastw := func() error {
		wp := wPool.Get().(*[]fr.Element)
		defer wPool.Put(wp)
		words := sdk.CompactWords(uint64(len(*wp)))
		other, bits := make([]uint64, words), make([]uint64, words)
		n, err := p.SolveCompact(v, *wp, other, bits, csolver.WithNbTasks(1))
		if err != nil {
			return err
		}
		return sdk.GatherOther(*wp, other, make([]fr.Element, n), 1)
	}
	// The host's W vectors and the solver's working memory are reused from
	// one partition to the next: solve once before timing, so that a run of
	// one iteration (a large circuit on the GPU machine) does not time the
	// page faults of a first allocation as solving.
	if err := fastw(); err != nil {
		b.Fatal(err)
	}
	solvers := []struct {
		name  string
		solve func() error
	}{
		{"gnark", func() error { _, err := ccs.Solve(w, csolver.WithNbTasks(1)); return err }},
		{"fast", func() error { _, _, _, err := R1CS(ccs, p, w, csolver.WithNbTasks(1)); return err }},
		{"fastw", fastw},
	}
	for _, s := range solvers {
		b.Run(spec.ID()+"/one/"+s.name, func(b *testing.B) { benchSolves(b, n, s.solve) })
	}
	par := runtime.GOMAXPROCS(0)
	for _, s := range solvers {
		b.Run(fmt.Sprintf("%s/all%d/%s", spec.ID(), par, s.name), func(b *testing.B) {
			for b.Loop() {
				var g errgroup.Group
				for range par {
					g.Go(s.solve)
				}
				if err := g.Wait(); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)*float64(par)*n/b.Elapsed().Seconds()/1e6, "Mconstraints/s")
		})
	}
}

// programAndWitness compiles ccs for the fast solver and returns it with
// spec's first partition's witness, the one every benchmark solves.
func programAndWitness(b *testing.B, ccs *cs.R1CS, spec circuits.Spec) (*Program, witness.Witness) {
	b.Helper()
	p, err := Compile(ccs)
	if err != nil {
		b.Fatal(err)
	}
	w, err := spec.Witness(0, 1)
	if err != nil {
		b.Fatal(err)
	}
	return p, w
}

// keySetCircuit reads the constraint system ZKHOST_SOLVE_KEYS names and the
// registry circuit its NAME.json records, or compiles the registry circuit
// whose ID ZKHOST_SOLVE_CIRCUIT gives (chain-k18, as key files are named),
// by default sha256-b8.
func keySetCircuit(b *testing.B) (*cs.R1CS, circuits.Spec) {
	path := os.Getenv("ZKHOST_SOLVE_KEYS")
	if path == "" {
		id := cmp.Or(os.Getenv("ZKHOST_SOLVE_CIRCUIT"), "sha256-b8")
		spec, err := circuits.FromID(id)
		if err != nil {
			b.Fatalf("ZKHOST_SOLVE_CIRCUIT: %v", err)
		}
		return compileCircuit(b, spec.Circuit()), spec
	}
	meta, err := os.ReadFile(strings.TrimSuffix(path, ".ccs") + ".json")
	if err != nil {
		b.Fatal(err)
	}
	var m struct {
		Circuit string         `json:"circuit"`
		Params  map[string]int `json:"params"`
	}
	if err := json.Unmarshal(meta, &m); err != nil {
		b.Fatal(err)
	}
	spec, err := circuits.Lookup(m.Circuit, m.Params)
	if err != nil {
		b.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	ccs := new(cs.R1CS) // not NewR1CS: its decoder panics on a preallocated system
	if _, err := ccs.ReadFrom(bufio.NewReaderSize(f, 1<<20)); err != nil {
		b.Fatalf("%s: %v", path, err)
	}
	return ccs, spec
}
