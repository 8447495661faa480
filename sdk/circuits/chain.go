package circuits

import (
	"math/rand/v2"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/frontend"
)

// chainC is the constant added at every step of the chain.
const chainC = 7

// Chain proves knowledge of X such that Out is the n-th iterate of x ← x² + 7 from X.
// Each step is one multiplication constraint; the final equality with Out is one more,
// so Steps = 2^k − 1 gives exactly 2^k constraints and a domain of 2^k.
type Chain struct {
	X   frontend.Variable
	Out frontend.Variable `gnark:",public"`

	Steps int `gnark:"-"`
}

// Define implements frontend.Circuit.
func (c *Chain) Define(api frontend.API) error {
	x := c.X
	for range c.Steps {
		x = api.Add(api.Mul(x, x), chainC)
	}
	api.AssertIsEqual(x, c.Out)
	return nil
}

// ChainOutput computes the chain natively: the Out that makes x a valid witness.
func ChainOutput(x fr.Element, steps int) fr.Element {
	var c fr.Element
	c.SetUint64(chainC)
	for range steps {
		x.Square(&x).Add(&x, &c)
	}
	return x
}

func newChain(p map[string]int) Spec {
	steps := 1<<p["k"] - 1
	return Spec{
		Name:       "chain",
		Params:     p,
		newCircuit: func() frontend.Circuit { return &Chain{Steps: steps} },
		newAssignment: func(rng *rand.Rand) (frontend.Circuit, error) {
			x := randomElement(rng)
			return &Chain{X: x, Out: ChainOutput(x, steps), Steps: steps}, nil
		},
	}
}
