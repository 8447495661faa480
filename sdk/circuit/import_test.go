package circuit

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"

	"github.com/zkhost/zkhost/sdk/keyconv"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

const userBits = 16

// userFiles writes the gnark files of testcircuit.User (bit decomposition and
// arithmetic, no custom hint) with a fresh setup into a new directory.
func userFiles(t *testing.T, bits int, x uint64) testcircuit.GnarkFiles {
	t.Helper()
	f, err := testcircuit.WriteGnarkFiles(t.TempDir(), "user", &testcircuit.User{Bits: bits}, testcircuit.UserAssignment(bits, x))
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// cubeRootFiles writes the gnark files of testcircuit.CubeRoot, a circuit with a
// custom hint zkhost does not have, with the root 7.
func cubeRootFiles(t *testing.T) testcircuit.GnarkFiles {
	t.Helper()
	f, err := testcircuit.WriteGnarkFiles(t.TempDir(), "cuberoot", &testcircuit.CubeRoot{}, &testcircuit.CubeRoot{X: 7, Y: 343})
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestImportUserCircuit(t *testing.T) {
	f := userFiles(t, userBits, 40503)
	out := t.TempDir()
	res, err := Import(context.Background(), ImportFiles{CCS: f.CCS, PK: f.PK, VK: f.VK, Witness: f.Witness}, "mine", out)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Circuit
	t.Cleanup(func() { c.Close() })
	if !res.Proved {
		t.Error("a witness was given but Import did not prove it")
	}
	if c.Meta == nil || c.Meta.Setup != SetupImported || c.Meta.ID != "mine" || c.NbConstraints != f.R1CS.GetNbConstraints() {
		t.Errorf("metadata %+v, %d constraints; want an imported key set of %d constraints", c.Meta, c.NbConstraints, f.R1CS.GetNbConstraints())
	}
	if len(c.MissingHints) != 0 {
		t.Errorf("ToBinary's hint is gnark's own, yet MissingHints = %v", c.MissingHints)
	}
	entries, _ := os.ReadDir(out)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if want := []string{"mine.ccs", "mine.json", "mine.pk", "mine.vk"}; !slices.Equal(names, want) {
		t.Errorf("the key directory holds %v, want %v", names, want)
	}
	for _, p := range [][2]string{{f.CCS, filepath.Join(out, "mine.ccs")}, {f.VK, filepath.Join(out, "mine.vk")}} {
		a, _ := os.ReadFile(p[0])
		b, _ := os.ReadFile(p[1])
		if !bytes.Equal(a, b) {
			t.Errorf("%s is not a copy of %s", p[1], p[0])
		}
	}

	// What the daemon does with it: Load, read the gnark witness, synthesize, prove
	// with the converted key; the proof verifies with the user's own verifying key.
	loaded := load(t, out, "mine")
	w, err := ReadWitness(f.Witness, loaded)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := Synthesize(loaded, w, 0); err != nil {
		t.Fatal(err)
	}
	proof, err := groth16.Prove(loaded.CCS, keyconv.ToGnark(loaded.Key()), w)
	if err != nil {
		t.Fatal(err)
	}
	pub, _ := w.Public()
	if err := groth16.Verify(proof, f.VerifyingKey, pub); err != nil {
		t.Errorf("a proof with the imported key does not verify with the user's verifying key: %v", err)
	}
}

func TestImportRefuses(t *testing.T) {
	f := userFiles(t, userBits, 99)
	other := userFiles(t, userBits, 99)    // the same circuit, another setup
	smaller := userFiles(t, userBits/2, 9) // another circuit
	hinted := cubeRootFiles(t)

	badWitness := filepath.Join(t.TempDir(), "bad.wtns")
	writeWitness(t, badWitness, &testcircuit.User{X: 5, Y: 7, Bits: userBits})
	chainWitness := filepath.Join(t.TempDir(), "chain.wtns") // two public inputs, User has one
	writeWitness(t, chainWitness, testcircuit.ChainAssignment(4, 3, 5))
	compiledFor := func(field ecc.ID) string {
		path := filepath.Join(t.TempDir(), field.String()+".ccs")
		ccs, err := frontend.Compile(field.ScalarField(), r1cs.NewBuilder, &testcircuit.User{Bits: userBits})
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		ccs.WriteTo(&buf)
		os.WriteFile(path, buf.Bytes(), 0o644)
		return path
	}
	bn254, bls12377 := compiledFor(ecc.BN254), compiledFor(ecc.BLS12_377)
	occupied := t.TempDir()
	os.WriteFile(filepath.Join(occupied, "mine.vk"), []byte("in use"), 0o644)

	for _, tc := range []struct {
		name  string
		files ImportFiles
		out   string
		wants []string
		as    string // the key set's name; empty: mine
	}{
		{"verifying key of another setup", ImportFiles{CCS: f.CCS, PK: f.PK, VK: other.VK}, "",
			[]string{f.PK, other.VK, "different setups"}, ""},
		{"constraint system of another circuit", ImportFiles{CCS: smaller.CCS, PK: f.PK, VK: f.VK}, "",
			[]string{f.PK, smaller.CCS, "the files are not one key set"}, ""},
		{"verifying key given as the proving key", ImportFiles{CCS: f.CCS, PK: f.VK, VK: f.VK}, "",
			[]string{f.VK, "not a gnark proving key of BLS12-381 or BN254"}, ""},
		{"proving key given as the verifying key", ImportFiles{CCS: f.CCS, PK: f.PK, VK: f.PK}, "",
			[]string{f.PK, "verifying key"}, ""},
		{"constraint system for BN254, keys for BLS12-381", ImportFiles{CCS: bn254, PK: f.PK, VK: f.VK}, "",
			[]string{f.VK, "not a gnark BN254 verifying key"}, ""},
		{"constraint system for BLS12-377", ImportFiles{CCS: bls12377, PK: f.PK, VK: f.VK}, "",
			[]string{bls12377, "compiled for another field"}, ""},
		{"a custom hint", ImportFiles{CCS: hinted.CCS, PK: hinted.PK, VK: hinted.VK}, "",
			[]string{"testcircuit.CubeRootHint", "synthesizer plugin", "wire assignments", "--assignments-only"}, ""},
		{"a witness that does not satisfy the circuit", ImportFiles{CCS: f.CCS, PK: f.PK, VK: f.VK, Witness: badWitness}, "",
			[]string{badWitness, "does not satisfy"}, ""},
		{"a witness of another circuit", ImportFiles{CCS: f.CCS, PK: f.PK, VK: f.VK, Witness: chainWitness}, "",
			[]string{chainWitness, "has 2 public and 1 secret values, circuit mine wants 1 public and 1 secret"}, ""},
		{"a key set of that name exists", ImportFiles{CCS: f.CCS, PK: f.PK, VK: f.VK}, occupied,
			[]string{"mine.vk", "already exist"}, ""},
		{"no verifying key", ImportFiles{CCS: f.CCS, PK: f.PK}, "",
			[]string{"verifying key"}, ""},
		{"a name with a slash", ImportFiles{CCS: f.CCS, PK: f.PK, VK: f.VK}, "",
			[]string{`bad key set name "a/b": '/' is not allowed`}, "a/b"},
		{"a hidden name", ImportFiles{CCS: f.CCS, PK: f.PK, VK: f.VK}, "",
			[]string{`bad key set name ".mine"`}, ".mine"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out := tc.out
			if out == "" {
				out = t.TempDir()
			}
			before, _ := os.ReadDir(out)
			name := tc.as
			if name == "" {
				name = "mine"
			}
			res, err := Import(context.Background(), tc.files, name, out)
			if err == nil {
				res.Circuit.Close()
				t.Fatal("Import succeeded")
			}
			for _, want := range tc.wants {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not contain %q", err, want)
				}
			}
			if after, _ := os.ReadDir(out); len(after) != len(before) {
				t.Errorf("a refused import left %d entries in the key directory, there were %d", len(after), len(before))
			}
		})
	}
}

