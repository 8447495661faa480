package testcircuit

import (
	"bytes"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/groth16"
	groth16_bls12381 "github.com/consensys/gnark/backend/groth16/bls12-381"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"
)

// SquareChain is Out = the N-th iterate of x -> x*x + C, times a second private input
// Y that only enters through that one product, so some wires have infinity A or B
// points: the case key conversions and key files must carry.
type SquareChain struct {
	X   frontend.Variable
	Y   frontend.Variable
	C   frontend.Variable `gnark:",public"`
	Out frontend.Variable `gnark:",public"`
	N   int               `gnark:"-"`
}

// Define implements frontend.Circuit.
func (c *SquareChain) Define(api frontend.API) error {
	x := c.X
	for range c.N {
		x = api.Add(api.Mul(x, x), c.C)
	}
	api.AssertIsEqual(api.Mul(x, c.Y), c.Out)
	return nil
}

// SquareChainOut computes SquareChain's public output outside the circuit.
func SquareChainOut(x, y, c uint64, n int) fr.Element {
	var vx, vy, vc fr.Element
	vx.SetUint64(x)
	vy.SetUint64(y)
	vc.SetUint64(c)
	for range n {
		vx.Square(&vx).Add(&vx, &vc)
	}
	return *vx.Mul(&vx, &vy)
}

// SquareChainKeySteps is the length of the chain SquareChainKey sets up: long enough
// for a key with every section filled, short enough for gnark's setup in a unit test.
const SquareChainKeySteps = 250

// Key is a compiled circuit with gnark's keys for it.
type Key struct {
	CCS constraint.ConstraintSystem
	PK  *groth16_bls12381.ProvingKey
	VK  groth16.VerifyingKey
}

var squareChainKey struct {
	once sync.Once
	key  Key
	err  error
}

// SquareChainKey compiles SquareChain of SquareChainKeySteps steps and runs gnark's
// setup for it, once per test binary: the tests that share it only read it.
func SquareChainKey(t testing.TB) Key {
	t.Helper()
	k := &squareChainKey
	k.once.Do(func() {
		ccs, err := frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, &SquareChain{N: SquareChainKeySteps})
		if err != nil {
			k.err = err
			return
		}
		pk, vk, err := groth16.Setup(ccs)
		if err != nil {
			k.err = err
			return
		}
		k.key = Key{CCS: ccs, PK: pk.(*groth16_bls12381.ProvingKey), VK: vk}
	})
	if k.err != nil {
		t.Fatal(k.err)
	}
	return k.key
}

// RawKeyBytes serializes a gnark proving key without compression, for comparing keys.
func RawKeyBytes(t testing.TB, pk *groth16_bls12381.ProvingKey) []byte {
	t.Helper()
	var buf bytes.Buffer
	if _, err := pk.WriteRawTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// Square proves knowledge of X with X·X = the public Y: the smallest circuit with a
// proof to check.
type Square struct {
	X frontend.Variable
	Y frontend.Variable `gnark:",public"`
}

// Define implements frontend.Circuit.
func (c *Square) Define(api frontend.API) error {
	api.AssertIsEqual(api.Mul(c.X, c.X), c.Y)
	return nil
}

// SquareProof proves Square for X = 3, Y = 9 with gnark's own setup and prover, and
// returns the encoded proof, its verifying key and the full witness.
func SquareProof(t testing.TB) ([]byte, groth16.VerifyingKey, witness.Witness) {
	t.Helper()
	ccs, err := frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, &Square{})
	if err != nil {
		t.Fatal(err)
	}
	pk, vk, err := groth16.Setup(ccs)
	if err != nil {
		t.Fatal(err)
	}
	full, err := frontend.NewWitness(&Square{X: 3, Y: 9}, ecc.BLS12_381.ScalarField())
	if err != nil {
		t.Fatal(err)
	}
	proof, err := groth16.Prove(ccs, pk, full)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if _, err := proof.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), vk, full
}
