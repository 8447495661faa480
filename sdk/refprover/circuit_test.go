package refprover

import (
	"fmt"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	groth16_bls12381 "github.com/consensys/gnark/backend/groth16/bls12-381"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"

	"github.com/zkhost/zkhost/sdk/keyconv"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// fixture is a compiled chain circuit with its keys and one solved witness.
type fixture struct {
	ccs      constraint.ConstraintSystem
	gnarkPK  *groth16_bls12381.ProvingKey
	vk       groth16.VerifyingKey
	pk       *keyfile.BLS12381Key
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
	ccs, err := frontend.Compile(field, r1cs.NewBuilder, &testcircuit.Chain{N: n})
	if err != nil {
		return nil, fmt.Errorf("compile: %w", err)
	}
	pk, vk, err := groth16.Setup(ccs)
	if err != nil {
		return nil, fmt.Errorf("setup: %w", err)
	}
	gnarkPK := pk.(*groth16_bls12381.ProvingKey)
	key, err := keyconv.FromGnark(gnarkPK)
	if err != nil {
		return nil, fmt.Errorf("keyfile.FromGnark: %w", err)
	}
	if key.NbWires == uint64(len(key.G1A)) || key.NbWires == uint64(len(key.G1B)) {
		return nil, fmt.Errorf("the chain circuit should leave some wires without A or B points (%d wires, %d A, %d B)",
			key.NbWires, len(key.G1A), len(key.G1B))
	}
	full, err := frontend.NewWitness(testcircuit.ChainAssignment(n, 3, 5), field)
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
