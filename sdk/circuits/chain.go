package circuits

import (
	"fmt"
	"math/rand/v2"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	bnfr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/frontend"

	"github.com/zkhost/zkhost/sdk/curve"
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

// ChainOutput computes the chain natively over BLS12-381: the Out that makes x a
// valid witness.
func ChainOutput(x fr.Element, steps int) fr.Element { return chainOutput[fr.Element](x, steps) }

// chainOutput is ChainOutput over any curve's scalars.
func chainOutput[S any, PS curve.Scalar[S]](x S, steps int) S {
	var c S
	PS(&c).SetUint64(chainC)
	for range steps {
		PS(&x).Square(&x)
		PS(&x).Add(&x, &c)
	}
	return x
}

// chainAssignment draws a random x and its chain's output, scalars S of the curve.
func chainAssignment[S any, PS curve.Scalar[S]](rng *rand.Rand, steps int) *Chain {
	x := randomScalar[S, PS](rng)
	return &Chain{X: x, Out: chainOutput[S, PS](x, steps), Steps: steps}
}

func newChain(p map[string]int) Spec {
	steps := 1<<p["k"] - 1
	return Spec{
		Name:       "chain",
		Params:     p,
		newCircuit: func() frontend.Circuit { return &Chain{Steps: steps} },
		newAssignment: func(rng *rand.Rand, curve ecc.ID) (frontend.Circuit, error) {
			switch curve {
			case ecc.BLS12_381:
				return chainAssignment[fr.Element](rng, steps), nil
			case ecc.BN254:
				return chainAssignment[bnfr.Element](rng, steps), nil
			}
			return nil, fmt.Errorf("circuits: chain: no assignment over %s", curve)
		},
	}
}
