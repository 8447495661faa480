package oneshot

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint/solver"

	cs "github.com/consensys/gnark/constraint/bls12-381"

	"github.com/zkhost/zkhost/sdk/circuit"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// verifyWritten checks the proof and public witness Run wrote for partition p with
// gnark's groth16.Verify and the user's own verifying key.
func verifyWritten(t *testing.T, p PartitionResult, vk groth16.VerifyingKey) {
	t.Helper()
	proof := groth16.NewProof(ecc.BLS12_381)
	f, err := os.Open(p.ProofFile)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := proof.ReadFrom(f); err != nil {
		t.Fatal(err)
	}
	pubBytes, err := os.ReadFile(p.PublicFile)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := witness.New(ecc.BLS12_381.ScalarField())
	if err := pub.UnmarshalBinary(pubBytes); err != nil {
		t.Fatal(err)
	}
	if err := groth16.Verify(proof, vk, pub); err != nil {
		t.Errorf("partition %d: the proof does not verify with the user's verifying key: %v", p.Index, err)
	}
}

// assignmentOf solves the gnark witness file with gnark (and hints) and writes its
// wire assignment to a new file.
func assignmentOf(t *testing.T, f testcircuit.GnarkFiles, hints ...solver.Hint) string {
	t.Helper()
	r1cs := f.R1CS.(*cs.R1CS)
	res, err := r1cs.Solve(f.FullWitness, solver.WithHints(hints...))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "0"+circuit.ExtAssignment)
	b := circuit.MarshalAssignment(res.(*cs.R1CSSolution).W, r1cs.GetNbPublicVariables(), r1cs.GetNbSecretVariables())
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestUserCircuitThroughBackend: a user's own gnark circuit (bit decomposition and
// arithmetic), compiled and set up with gnark, imported, then proved by the CPU
// backend process from the user's gnark witness and from a wire assignment; gnark
// verifies every proof with the user's verifying key.
func TestUserCircuitThroughBackend(t *testing.T) {
	const bits = 16
	f, err := testcircuit.WriteGnarkFiles(t.TempDir(), "user", &testcircuit.User{Bits: bits}, testcircuit.UserAssignment(bits, 51234))
	if err != nil {
		t.Fatal(err)
	}
	keys := t.TempDir()
	res, err := circuit.Import(context.Background(), circuit.ImportFiles{CCS: f.CCS, PK: f.PK, VK: f.VK}, "mine", keys)
	if err != nil {
		t.Fatal(err)
	}
	res.Circuit.Close()

	opts := Options{KeyDir: keys, Circuit: "mine", WitnessFiles: []string{f.Witness}, OutDir: t.TempDir(), Backend: backendBin}
	out, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Partitions) != 1 || !out.Partitions[0].Verified {
		t.Fatalf("result %+v", out)
	}
	verifyWritten(t, out.Partitions[0], f.VerifyingKey)

	opts.WitnessFiles, opts.AssignmentFiles, opts.OutDir = nil, []string{assignmentOf(t, f)}, t.TempDir()
	if out, err = Run(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	verifyWritten(t, out.Partitions[0], f.VerifyingKey)
}

// TestAssignmentFiles: a circuit with a custom hint, imported for assignments only,
// proves from a wire assignment through the backend; its witness is refused up front
// naming the hint; a tampered assignment fails naming the constraint, and one of the
// wrong size is refused before anything is proved.
func TestAssignmentFiles(t *testing.T) {
	// Deliberately parallel to host/daemon's TestHintedCircuit setup: see why
	// there.
	f, err := testcircuit.WriteGnarkFiles(t.TempDir(), "cube", &testcircuit.CubeRoot{}, &testcircuit.CubeRoot{X: 11, Y: 1331})
	if err != nil {
		t.Fatal(err)
	}
	keys := t.TempDir()
	res, err := circuit.Import(context.Background(), circuit.ImportFiles{CCS: f.CCS, PK: f.PK, VK: f.VK, AssignmentsOnly: true}, "cube", keys)
	if err != nil {
		t.Fatal(err)
	}
	res.Circuit.Close()
	good := assignmentOf(t, f, testcircuit.CubeRootHint)
	opts := func(files ...string) Options {
		return Options{KeyDir: keys, Circuit: "cube", AssignmentFiles: files, OutDir: t.TempDir(), Backend: backendBin}
	}

	out, err := Run(context.Background(), opts(good, good))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range out.Partitions {
		verifyWritten(t, p, f.VerifyingKey)
	}

	data, _ := os.ReadFile(good)
	tampered := filepath.Join(t.TempDir(), "tampered"+circuit.ExtAssignment)
	data[len(data)-1] ^= 1 // the last internal wire: the hint's output
	os.WriteFile(tampered, data, 0o644)
	short := filepath.Join(t.TempDir(), "short"+circuit.ExtAssignment)
	os.WriteFile(short, data[:len(data)-32], 0o644)

	witnessOpts := opts()
	witnessOpts.AssignmentFiles, witnessOpts.WitnessFiles = nil, []string{f.Witness}
	for _, tc := range []struct {
		name  string
		opts  Options
		wants []string
	}{
		{"tampered", opts(good, tampered), []string{"partition 1", tampered, "does not satisfy constraint"}},
		{"wrong size", opts(good, short), []string{short, "truncated, or trailing bytes"}},
		{"a witness", witnessOpts, []string{"testcircuit.CubeRootHint", "wire assignments"}},
	} {
		_, err := Run(context.Background(), tc.opts)
		for _, want := range tc.wants {
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("%s: %v, want an error containing %q", tc.name, err, want)
			}
		}
		if tc.name == "wrong size" {
			if entries, _ := os.ReadDir(tc.opts.OutDir); len(entries) != 0 {
				t.Errorf("wrong size: %d files written, want none before the check", len(entries))
			}
		}
	}
}
