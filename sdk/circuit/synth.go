package circuit

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/witness"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	"github.com/consensys/gnark/constraint/solver"
)

// Synthesize solves c's constraint system for the full witness w (gnark's CCS.Solve) and
// returns gnark's solution vectors: W, the value of every wire (len NbWires), and A and B,
// each constraint's left and right linear combination evaluated on W (len NbConstraints;
// the prover pads them with zeros to the domain size). The third vector, C, is not
// returned: for a satisfied system C[i] = A[i]·B[i] for every constraint, so a backend
// computes it.
//
// A witness of the wrong field or shape, or one that does not satisfy the circuit, is an
// error saying which.
//
// threads bounds the solver's goroutines (gnark's solver.WithNbTasks); 0 lets gnark
// use every core. The daemon runs several synthesis workers and gives each a share.
func Synthesize(c *Circuit, w witness.Witness, threads int) (W, A, B []fr.Element, err error) {
	var opts []solver.Option
	if threads > 0 {
		opts = append(opts, solver.WithNbTasks(threads))
	}
	sol, err := solve(c, w, opts...)
	if err != nil {
		return nil, nil, nil, err
	}
	return sol.W, sol.A, sol.B, nil
}

// solve runs gnark's solver on w and returns the whole solution.
func solve(c *Circuit, w witness.Witness, opts ...solver.Option) (sol *cs.R1CSSolution, err error) {
	if w == nil {
		return nil, fmt.Errorf("circuit %s: nil witness", c.Name)
	}
	v, ok := w.Vector().(fr.Vector)
	if !ok {
		return nil, fmt.Errorf("circuit %s: witness holds %T, want BLS12-381 scalars (fr.Vector)", c.Name, w.Vector())
	}
	if want := c.NbPublic - 1 + c.NbSecret; len(v) != want {
		return nil, fmt.Errorf("circuit %s: witness has %d values, want %d (%d public, %d secret)", c.Name, len(v), want, c.NbPublic-1, c.NbSecret)
	}
	pub, err := w.Public()
	if err != nil {
		return nil, fmt.Errorf("circuit %s: witness: %w", c.Name, err)
	}
	if got, want := len(pub.Vector().(fr.Vector)), c.NbPublic-1; got != want {
		return nil, fmt.Errorf("circuit %s: witness has %d public values, want %d", c.Name, got, want)
	}
	defer func() {
		if r := recover(); r != nil {
			sol, err = nil, fmt.Errorf("circuit %s: solver failed: %v", c.Name, r)
		}
	}()
	res, err := c.CCS.Solve(w, opts...)
	if err != nil {
		return nil, fmt.Errorf("circuit %s: the witness does not satisfy the circuit: %w", c.Name, err)
	}
	sol, ok = res.(*cs.R1CSSolution)
	if !ok {
		return nil, fmt.Errorf("circuit %s: solver returned %T, want an R1CS solution", c.Name, res)
	}
	return sol, nil
}
