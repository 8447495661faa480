package testcircuit

import (
	"fmt"
	"io"
	"math/big"
	"os"
	"path/filepath"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
)

// User is a circuit as a gnark user would write one, not one of zkhost's examples: the
// secret X is decomposed into Bits bits (gnark's ToBinary, whose hint is gnark's
// own), and the public Y is X³ + Σ (i+1)·bitᵢ.
type User struct {
	X    frontend.Variable
	Y    frontend.Variable `gnark:",public"`
	Bits int               `gnark:"-"`
}

// Define implements frontend.Circuit.
func (c *User) Define(api frontend.API) error {
	bits := api.ToBinary(c.X, c.Bits)
	var sum frontend.Variable = 0
	for i, b := range bits {
		sum = api.Add(sum, api.Mul(b, i+1))
	}
	api.AssertIsEqual(api.Add(api.Mul(c.X, c.X, c.X), sum), c.Y)
	return nil
}

// UserAssignment returns User's satisfying assignment for the secret x (which must
// fit in bits bits).
func UserAssignment(bits int, x uint64) *User {
	var y, t fr.Element
	y.SetUint64(x)
	t.Square(&y)
	y.Mul(&y, &t)
	for i := range bits {
		if x>>i&1 == 1 {
			t.SetUint64(uint64(i + 1))
			y.Add(&y, &t)
		}
	}
	return &User{X: x, Y: y.String(), Bits: bits}
}

// CubeRoot proves knowledge of the cube root X of the public Y, found by a hint
// (CubeRootHint) that lives only in this package: a circuit with a custom hint, which
// zkhost's solver does not have.
type CubeRoot struct {
	X frontend.Variable
	Y frontend.Variable `gnark:",public"`
}

// Define implements frontend.Circuit.
func (c *CubeRoot) Define(api frontend.API) error {
	r, err := api.Compiler().NewHint(CubeRootHint, 1, c.Y)
	if err != nil {
		return err
	}
	api.AssertIsEqual(api.Mul(r[0], r[0], r[0]), c.Y)
	api.AssertIsEqual(r[0], c.X)
	return nil
}

// CubeRootHint computes a cube root in the scalar field by brute force over small
// values: enough for tests, whose roots are small.
func CubeRootHint(q *big.Int, in, out []*big.Int) error {
	for x := int64(0); x < 1<<16; x++ {
		v := big.NewInt(x)
		v.Exp(v, big.NewInt(3), q)
		if v.Cmp(in[0]) == 0 {
			out[0].SetInt64(x)
			return nil
		}
	}
	return fmt.Errorf("no small cube root of %s", in[0])
}

// GnarkFiles are the files a gnark user has for a circuit.
type GnarkFiles struct {
	CCS, PK, VK, Witness string
	R1CS                 constraint.ConstraintSystem
	VerifyingKey         groth16.VerifyingKey
	// FullWitness is the witness the Witness file holds, decoded.
	FullWitness witness.Witness
}

// WriteGnarkFiles compiles def for BLS12-381, runs gnark's Groth16 setup and writes,
// into dir, what gnark writes for its users: name.ccs (R1CS.WriteTo), name.pk
// (ProvingKey.WriteTo), name.vk (VerifyingKey.WriteTo) and name.wtns, assignment's
// full witness (witness.MarshalBinary).
func WriteGnarkFiles(dir, name string, def, assignment frontend.Circuit) (GnarkFiles, error) {
	return WriteGnarkFilesOn(ecc.BLS12_381, dir, name, def, assignment)
}

// WriteGnarkFilesOn is WriteGnarkFiles on curve id (BLS12-381 or BN254).
func WriteGnarkFilesOn(id ecc.ID, dir, name string, def, assignment frontend.Circuit) (GnarkFiles, error) {
	ccs, err := frontend.Compile(id.ScalarField(), r1cs.NewBuilder, def)
	if err != nil {
		return GnarkFiles{}, err
	}
	pk, vk, err := groth16.Setup(ccs)
	if err != nil {
		return GnarkFiles{}, err
	}
	w, err := frontend.NewWitness(assignment, id.ScalarField())
	if err != nil {
		return GnarkFiles{}, err
	}
	wb, err := w.MarshalBinary()
	if err != nil {
		return GnarkFiles{}, err
	}
	base := filepath.Join(dir, name)
	f := GnarkFiles{CCS: base + ".ccs", PK: base + ".gnark-pk", VK: base + ".vk", Witness: base + ".wtns", R1CS: ccs, VerifyingKey: vk, FullWitness: w}
	if err := writeTo(f.CCS, ccs); err != nil {
		return GnarkFiles{}, err
	}
	if err := writeTo(f.PK, pk); err != nil {
		return GnarkFiles{}, err
	}
	if err := writeTo(f.VK, vk); err != nil {
		return GnarkFiles{}, err
	}
	if err := os.WriteFile(f.Witness, wb, 0o644); err != nil {
		return GnarkFiles{}, err
	}
	return f, nil
}

// writeTo writes src to a new file at path. Deliberately parallel to
// examples/owncircuit's writeTo: see why there.
func writeTo(path string, src io.WriterTo) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if _, err := src.WriteTo(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
