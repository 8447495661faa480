// Command owncircuit is the README's "Your own circuit" from the user's side: a
// gnark program, importing gnark alone, that compiles a small circuit, runs a
// (development) Groth16 setup and writes what zkhost takes in: the constraint
// system, the proving and verifying keys, two partitions' full witnesses, and the
// same two partitions as wire assignments (docs/assignment.md), solved here where
// the hints live.
//
//	go run ./examples/owncircuit --out DIR
//
// writes DIR/my.{ccs,pk,vk}, DIR/w0.wtns, DIR/w1.wtns, DIR/a0.wires, DIR/a1.wires.
package main

import (
	"encoding/binary"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"
	cs_bls12381 "github.com/consensys/gnark/constraint/bls12-381"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
	"github.com/consensys/gnark/logger"
	"github.com/consensys/gnark/std/math/bits"
)

// Circuit proves knowledge of a 16-bit X with X³ + X + 5 = Y. The bit
// decomposition calls gnark's hint bits.nBits, which zkhost links; a hint of
// your own would be one zkhost does not have (docs/synthesizer.md).
type Circuit struct {
	X frontend.Variable
	Y frontend.Variable `gnark:",public"`
}

// Define declares the circuit's constraints.
func (c *Circuit) Define(api frontend.API) error {
	bits.ToBinary(api, c.X, bits.WithNbDigits(16))
	x3 := api.Mul(c.X, c.X, c.X)
	api.AssertIsEqual(c.Y, api.Add(x3, c.X, 5))
	return nil
}

func main() {
	logger.Disable()
	out := flag.String("out", ".", "directory to write the files into")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "owncircuit:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	ccs, err := frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, &Circuit{})
	if err != nil {
		return err
	}
	pk, vk, err := groth16.Setup(ccs) // a development setup: production keys come from a ceremony
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	for name, w := range map[string]io.WriterTo{"my.ccs": ccs, "my.pk": pk, "my.vk": vk} {
		if err := writeTo(filepath.Join(out, name), w); err != nil {
			return err
		}
	}
	for i, x := range []uint64{3, 7} {
		full, err := frontend.NewWitness(&Circuit{X: x, Y: x*x*x + x + 5}, ecc.BLS12_381.ScalarField())
		if err != nil {
			return err
		}
		b, err := full.MarshalBinary()
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, fmt.Sprintf("w%d.wtns", i)), b, 0o644); err != nil {
			return err
		}
		data, err := solve(ccs, full)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(out, fmt.Sprintf("a%d.wires", i)), data, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("wrote my.ccs, my.pk, my.vk, w0.wtns, w1.wtns, a0.wires, a1.wires in %s (%d constraints)\n", out, ccs.GetNbConstraints())
	return nil
}

// solve solves the circuit for one partition where its hints live and returns
// the partition's wire assignment (docs/assignment.md).
func solve(ccs constraint.ConstraintSystem, fullWitness witness.Witness) ([]byte, error) {
	// gnark's gadgets register their hints when their package is imported (bits.nBits
	// comes with std/math/bits, imported for the circuit); a hint of your own is
	// passed here: ccs.Solve(fullWitness, solver.WithHints(yourHint)).
	sol, err := ccs.Solve(fullWitness)
	if err != nil {
		return nil, err
	}
	W := sol.(*cs_bls12381.R1CSSolution).W
	// The 20-byte header, then every wire (sdk/circuit's MarshalAssignment does the same).
	data := []byte("ZKWA")
	for _, v := range []int{1, ccs.GetNbPublicVariables(), ccs.GetNbSecretVariables(), len(W)} {
		data = binary.BigEndian.AppendUint32(data, uint32(v))
	}
	for i := range W {
		b := W[i].Bytes()
		data = append(data, b[:]...)
	}
	return data, nil
}

// writeTo writes w to a new file at path. Deliberately parallel to
// sdk/testcircuit's writeTo: an example is a program a user copies whole, so
// it takes nothing from the tests' helpers.
func writeTo(path string, w io.WriterTo) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := w.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
