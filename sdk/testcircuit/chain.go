package testcircuit

import (
	"math/big"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/frontend"
)

// Chain proves knowledge of S such that N steps of v ← v·(v+S), starting at the
// public X, end at the public Y: N+1 constraints, one private input, N internal
// wires.
type Chain struct {
	X, Y frontend.Variable `gnark:",public"`
	S    frontend.Variable
	N    int `gnark:"-"`
}

// Define implements frontend.Circuit.
func (c *Chain) Define(api frontend.API) error {
	v := c.X
	for i := 0; i < c.N; i++ {
		v = api.Mul(v, api.Add(v, c.S))
	}
	api.AssertIsEqual(v, c.Y)
	return nil
}

// ChainAssignment returns a satisfying assignment of the chain of n steps from x
// with secret s, over BLS12-381's scalar field.
func ChainAssignment(n int, x, s uint64) *Chain {
	var v, sv, t fr.Element
	v.SetUint64(x)
	sv.SetUint64(s)
	for i := 0; i < n; i++ {
		t.Add(&v, &sv)
		v.Mul(&v, &t)
	}
	return &Chain{X: x, Y: v.String(), S: s, N: n}
}

// ChainAssignmentOver is ChainAssignment over the field of modulus field (say
// ecc.BN254.ScalarField()), in big.Int arithmetic, for the curves ChainAssignment's
// fr arithmetic does not cover.
func ChainAssignmentOver(field *big.Int, n int, x, s uint64) *Chain {
	v, sv, t := new(big.Int).SetUint64(x), new(big.Int).SetUint64(s), new(big.Int)
	for i := 0; i < n; i++ {
		t.Add(v, sv)
		v.Mul(v, t).Mod(v, field)
	}
	return &Chain{X: x, Y: v.String(), S: s, N: n}
}
