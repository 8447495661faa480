package cpubackend

import (
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/groth16"
	groth16_bls12381 "github.com/consensys/gnark/backend/groth16/bls12-381"
	"github.com/consensys/gnark/backend/witness"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/keyconv"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/shm"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// fixture is a chain circuit's key file, verifying key, and one solved witness.
type fixture struct {
	keyPath   string
	keyDigest [32]byte
	keySize   int64
	domain    uint64
	vk        groth16.VerifyingKey
	public    witness.Witness
	solution  *cs.R1CSSolution
}

var (
	fixtureOnce sync.Once
	theFixture  *fixture
	fixtureErr  error
	fixtureDir  string
)

const chainSteps = 900 // 901 constraints: a 1024 domain with padding

func TestMain(m *testing.M) {
	// The test binary is its own prove worker (worker_test.go).
	if len(os.Args) > 1 && os.Args[1] == WorkerArg {
		os.Exit(ServeWorker())
	}
	dir, err := os.MkdirTemp("", "cpubackend-test-")
	if err != nil {
		panic(err)
	}
	fixtureDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// chainFixture builds the fixture once per test binary.
func chainFixture(t testing.TB) *fixture {
	t.Helper()
	fixtureOnce.Do(func() { theFixture, fixtureErr = newFixture(fixtureDir) })
	if fixtureErr != nil {
		t.Fatalf("fixture: %v", fixtureErr)
	}
	return theFixture
}

// newFixture compiles the chain, sets it up, converts the key and writes it
// to dir, and solves one witness. Deliberately parallel to cudabackend/gpu's
// newCompactFixture: sdk/testcircuit, which both could share, cannot call
// keyconv (keyconv's and keyfile's own tests import testcircuit), and the
// two keep different results (a key file here, matrices and a key in memory
// there).
func newFixture(dir string) (*fixture, error) {
	field := ecc.BLS12_381.ScalarField()
	ccs, err := frontend.Compile(field, r1cs.NewBuilder, &testcircuit.Chain{N: chainSteps})
	if err != nil {
		return nil, err
	}
	pk, vk, err := groth16.Setup(ccs)
	if err != nil {
		return nil, err
	}
	key, err := keyconv.FromGnark(pk.(*groth16_bls12381.ProvingKey))
	if err != nil {
		return nil, err
	}
	path := filepath.Join(dir, "chain.zkpk")
	digest, err := keyfile.Write(path, key)
	if err != nil {
		return nil, err
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	full, err := frontend.NewWitness(testcircuit.ChainAssignment(chainSteps, 3, 5), field)
	if err != nil {
		return nil, err
	}
	public, err := full.Public()
	if err != nil {
		return nil, err
	}
	sol, err := ccs.Solve(full)
	if err != nil {
		return nil, err
	}
	return &fixture{keyPath: path, keyDigest: digest, keySize: st.Size(), domain: key.DomainSize,
		vk: vk, public: public, solution: sol.(*cs.R1CSSolution)}, nil
}

// keyRef names the fixture's key under id.
func (f *fixture) keyRef(id string) sdk.KeyRef {
	return sdk.KeyRef{ID: id, Path: f.keyPath, Digest: f.keyDigest}
}

// writePartition writes W, A and B as the host does (a sealed memfd, sdk/shm)
// and returns its handle; the partition is removed when the test ends.
func writePartition(t testing.TB, w, a, b []fr.Element) sdk.PartitionHandle {
	t.Helper()
	store := shm.NewStore()
	t.Cleanup(func() { store.Close() })
	h, err := store.Write("cpubackend-test", sdk.CurveBLS12381, w, a, b)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// partition writes the fixture's solution as a partition file.
func (f *fixture) partition(t testing.TB) sdk.PartitionHandle {
	return writePartition(t, f.solution.W, f.solution.A, f.solution.B)
}
