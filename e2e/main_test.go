package e2e

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/logger"

	"github.com/zkhost/zkhost/sdk/circuit"
	"github.com/zkhost/zkhost/sdk/circuits"
)

// The binaries and keys every test shares, made once by TestMain.
var (
	binDir string // zkhost, zkhost-backend-cpu, faultbackend, faultsynth
	keyDir string // chain-k8 and merkle-d4-k2 key sets
	// keyDirBN254 holds chain-k8-bn254.
	keyDirBN254 string
	work        string // TestMain's scratch directory

	fixtures = map[string]*fixture{}
)

// fixture is one circuit the tests submit jobs of.
type fixture struct {
	name string // the name in the daemon's config ("chain")
	spec circuits.Spec
	c    *circuit.Circuit
}

var (
	zkhostBin  = func() string { return filepath.Join(binDir, "zkhost") }
	cpuBin     = func() string { return filepath.Join(binDir, "zkhost-backend-cpu") }
	faultBin   = func() string { return filepath.Join(binDir, "faultbackend") }
	synthBin   = func() string { return filepath.Join(binDir, "faultsynth") }
	natsBin    = func() string { return filepath.Join(binDir, "nats-server") }
	keepOnFail = flag.Bool("e2e.keep", false, "keep the scratch directory of a failed run")
)

func TestMain(m *testing.M) {
	flag.Parse()
	logger.Disable()
	code, err := run(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "e2e:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func run(m *testing.M) (int, error) {
	var err error
	if work, err = os.MkdirTemp("", "zkhost-e2e-"); err != nil {
		return 0, err
	}
	binDir = filepath.Join(work, "bin")
	keyDir = filepath.Join(work, "keys")
	keyDirBN254 = filepath.Join(work, "keys-bn254")
	if err := buildBinaries(binDir); err != nil {
		return 0, err
	}
	for _, f := range []struct {
		name, circuit string
		params        map[string]int
		curve         ecc.ID
		keys          string
	}{
		{"chain", "chain", map[string]int{"k": 8}, ecc.BLS12_381, keyDir},
		{"merkle", "merkle", map[string]int{"d": 4, "k": 2}, ecc.BLS12_381, keyDir},
		// In a directory of its own, so that "chain" still names one key set in keyDir.
		{"chain-bn254", "chain", map[string]int{"k": 8}, ecc.BN254, keyDirBN254},
	} {
		spec, err := circuits.Lookup(f.circuit, f.params)
		if err == nil {
			spec, err = spec.On(f.curve)
		}
		if err != nil {
			return 0, err
		}
		if err := circuit.Keygen(spec, f.keys); err != nil {
			return 0, fmt.Errorf("keygen %s: %w", spec.ID(), err)
		}
		c, err := circuit.Load(f.keys, spec.ID())
		if err != nil {
			return 0, err
		}
		fixtures[f.name] = &fixture{name: f.name, spec: spec, c: c}
	}
	code := m.Run()
	for _, f := range fixtures {
		f.c.Close()
	}
	if code != 0 && *keepOnFail {
		fmt.Fprintln(os.Stderr, "e2e: scratch directory kept:", work)
	} else {
		os.RemoveAll(work)
	}
	return code, nil
}

// buildBinaries builds the host, the CPU backend, the fault backend, the
// fault synthesizer and nats-server into dir.
func buildBinaries(dir string) error {
	goBin, err := exec.LookPath("go")
	if err != nil {
		return fmt.Errorf("the go command is needed to build the binaries: %w", err)
	}
	root, err := filepath.Abs("..")
	if err != nil {
		return err
	}
	// nats-server, from the module zkhost embeds, is a NATS cluster of its own for the cluster tests.
	cmd := exec.Command(goBin, "build", "-o", dir+"/", "./cmd/zkhost", "./cmd/zkhost-backend-cpu", "./examples/faultbackend", "./examples/faultsynth", "github.com/nats-io/nats-server/v2")
	cmd.Dir = root
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build: %v\n%s", err, out.String())
	}
	return nil
}

// witnesses returns n valid witnesses of circuit name, seeded with seed.
func witnesses(t testing.TB, name string, seed uint64, n int) [][]byte {
	t.Helper()
	f := fixtures[name]
	out := make([][]byte, n)
	for i := range out {
		w, err := f.spec.Witness(i, seed)
		if err != nil {
			t.Fatal(err)
		}
		if out[i], err = w.MarshalBinary(); err != nil {
			t.Fatal(err)
		}
	}
	return out
}

// assignments solves each gnark full witness of fixture name with gnark's solver and
// returns its wire assignment (docs/assignment.md).
func assignments(t testing.TB, name string, ws [][]byte) [][]byte {
	t.Helper()
	c, err := circuit.Load(keyDir, fixtures[name].spec.ID())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	out, err := c.GnarkAssignments(ws)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// verifyProof checks one partition's proof with gnark's groth16.Verify against the
// public witness the test itself derives from (circuit, seed, idx), and checks the
// public witness the host returned is that one.
func verifyProof(name string, seed uint64, idx int, proof, hostPublic []byte) error {
	f := fixtures[name]
	w, err := f.spec.Witness(idx, seed)
	if err != nil {
		return err
	}
	pub, err := w.Public()
	if err != nil {
		return err
	}
	want, err := pub.MarshalBinary()
	if err != nil {
		return err
	}
	if hostPublic != nil && !bytes.Equal(want, hostPublic) {
		return fmt.Errorf("partition %d: the host returned another public witness", idx)
	}
	p := groth16.NewProof(f.c.VK.CurveID())
	if _, err := p.ReadFrom(bytes.NewReader(proof)); err != nil {
		return fmt.Errorf("partition %d: proof does not decode: %w", idx, err)
	}
	if err := groth16.Verify(p, f.c.VK, pub); err != nil {
		return fmt.Errorf("partition %d: %w", idx, err)
	}
	return nil
}

// publicOf returns the public witness of a witness file's bytes (for bad-input cases
// that build witnesses by hand).
func publicOf(data []byte) (witness.Witness, error) {
	w, err := witness.New(ecc.BLS12_381.ScalarField())
	if err != nil {
		return nil, err
	}
	if err := w.UnmarshalBinary(data); err != nil {
		return nil, err
	}
	return w.Public()
}
