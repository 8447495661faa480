package solve

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	"github.com/consensys/gnark/frontend/cs/r1cs"

	csolver "github.com/consensys/gnark/constraint/solver"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/std/math/cmp"
)

// randomCircuit is a circuit generated from a byte program: each op takes
// two earlier values (inputs or results) and appends a result, with gnark's
// arithmetic, its gadgets and hints, a user's hint and assertions. Its
// witness comes from the same bytes, so most programs are satisfied and some
// are not (a division by zero, a decomposition of a value too wide): the
// solvers must agree either way.
type randomCircuit struct {
	In  [4]frontend.Variable
	Pub frontend.Variable `gnark:",public"`

	prog []byte
}

const randomOps = 15

func (c *randomCircuit) Define(api frontend.API) error {
	vals := []frontend.Variable{c.In[0], c.In[1], c.In[2], c.In[3], c.Pub}
	pick := func(b byte) frontend.Variable { return vals[int(b)%len(vals)] }
	for i := 0; i+2 < len(c.prog); i += 3 {
		x, y := pick(c.prog[i+1]), pick(c.prog[i+2])
		k := int(c.prog[i+2]) - 128 // a small constant, negative too
		var r frontend.Variable
		switch c.prog[i] % randomOps {
		case 0:
			r = api.Mul(x, y)
		case 1:
			r = api.Add(x, y, k)
		case 2:
			r = api.Sub(x, api.Mul(k, y))
		case 3:
			r = api.Div(x, y)
		case 4:
			r = api.Inverse(api.Add(x, 1))
		case 5:
			// Wide enough for the small inputs, too narrow for products.
			b := api.ToBinary(x, 9)
			r = api.Add(api.FromBinary(b...), api.Mul(b[0], k))
		case 6:
			r = api.IsZero(api.Sub(x, y))
		case 7:
			r = api.Select(api.ToBinary(c.In[0], 9)[1], x, y)
		case 8:
			h, err := api.Compiler().NewHint(cube, 1, x)
			if err != nil {
				return err
			}
			api.AssertIsEqual(h[0], api.Add(api.Mul(x, x, x), 1))
			r = h[0]
		case 9:
			r = cmp.IsLess(api, api.ToBinary(c.In[1], 9)[0], api.ToBinary(c.In[2], 9)[0])
		case 10:
			r = api.Mul(api.Add(x, k), api.Sub(y, k), 3)
		case 11:
			api.AssertIsBoolean(api.IsZero(x))
			r = api.Neg(x)
		case 12:
			r = api.Lookup2(api.ToBinary(c.In[3], 9)[0], api.ToBinary(c.In[3], 9)[1], x, y, k, 2)
		case 13:
			api.AssertIsDifferent(api.Add(x, 1), 0)
			r = api.Mul(x, x)
		case 14:
			// Coefficients at the edge of what the solver sums as
			// integers (2^32 and -2^31), so that sums and products
			// cross 2^31, 2^62 and 2^63.
			r = api.Mul(api.Add(api.Mul(x, 1<<32), api.Mul(y, -(1<<31)), k<<20), api.Add(x, k))
		}
		vals = append(vals, r)
	}
	api.AssertIsEqual(api.Mul(c.Pub, vals[len(vals)-1]), api.Mul(vals[len(vals)-1], c.Pub))
	return nil
}

// checkRandom compiles the circuit of prog, solves the witness of inputs with
// both solvers, and fails t unless they agree. It reports whether gnark
// compiled the program and whether the witness satisfied it.
func checkRandom(t *testing.T, prog []byte, inputs [5]int64, threads int) (compiled, satisfied bool) {
	if len(prog) > 3*40 {
		prog = prog[:3*40]
	}
	c, err := frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, &randomCircuit{prog: prog})
	if err != nil {
		// gnark refuses some programs (a decomposition of a constant too wide
		// for it): they are not circuits, and there is nothing to solve.
		return
	}
	ccs := c.(*cs.R1CS)
	p, err := Compile(ccs)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	a := &randomCircuit{Pub: inputs[4]}
	for i := range a.In {
		a.In[i] = inputs[i]
	}
	gerr, _ := both(t, ccs, p, fullWitness(t, a), csolver.WithHints(cube), csolver.WithNbTasks(threads))
	return true, gerr == nil
}

// TestRandomCircuits runs a few hundred random programs through both solvers
// (the fuzz test's generator, with fixed seeds, in every test run).
func TestRandomCircuits(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	n := 300
	if testing.Short() {
		n = 50
	}
	circuits, satisfied := 0, 0
	for range n {
		prog := make([]byte, 3*(1+rng.IntN(30)))
		for i := range prog {
			prog[i] = byte(rng.Uint32())
		}
		var in [5]int64
		for i := range in {
			// Mostly values the program's 9-bit decompositions take.
			switch rng.IntN(14) {
			case 0, 1, 2:
				in[i] = int64(rng.IntN(2))
			case 10:
				in[i] = -int64(rng.IntN(256))
			case 11:
				in[i] = rng.Int64()
			case 12:
				// Beside ±2^31, where a wire stops being a small integer.
				in[i] = int64(1)<<31 - 2 + int64(rng.IntN(4))
				if rng.IntN(2) == 0 {
					in[i] = -in[i]
				}
			case 13:
				// Beside ±2^62 and the ends of an int64.
				in[i] = []int64{1<<62 - 1, 1 << 62, -1 << 62, math.MaxInt64, math.MinInt64}[rng.IntN(5)]
			default:
				in[i] = int64(rng.IntN(256))
			}
		}
		compiled, ok := checkRandom(t, prog, in, 1+rng.IntN(3))
		if compiled {
			circuits++
		}
		if ok {
			satisfied++
		}
	}
	// Both outcomes must be common, or the generator tests one path only.
	if satisfied < circuits/5 || satisfied > circuits*4/5 {
		t.Fatalf("%d of %d random circuits satisfied: the generator needs a better mix", satisfied, circuits)
	}
	t.Logf("%d of %d random circuits satisfied", satisfied, circuits)
}

func FuzzMatchesGnark(f *testing.F) {
	f.Add([]byte{0, 1, 2, 5, 0, 0, 8, 5, 1}, int64(3), int64(4), int64(5), int64(6), int64(7), uint8(1))
	f.Add([]byte{3, 0, 1, 4, 2, 0, 6, 0, 0}, int64(0), int64(0), int64(1), int64(2), int64(0), uint8(2))
	f.Add([]byte{5, 2, 200, 12, 0, 1, 9, 1, 1, 7, 3, 4}, int64(300), int64(1), int64(255), int64(-9), int64(1), uint8(3))
	f.Add([]byte{14, 0, 1, 14, 5, 250, 0, 6, 6}, int64(1<<31-1), int64(-(1 << 31)), int64(1<<30), int64(math.MaxInt64), int64(1<<62), uint8(0))
	f.Fuzz(func(t *testing.T, prog []byte, a, b, c, d, e int64, threads uint8) {
		checkRandom(t, prog, [5]int64{a, b, c, d, e}, 1+int(threads%4))
	})
}
