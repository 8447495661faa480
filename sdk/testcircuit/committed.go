package testcircuit

import "github.com/consensys/gnark/frontend"

// Committed is Y = X·X with a commitment to X (gnark's frontend.Committer):
// a circuit zkhost's Groth16 path refuses, as its keys and proofs carry no
// commitments. The tests of every step that must refuse it (the solver's
// compile, keygen, the development setup) compile this one.
type Committed struct {
	X frontend.Variable
	Y frontend.Variable `gnark:",public"`
}

// Define commits to X, asserts the commitment nonzero and Y = X·X.
func (c *Committed) Define(api frontend.API) error {
	cm, err := api.(frontend.Committer).Commit(c.X)
	if err != nil {
		return err
	}
	api.AssertIsDifferent(cm, 0)
	api.AssertIsEqual(api.Mul(c.X, c.X), c.Y)
	return nil
}
