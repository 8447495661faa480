package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zkhost/zkhost/sdk/circom/circomtest"
)

// circomTestdata is one of sdk/circom's files, made by its testdata/make.sh with
// circom2 and snarkjs.
func circomTestdata(name string) string {
	return circomtest.Path(name)
}

// brokenWtns writes a copy of the .wtns at path whose last wire is changed,
// which breaks a constraint, and returns the copy's path.
func brokenWtns(t *testing.T, path string) string {
	t.Helper()
	bad, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	bad[len(bad)-32]++
	badPath := filepath.Join(t.TempDir(), "bad.wtns")
	if err := os.WriteFile(badPath, bad, 0o644); err != nil {
		t.Fatal(err)
	}
	return badPath
}

// TestCircomImportAndProve is docs/circom.md as a user types it, from the files
// circom and snarkjs made: `zkhost key import` of the .r1cs and .zkey, `zkhost
// prove` of .wtns witnesses through the daemon's pipeline and the CPU backend with
// snarkjs's files written, `zkhost verify` (gnark) of the proofs, and snarkjs's own
// verifier, which accepts every proof and refuses a tampered one. A witness that
// breaks a constraint is refused, naming it.
func TestCircomImportAndProve(t *testing.T) {
	backend := buildCPUBackend(t, t.TempDir())
	zkhost := zkhostRunner(t)
	keys := t.TempDir()
	out := zkhost("key", "import", "--r1cs", circomTestdata("poseidonbits_bls12381.r1cs"), "--zkey", circomTestdata("poseidonbits_bls12381.zkey"),
		"--witness", circomTestdata("poseidonbits_bls12381.wtns"), "--out", keys)
	if !strings.Contains(out, "wrote poseidonbits_bls12381.{ccs,vk,pk,json}") || !strings.Contains(out, "proved and verified") {
		t.Errorf("key import printed %q", out)
	}

	// Two partitions, the same witness twice: each proof has its own r and s.
	proofs := filepath.Join(t.TempDir(), "proofs")
	wtns := circomTestdata("poseidonbits_bls12381.wtns")
	out = zkhost("prove", "--keys", keys, "--circuit", "poseidonbits_bls12381", "--backend", backend, "--threads", "2",
		"--snarkjs", "--out", proofs, wtns, wtns)
	if !strings.Contains(out, "2 partitions proven and verified") {
		t.Errorf("prove printed %q", out)
	}
	if out := zkhost("verify", "--keys", keys, "--circuit", "poseidonbits_bls12381", proofs); !strings.Contains(out, "2 of 2 proofs verify") {
		t.Errorf("verify printed %q", out)
	}

	// A witness whose last wire is changed breaks a constraint, which is named.
	badPath := brokenWtns(t, wtns)
	var stdout, stderr bytes.Buffer
	code := run([]string{"prove", "--keys", keys, "--circuit", "poseidonbits_bls12381", "--backend", backend,
		"--out", filepath.Join(t.TempDir(), "p"), badPath}, &stdout, &stderr)
	if code == 0 || !strings.Contains(stderr.String(), "does not satisfy constraint") {
		t.Errorf("prove of a wrong witness: exit %d, stderr %q; want a refusal naming the constraint", code, stderr.String())
	}

	t.Run("snarkjs verifies", func(t *testing.T) {
		snarkjs := circomtest.Snarkjs(t)
		vk := circomTestdata("poseidonbits_bls12381.vk.json")
		verify := func(public, proof string) (string, error) {
			out, err := exec.Command(snarkjs, "groth16", "verify", vk, public, proof).CombinedOutput()
			return string(out), err
		}
		for _, i := range []string{"0", "1"} {
			if out, err := verify(filepath.Join(proofs, i+".public.json"), filepath.Join(proofs, i+".proof.json")); err != nil || !strings.Contains(out, "OK") {
				t.Errorf("snarkjs refused proof %s: %v\n%s", i, err, out)
			}
		}
		// The proof of partition 0 with the public values changed: refused.
		public, err := os.ReadFile(filepath.Join(proofs, "0.public.json"))
		if err != nil {
			t.Fatal(err)
		}
		tampered := filepath.Join(t.TempDir(), "public.json")
		if err := os.WriteFile(tampered, bytes.Replace(public, []byte(`"23"`), []byte(`"24"`), 1), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := verify(tampered, filepath.Join(proofs, "0.proof.json")); err == nil || strings.Contains(out, "OK!") {
			t.Errorf("snarkjs accepted a proof for tampered public values: %v\n%s", err, out)
		}
	})
}

// TestBenchCircomWitnesses benches an imported BN254 circom circuit from its
// .wtns file: the daemon proves and verifies every partition of every job,
// and the isolated proof after the run is measured the same way.
func TestBenchCircomWitnesses(t *testing.T) {
	backend := buildCPUBackend(t, t.TempDir())
	zkhost := zkhostRunner(t)
	keys := t.TempDir()
	zkhost("key", "import", "--r1cs", circomTestdata("poseidonbits_bn128.r1cs"), "--zkey", circomTestdata("poseidonbits_bn128.zkey"), "--out", keys)
	wtns := circomTestdata("poseidonbits_bn128.wtns")
	jsonOut := filepath.Join(t.TempDir(), "bench.json")
	zkhost("bench", "--keys", keys, "--circuit", "poseidonbits_bn128", "--backend", backend, "--threads", "2",
		"--jobs", "2", "--concurrency", "1", "--isolated", "1", "--no-timeline", "--memory-every", "0",
		"--json", jsonOut, wtns, wtns)
	b, err := os.ReadFile(jsonOut)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Proofs, FailedJobs, Partitions int
		Errors                         []string
		Steady                         struct{ IsolatedProofs int }
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if res.Proofs != 4 || res.FailedJobs != 0 || res.Partitions != 2 || len(res.Errors) != 0 || res.Steady.IsolatedProofs != 1 {
		t.Errorf("bench of two jobs of the two .wtns partitions: %+v; want 4 proofs, 2 partitions a job, 1 isolated proof, no failure", res)
	}

	// A witness that breaks a constraint fails the jobs, and bench says so.
	badPath := brokenWtns(t, wtns)
	var stdout, stderr bytes.Buffer
	code := run([]string{"bench", "--keys", keys, "--circuit", "poseidonbits_bn128", "--backend", backend, "--threads", "2",
		"--jobs", "1", "--isolated", "0", "--no-timeline", "--memory-every", "0", badPath}, &stdout, &stderr)
	if code == 0 || !strings.Contains(stdout.String()+stderr.String(), "does not satisfy constraint") {
		t.Errorf("bench of a wrong witness: exit %d, stdout %q, stderr %q; want a failure naming the constraint", code, stdout.String(), stderr.String())
	}
}