// TestImportAssignmentsOnly: a circuit with a custom hint imports with
// AssignmentsOnly, names its missing hint, refuses witnesses and proves from a wire
// assignment solved where the hint is.
func TestImportAssignmentsOnly(t *testing.T) {
	f := cubeRootFiles(t)
	out := t.TempDir()
	files := ImportFiles{CCS: f.CCS, PK: f.PK, VK: f.VK, AssignmentsOnly: true}

	// The gnark witness cannot be checked here: the solver lacks the hint.
	files.Witness = f.Witness
	if _, err := Import(context.Background(), files, "cube", out); err == nil || !strings.Contains(err.Error(), "check with a wire assignment instead") {
		t.Fatalf("import checked with a witness of a hinted circuit: %v", err)
	}

	files.Witness = writeCubeRootAssignment(t, f)
	res, err := Import(context.Background(), files, "cube", out)
	if err != nil {
		t.Fatal(err)
	}
	c := res.Circuit
	defer c.Close()
	if !res.Proved {
		t.Error("the assignment was not proved")
	}
	var mh *MissingHintsError
	if err := c.CheckSolvable(); !errors.As(err, &mh) || len(mh.Hints) != 1 || !strings.HasSuffix(mh.Hints[0], "testcircuit.CubeRootHint") {
		t.Errorf("CheckSolvable = %v, want the missing CubeRootHint", err)
	}
	data, _ := os.ReadFile(f.Witness)
	if _, _, _, _, err := SynthesizeInput(c, data, 0); err == nil || !strings.Contains(err.Error(), "CubeRootHint") {
		t.Errorf("synthesizing a witness without the hint: %v", err)
	}
}
