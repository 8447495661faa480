package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	cs "github.com/consensys/gnark/constraint/bls12-381"

	"github.com/zkhost/zkhost/sdk/circuit"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// TestKeyImportAndProve is the README's "Your own circuit" as a user types it: a
// gnark circuit's files imported with `zkhost key import`, then proved by `zkhost
// prove` through the CPU backend from the user's gnark witness and from a wire
// assignment; `zkhost verify` checks the proofs with gnark.
func TestKeyImportAndProve(t *testing.T) {
	backend := buildCPUBackend(t, t.TempDir())
	const bits = 12
	f, err := testcircuit.WriteGnarkFiles(t.TempDir(), "user", &testcircuit.User{Bits: bits}, testcircuit.UserAssignment(bits, 3001))
	if err != nil {
		t.Fatal(err)
	}
	keys := t.TempDir()
	zkhost := zkhostRunner(t)
	out := zkhost("key", "import", "--ccs", f.CCS, "--pk", f.PK, "--vk", f.VK, "--name", "mine", "--out", keys, "--witness", f.Witness)
	if !strings.Contains(out, "wrote mine.{ccs,vk,pk,json}") || !strings.Contains(out, f.Witness+" proved and verified") {
		t.Errorf("key import printed %q", out)
	}

	// A wire assignment of the same witness, solved with gnark.
	sol, err := f.R1CS.Solve(f.FullWitness)
	if err != nil {
		t.Fatal(err)
	}
	r1cs := f.R1CS.(*cs.R1CS)
	assignment := filepath.Join(t.TempDir(), "0"+circuit.ExtAssignment)
	os.WriteFile(assignment, circuit.MarshalAssignment(sol.(*cs.R1CSSolution).W, r1cs.GetNbPublicVariables(), r1cs.GetNbSecretVariables()), 0o644)

	for _, files := range [][]string{{f.Witness}, {"--assignment", assignment}} {
		proofs := filepath.Join(t.TempDir(), "proofs")
		args := append([]string{"prove", "--keys", keys, "--circuit", "mine", "--backend", backend, "--out", proofs}, files...)
		if out := zkhost(args...); !strings.Contains(out, "1 partition proven and verified") {
			t.Errorf("prove %v printed %q", files, out)
		}
		if out := zkhost("verify", "--keys", keys, "--circuit", "mine", proofs); !strings.Contains(out, "1 of 1 proof verifies") {
			t.Errorf("verify printed %q", out)
		}
	}

	// Mistakes: the key set exists now; a flag is missing; --assignment without files.
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"key", "import", "--ccs", f.CCS, "--pk", f.PK, "--vk", f.VK, "--name", "mine", "--out", keys}, 1, "already exist"},
		{[]string{"key", "import", "--ccs", f.CCS, "--pk", f.PK, "--name", "mine", "--out", keys}, 2, "--ccs, --pk, --vk, --name and --out are required"},
		{[]string{"prove", "--keys", keys, "--circuit", "mine", "--assignment", "--out", filepath.Join(t.TempDir(), "p")}, 2, "--assignment needs the wire assignment files"},
	} {
		var stdout, stderr bytes.Buffer
		if code := run(tc.args, &stdout, &stderr); code != tc.code || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr.String(), tc.code, tc.want)
		}
	}
}
