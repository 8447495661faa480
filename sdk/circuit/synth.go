package circuit

import (
	"fmt"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/witness"

	"github.com/zkhost/zkhost/sdk/solve"
)

// Synthesize solves c's constraint system for the full witness w and returns gnark's
// solution vectors, as gnark's CCS.Solve computes them, word for word (sdk/solve's
// program does the work, gnark's solver the rare systems it does not handle and the
// error message of a witness that fails): W, the value of every wire (len NbWires), and A and B,
// each constraint's left and right linear combination evaluated on W (len NbConstraints;
// the prover pads them with zeros to the domain size). The third vector, C, is not
// returned: for a satisfied system C[i] = A[i]·B[i] for every constraint, so a backend
// computes it.
//
// A witness of the wrong field or shape, or one that does not satisfy the circuit, is an
// error saying which.
//
// threads bounds the solver's goroutines (gnark's solver.WithNbTasks); 0 lets the
// solver use every core. The daemon runs several synthesis workers and gives each a share.
func Synthesize(c *Circuit, w witness.Witness, threads int) (W, A, B []fr.Element, err error) {
	W, A, B = make([]fr.Element, c.NbWires), make([]fr.Element, c.NbConstraints), make([]fr.Element, c.NbConstraints)
	if err := SynthesizeInto(c, w, threads, W, A, B); err != nil {
		return nil, nil, nil, err
	}
	return W, A, B, nil
}

// SynthesizeInto is Synthesize writing W, A and B into the caller's vectors
// (len c.NbWires, c.NbConstraints, c.NbConstraints), which it overwrites. A
// and B may both be nil: W alone is solved (for a compact partition), every
// constraint still checked.
func SynthesizeInto(c *Circuit, w witness.Witness, threads int, W, A, B []fr.Element) error {
	if err := c.needBLS12381("SynthesizeInto"); err != nil {
		return err
	}
	if err := checkWitness(c, w); err != nil {
		return err
	}
	if err := solve.R1CSInto(c.CCS, c.Program(), w, W, A, B, solverOpts(threads)...); err != nil {
		return fmt.Errorf("circuit %s: the witness does not satisfy the circuit: %w", c.Name, err)
	}
	return nil
}

// SynthesizeCompactInto is SynthesizeInto for W alone that also fills W's
// compact bitmaps (sdk.CompactLayout, sdk.CompactWords(c.NbWires) words each)
// and returns how many values are neither 0 nor 1: what a compact partition
// or a compact wire assignment is made of, without reading W again.
func SynthesizeCompactInto(c *Circuit, w witness.Witness, threads int, W []fr.Element, other, bits []uint64) (uint64, error) {
	if err := c.needBLS12381("SynthesizeCompactInto"); err != nil {
		return 0, err
	}
	if err := checkWitness(c, w); err != nil {
		return 0, err
	}
	if len(W) != c.NbWires {
		return 0, fmt.Errorf("circuit %s: W holds %d values, want %d", c.Name, len(W), c.NbWires)
	}
	n, err := solve.CompactInto(c.CCS, c.Program(), w, W, other, bits, solverOpts(threads)...)
	if err != nil {
		return 0, fmt.Errorf("circuit %s: the witness does not satisfy the circuit: %w", c.Name, err)
	}
	return n, nil
}

// checkWitness checks that w has c's field and shape.
func checkWitness(c *Circuit, w witness.Witness) error {
	if w == nil {
		return fmt.Errorf("circuit %s: nil witness", c.Name)
	}
	v, ok := w.Vector().(fr.Vector)
	if !ok {
		return fmt.Errorf("circuit %s: witness holds %T, want BLS12-381 scalars (fr.Vector)", c.Name, w.Vector())
	}
	if want := c.NbPublic - 1 + c.NbSecret; len(v) != want {
		return fmt.Errorf("circuit %s: witness has %d values, want %d (%d public, %d secret)", c.Name, len(v), want, c.NbPublic-1, c.NbSecret)
	}
	pub, err := w.Public()
	if err != nil {
		return fmt.Errorf("circuit %s: witness: %w", c.Name, err)
	}
	if got, want := len(pub.Vector().(fr.Vector)), c.NbPublic-1; got != want {
		return fmt.Errorf("circuit %s: witness has %d public values, want %d", c.Name, got, want)
	}
	return nil
}
