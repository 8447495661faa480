package solve

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/consensys/gnark/frontend"

	"github.com/zkhost/zkhost/sdk/circuits"
)

// linearRounds is a hash-like circuit whose long linear expressions follow a
// recurrence, as Poseidon2's partial rounds do, and some that do not: a state
// of Width elements mixed by a random matrix each round, an S-box (x⁵ or x²)
// on element 0 only, random round constants, and now and then a term added out
// of turn, so that combinations leave residuals or fail.
type linearRounds struct {
	In  [3]frontend.Variable
	Out frontend.Variable `gnark:",public"`

	width, rounds int
	seed          uint64
}

func (c *linearRounds) Define(api frontend.API) error {
	rng := rand.New(rand.NewPCG(c.seed, 7))
	state := make([]frontend.Variable, c.width)
	for i := range state {
		state[i] = c.In[i%len(c.In)]
	}
	m := make([][]int, c.width)
	for i := range m {
		m[i] = make([]int, c.width)
		for j := range m[i] {
			m[i][j] = 1 + rng.IntN(5)
		}
	}
	for r := 0; r < c.rounds; r++ {
		x := api.Add(state[0], rng.IntN(1000))
		x2 := api.Mul(x, x)
		if rng.IntN(2) == 0 {
			state[0] = api.Mul(x2, x2, x)
		} else {
			state[0] = x2
		}
		if rng.IntN(8) == 0 {
			// A term out of turn: the next expressions carry In[1] anew.
			state[c.width-1] = api.Add(state[c.width-1], api.Mul(c.In[1], rng.IntN(9)+1))
		}
		next := make([]frontend.Variable, c.width)
		for i := range next {
			acc := frontend.Variable(0)
			for j := range state {
				acc = api.Add(acc, api.Mul(state[j], m[i][j]))
			}
			next[i] = acc
		}
		state = next
	}
	// Out must differ from the result: any output but one satisfies the
	// circuit, so the witness needs no native model of it.
	api.AssertIsDifferent(c.Out, api.Add(state[0], state[1], state[2:]...))
	return nil
}

// TestLongExpressionsMatchGnark solves circuits of long recurrent linear
// expressions (widths 2 to 4, random matrices and constants) with both solvers,
// and checks that the program evaluated most of them from earlier ones where
// two bases suffice (width 2, as Poseidon2's compression in merkle).
func TestLongExpressionsMatchGnark(t *testing.T) {
	for _, width := range []int{2, 3, 4} {
		for seed := uint64(1); seed <= 3; seed++ {
			t.Run(fmt.Sprintf("width%d/seed%d", width, seed), func(t *testing.T) {
				circ := &linearRounds{width: width, rounds: 60, seed: seed}
				ccs := compileCircuit(t, circ)
				p, err := Compile(ccs)
				if err != nil {
					t.Fatal(err)
				}
				based := 0
				for _, c := range p.combos {
					if c.base {
						based++
					}
				}
				// Width 2 leaves one element unconstrained: each expression is a
				// combination of the two before it. Wider states need more
				// bases than the search tries, and are only checked for equality.
				if width == 2 && (len(p.combos) == 0 || based < len(p.combos)/2) {
					t.Fatalf("%d of %d long expressions evaluated from earlier ones; want most", based, len(p.combos))
				}
				for _, in := range [][3]frontend.Variable{{3, 5, 7}, {0, 1, 0}, {11, -13, 17}} {
					a := &linearRounds{In: in, Out: 12345, width: width, rounds: 60, seed: seed}
					if err, _ := both(t, ccs, p, fullWitness(t, a)); err != nil {
						t.Fatalf("inputs %v: %v", in, err)
					}
				}
			})
		}
	}
}

// BenchmarkCompile times Compile on a merkle circuit, whose long expressions
// the recurrence search serves (ns per constraint is the figure to read).
func BenchmarkCompile(b *testing.B) {
	spec, err := circuits.Lookup("merkle", map[string]int{"k": 16, "d": 20})
	if err != nil {
		b.Fatal(err)
	}
	ccs := compileCircuit(b, spec.Circuit())
	for b.Loop() {
		if _, err := Compile(ccs); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(ccs.GetNbConstraints()), "ns/constraint")
}

// TestCompileLongBatched: compiling the long expressions in batches (of the
// default size, and of 7, which cuts them at odd places) gives the program
// one expression at a time gives, combination for combination.
func TestCompileLongBatched(t *testing.T) {
	spec, err := circuits.Lookup("merkle", map[string]int{"k": 4, "d": 6})
	if err != nil {
		t.Fatal(err)
	}
	ccs := compileCircuit(t, spec.Circuit())
	old := longBatch
	defer func() { longBatch = old }()
	compileWith := func(batch int) *Program {
		longBatch = batch
		p, err := Compile(ccs)
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	single := compileWith(1)
	bases := 0
	for _, c := range single.combos {
		if c.base {
			bases++
		}
	}
	if len(single.combos) < 3*7 || bases == 0 {
		t.Fatalf("%d long expressions, %d from bases: too few to compare batches", len(single.combos), bases)
	}
	for _, batch := range []int{7, old} {
		p := compileWith(batch)
		if !slices.Equal(p.combos, single.combos) || !slices.Equal(p.extra, single.extra) ||
			!slices.Equal(p.coeffs, single.coeffs) || p.nbSlots != single.nbSlots || !slices.Equal(p.ops, single.ops) {
			t.Fatalf("batches of %d give another program than one expression at a time", batch)
		}
	}
}
