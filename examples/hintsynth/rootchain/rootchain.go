// Package rootchain is the circuit of the hintsynth example: a user's own gnark
// circuit whose solver needs a hint zkhost does not know.
//
// The circuit proves knowledge of X whose Steps-fold fifth power is the public Y:
// it walks down from Y by fifth roots, each computed by the custom hint
// FifthRoot and constrained by raising it back to the fifth power (three
// multiplications), then checks the last root is X and decomposes X into bits
// (as circuits that range-check their inputs do). gnark's solver cannot find a
// fifth root by itself, so the host's built-in solver fails with "missing
// hint"; a synthesizer plugin that registers FifthRoot (the hintsynth binary)
// solves it.
//
// Fifth roots rather than cube roots: 3 divides r−1 for BLS12-381's scalar
// field, so cubing is three-to-one and a hint's cube root need not be the one
// the chain came from; 5 does not divide r−1, so x ↦ x⁵ is a bijection and every
// element has exactly one fifth root.
package rootchain

import (
	"errors"
	"math/big"
	"math/rand/v2"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/frontend"
)

// Circuit is the rootchain circuit with Steps fifth roots.
type Circuit struct {
	Steps int `gnark:"-"`

	X frontend.Variable
	Y frontend.Variable `gnark:",public"`
}

// Define walks from Y down Steps fifth roots to X.
func (c *Circuit) Define(api frontend.API) error {
	v := c.Y
	for range c.Steps {
		r, err := api.Compiler().NewHint(FifthRoot, 1, v)
		if err != nil {
			return err
		}
		r2 := api.Mul(r[0], r[0])
		r4 := api.Mul(r2, r2)
		api.AssertIsEqual(api.Mul(r4, r[0]), v)
		v = r[0]
	}
	api.AssertIsEqual(v, c.X)
	api.ToBinary(c.X, fr.Bits)
	return nil
}

// fifthRootExp is 5⁻¹ mod (r−1): y^fifthRootExp is the fifth root of y.
var fifthRootExp = func() *big.Int {
	r := fr.Modulus()
	rMinus1 := new(big.Int).Sub(r, big.NewInt(1))
	return new(big.Int).ModInverse(big.NewInt(5), rMinus1)
}()

// FifthRoot is the custom hint: outputs[0] = inputs[0]^(1/5) in BLS12-381's
// scalar field. gnark names a hint by its function's full name, so the
// synthesizer passes this very function to its solver
// (solver.WithHints(FifthRoot)). It is deliberately not registered globally
// (solver.RegisterHint): the zkhost daemon, which the example's test runs in
// its own process, must not know it.
func FifthRoot(field *big.Int, inputs []*big.Int, outputs []*big.Int) error {
	if field.Cmp(fr.Modulus()) != 0 {
		return errors.New("rootchain: FifthRoot works in BLS12-381's scalar field only")
	}
	if len(inputs) != 1 || len(outputs) != 1 {
		return errors.New("rootchain: FifthRoot takes one input and gives one output")
	}
	outputs[0].Exp(inputs[0], fifthRootExp, field)
	return nil
}

// Assignment returns a valid assignment: a random X from rng and Y = X^(5^steps).
func Assignment(steps int, rng *rand.Rand) *Circuit {
	var x fr.Element
	x.SetUint64(rng.Uint64())
	x.Mul(&x, new(fr.Element).SetUint64(rng.Uint64()|1))
	y := x
	for range steps {
		var y2, y4 fr.Element
		y2.Square(&y)
		y4.Square(&y2)
		y.Mul(&y4, &y)
	}
	return &Circuit{Steps: steps, X: x, Y: y}
}

// Witness returns the full witness of a valid assignment, as a client submits it.
func Witness(steps int, rng *rand.Rand) (witness.Witness, error) {
	return frontend.NewWitness(Assignment(steps, rng), ecc.BLS12_381.ScalarField())
}
