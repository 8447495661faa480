package circuit

import (
	"fmt"

	blsfr "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	bnfr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	cs_bn254 "github.com/consensys/gnark/constraint/bn254"
	"github.com/consensys/gnark/constraint/solver"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyconv"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/refprover"
	"github.com/zkhost/zkhost/sdk/solvebn254"
)

// The circuit's curve is a parameter of one synthesis path: the functions here take
// a Circuit of either curve and dispatch once, on its constraint system's type, to
// code generic over the curve's scalars. Each curve has its fast solver (sdk/solve,
// sdk/solvebn254: one source, generated), and every encoding of an input (a gnark
// witness, a full or compact wire assignment, a circom witness) is read by one
// function generic over the scalars.

// systemOf returns the curve-independent part of a gnark R1CS of either curve.
func systemOf(ccs constraint.ConstraintSystem) *constraint.System {
	switch r := ccs.(type) {
	case *cs.R1CS:
		return &r.System
	case *cs_bn254.R1CS:
		return &r.System
	}
	panic(fmt.Sprintf("circuit: a constraint system of type %T", ccs)) // readCCS makes no other
}

// SynthesizeInputRaw is SynthesizeInputInto for a circuit of any curve, into raw
// memory: W, A and B are the bytes of c.NbWires, c.NbConstraints and
// c.NbConstraints 32-byte scalars of the circuit's curve, 8-byte aligned (a
// partition file's sections, shm.Store.WriteRaw). It returns the full witness, whose
// public part a proof is verified against.
func SynthesizeInputRaw(c *Circuit, data []byte, threads int, W, A, B []byte) (witness.Witness, error) {
	switch r := c.System.(type) {
	case *cs.R1CS:
		w, a, b, err := views[blsfr.Element](W, A, B)
		if err != nil {
			return nil, err
		}
		return SynthesizeInputInto(c, data, threads, w, a, b)
	case *cs_bn254.R1CS:
		w, a, b, err := views[bnfr.Element](W, A, B)
		if err != nil {
			return nil, err
		}
		return synthesizeGnark(c, &r.System, r.Coefficients, func(full witness.Witness, W, A, B []bnfr.Element, opts ...solver.Option) error {
			return solvebn254.R1CSInto(r, c.bn254Program(), full, W, A, B, opts...)
		}, data, threads, w, a, b)
	}
	return nil, fmt.Errorf("circuit %s: no synthesis for a constraint system of type %T", c.Name, c.System)
}

// synthesizeGnark synthesizes one partition of a circuit whose scalars are S:
// a wire assignment (full, compact or a circom .wtns) is parsed into W and evaluated
// into A and B, every constraint checked; a gnark witness is solved into them
// by solveInto (the curve's sdk/solve, which runs gnark's solver on the systems
// it does not handle).
func synthesizeGnark[S any, PS curve.Scalar[S]](c *Circuit, sys *constraint.System, coeffs []S,
	solveInto func(full witness.Witness, W, A, B []S, opts ...solver.Option) error,
	data []byte, threads int, W, A, B []S) (witness.Witness, error) {
	if len(W) != c.NbWires || len(A) != c.NbConstraints || len(B) != c.NbConstraints {
		return nil, fmt.Errorf("circuit %s: destination lengths W %d, A %d, B %d; want %d, %d, %d",
			c.Name, len(W), len(A), len(B), c.NbWires, c.NbConstraints, c.NbConstraints)
	}
	if IsAssignment(data) {
		if err := parseAssignmentInto[S, PS](data, c, threads, W); err != nil {
			return nil, fmt.Errorf("wire assignment %w", err)
		}
		if err := evaluate[S, PS](c, sys, coeffs, W, A, B, threads); err != nil {
			return nil, err
		}
		return inputsWitness[S, PS](c, W[1:c.NbPublic+c.NbSecret])
	}
	full, err := ParseWitness(data, c)
	if err != nil {
		return nil, fmt.Errorf("witness %w", err)
	}
	if err := c.CheckSolvable(); err != nil {
		return nil, err
	}
	if err := solveInto(full, W, A, B, solverOpts(threads)...); err != nil {
		return nil, fmt.Errorf("circuit %s: the witness does not satisfy the circuit: %w", c.Name, err)
	}
	return full, nil
}

// views views W, A and B, raw memory, as scalars S (refprover.ScalarsOf).
func views[S any](W, A, B []byte) (w, a, b []S, err error) {
	if w, err = refprover.ScalarsOf[S](W); err == nil {
		if a, err = refprover.ScalarsOf[S](A); err == nil {
			b, err = refprover.ScalarsOf[S](B)
		}
	}
	return w, a, b, err
}

// systemAs returns c's constraint system and its coefficient table as scalars S,
// or an error naming both curves when S is not c's curve's scalar.
func systemAs[S any](c *Circuit) (*constraint.System, []S, error) {
	switch r := c.System.(type) {
	case *cs.R1CS:
		if coeffs, ok := any(r.Coefficients).([]S); ok {
			return &r.System, coeffs, nil
		}
	case *cs_bn254.R1CS:
		if coeffs, ok := any(r.Coefficients).([]S); ok {
			return &r.System, coeffs, nil
		}
	}
	if err := needScalars[S](c, "constraints evaluated"); err != nil {
		return nil, nil, err
	}
	return nil, nil, fmt.Errorf("circuit %s: no evaluation of a constraint system of type %T", c.Name, c.System)
}

// needBLS12381 refuses, naming what, a function whose vectors are BLS12-381
// scalars for a circuit of another curve (SynthesizeInputRaw serves every curve,
// and the generic functions, Evaluate and AssignmentWitness, take its scalars).
func (c *Circuit) needBLS12381(what string) error {
	if c.CCS == nil {
		return fmt.Errorf("circuit %s: %s works on BLS12-381 circuits; this one is %s", c.Name, what, c.curveTitle())
	}
	return nil
}

// GnarkProvingKey returns c's proving key as gnark's, of c's curve, for gnark's own
// groth16.Prove (comparisons, `zkhost prove --gnark`). It shares the key file's points:
// use it while c is open, and never write to it. A key imported from snarkjs is
// refused: its H points are snarkjs's, which gnark's prover does not compute with.
func (c *Circuit) GnarkProvingKey() (groth16.ProvingKey, error) {
	if c.pk.Header().HForm != keyfile.HFormGnark {
		return nil, fmt.Errorf("circuit %s: its key's H points are in %s form, which gnark's prover does not use", c.Name, c.pk.Header().HForm)
	}
	switch c.Curve {
	case sdk.CurveBLS12381:
		return keyconv.ToGnark(c.Key()), nil
	case sdk.CurveBN254:
		k, err := c.pk.BN254()
		if err != nil {
			return nil, err
		}
		return keyconv.ToGnarkBN254(k), nil
	}
	return nil, fmt.Errorf("circuit %s: no gnark key for %s", c.Name, c.Curve)
}
