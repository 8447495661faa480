package refprover

import (
	"fmt"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/groth16"
	groth16_bls12381 "github.com/consensys/gnark/backend/groth16/bls12-381"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"

	"github.com/zkhost/zkhost/sdk/keyfile"
)

// chainCircuit proves knowledge of S such that n steps of v ← v·(v+S), starting at
// the public X, end at the public Y: n+1 constraints, one private input, n internal
// wires.
type chainCircuit struct {
	X, Y frontend.Variable `gnark:",public"`
	S    frontend.Variable
	n    int
}

func (c *chainCircuit) Define(api frontend.API) error {
	v := c.X
	for i := 0; i < c.n; i++ {
		v = api.Mul(v, api.Add(v, c.S))
	}
	api.AssertIsEqual(v, c.Y)
	return nil
}

// chainAssignment returns a satisfying assignment for the chain of n steps.
func chainAssignment(n int, x, s uint64) *chainCircuit {
	var v, sv, t fr.Element
	v.SetUint64(x)
	sv.SetUint64(s)
	for i := 0; i < n; i++ {
		t.Add(&v, &sv)
		v.Mul(&v, &t)
	}
	return &chainCircuit{X: x, Y: v.String(), S: s, n: n}
}

// fixture is a compiled chain circuit with its keys and one solved witness.
type fixture struct {
	ccs      constraint.ConstraintSystem
	gnarkPK  *groth16_bls12381.ProvingKey
	vk       groth16.VerifyingKey
	pk       *keyfile.ProvingKey
	full     witness.Witness
	public   witness.Witness
	solution *cs.R1CSSolution
}

var (
	fixturesMu sync.Mutex
	fixtures   = map[int]*fixture{}
)

// chainFixture compiles, sets up and solves a chain of n steps once per test binary.
func chainFixture(tb testing.TB, n int) *fixture {
	tb.Helper()
	fixturesMu.Lock()
	defer fixturesMu.Unlock()
	if f, ok := fixtures[n]; ok {
		return f
	}
	f, err := newChainFixture(n)
	if err != nil {
		tb.Fatalf("chain fixture of %d steps: %v", n, err)
	}
	fixtures[n] = f
	return f
}

func newChainFixture(n int) (*fixture, error) {
	field := ecc.BLS12_381.ScalarField()
	ccs, err := frontend.Compile(field, r1cs.NewBuilder, &chainCircuit{n: n})
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	pk, vk, err := groth16.Setup(ccs)
	if err != nil {
		return nil, fmt.Errorf("setup: %w", err)
	}
	gnarkPK := pk.(*groth16_bls12381.ProvingKey)
	key, err := keyfile.FromGnark(gnarkPK)
	if err != nil {
		return nil, fmt.Errorf("keyfile.FromGnark: %w", err)
	}
	if key.NbWires == uint64(len(key.G1A)) || key.NbWires == uint64(len(key.G1B)) {
		return nil, fmt.Errorf("the chain circuit should leave some wires without A or B points (%d wires, %d A, %d B)",
			key.NbWires, len(key.G1A), len(key.G1B))
	}
	full, err := frontend.NewWitness(chainAssignment(n, 3, 5), field)
	if err != nil {
		return nil, fmt.Errorf("witness: %w", err)
	}
	public, err := full.Public()
	if err != nil {
		return nil, fmt.Errorf("public witness: %w", err)
	}
	sol, err := ccs.Solve(full)
	if err != nil {
		return nil, fmt.Errorf("solve: %w", err)
	}
	return &fixture{ccs: ccs, gnarkPK: gnarkPK, vk: vk, pk: key, full: full, public: public, solution: sol.(*cs.R1CSSolution)}, nil
}
