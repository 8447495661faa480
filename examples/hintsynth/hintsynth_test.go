package main

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint/solver"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/logger"

	"github.com/zkhost/zkhost/examples/hintsynth/rootchain"
	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/config"
	"github.com/zkhost/zkhost/host/daemon"
	"github.com/zkhost/zkhost/sdk/circuit"
	"github.com/zkhost/zkhost/sdk/synthtest"
)

// steps sizes the example circuit: 64 fifth roots (3 constraints each) and the
// bit decomposition of X, about 450 constraints.
const steps = 64

// keySet is the example circuit's key set name.
const keySet = "rootchain-s64"

// Made once by TestMain.
var (
	synthBin string // this module's synthesizer, built
	cpuBin   string // zkhost's CPU backend, built from the root module
	keyDir   string // keySet's key files
)

func TestMain(m *testing.M) {
	logger.Disable()
	code, err := setup(m)
	if err != nil {
		fmt.Fprintln(os.Stderr, "hintsynth test:", err)
		os.Exit(1)
	}
	os.Exit(code)
}

func setup(m *testing.M) (int, error) {
	work, err := os.MkdirTemp("", "hintsynth-test-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(work)
	synthBin = filepath.Join(work, "hintsynth")
	cpuBin = filepath.Join(work, "zkhost-backend-cpu")
	keyDir = filepath.Join(work, "keys")
	for _, b := range []struct{ dir, out, pkg string }{
		{".", synthBin, "."},
		{"../..", cpuBin, "./cmd/zkhost-backend-cpu"},
	} {
		cmd := exec.Command("go", "build", "-o", b.out, b.pkg)
		cmd.Dir = b.dir
		if out, err := cmd.CombinedOutput(); err != nil {
			return 0, fmt.Errorf("go build %s: %v\n%s", b.pkg, err, out)
		}
	}
	if err := circuit.KeygenCircuit(context.Background(), &rootchain.Circuit{Steps: steps}, keySet, keyDir); err != nil {
		return 0, err
	}
	return m.Run(), nil
}

// witnesses returns n valid full witnesses (as a client submits them) and
// their public parts.
func witnesses(t *testing.T, seed uint64, n int) ([][]byte, []witness.Witness) {
	t.Helper()
	rng := rand.New(rand.NewPCG(seed, 0))
	var full [][]byte
	var pub []witness.Witness
	for range n {
		w, err := rootchain.Witness(steps, rng)
		if err != nil {
			t.Fatal(err)
		}
		b, err := w.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		p, err := w.Public()
		if err != nil {
			t.Fatal(err)
		}
		full, pub = append(full, b), append(pub, p)
	}
	return full, pub
}

// TestConformance runs the SDK's conformance suite against hintsynth.
func TestConformance(t *testing.T) {
	valid, _ := witnesses(t, 1, 3)
	// X one off the chain's end does not satisfy the circuit.
	a := rootchain.Assignment(steps, rand.New(rand.NewPCG(2, 0)))
	x := a.X.(fr.Element)
	one := fr.One()
	x.Add(&x, &one)
	a.X = x
	w, err := frontend.NewWitness(a, ecc.BLS12_381.ScalarField())
	if err != nil {
		t.Fatal(err)
	}
	bad, err := w.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	synthtest.Run(t, synthtest.Config{
		SynthesizerPath: synthBin, KeyDir: keyDir, Circuit: keySet,
		Witnesses: valid, Unsatisfiable: [][]byte{bad},
	})
}

// TestDaemonProvesWithHint serves the circuit from a zkhost daemon with the CPU
// backend twice: as "rootchain", synthesized by hintsynth, and as
// "rootchain-builtin", by the daemon's own solver. A multi-partition job of the
// first is proved, every proof verified here with gnark; a job of the second is
// refused, naming the hint the daemon does not know.
func TestDaemonProvesWithHint(t *testing.T) {
	dir := t.TempDir()
	pk := filepath.Join(keyDir, keySet+".pk")
	text := fmt.Sprintf(`state_dir = %q
[api]
socket = %q
[budget]
bytes = "1GiB"
[synthesis]
workers = 2
threads = 1
[[circuit]]
name = "rootchain"
keys = %q
synthesizer = %q
[[circuit]]
name = "rootchain-builtin"
keys = %q
pk = %q
[[device]]
backend = %q
[device.options]
threads = "1"
`, filepath.Join(dir, "state"), filepath.Join(dir, "zk.sock"), keyDir, synthBin, keyDir, pk, cpuBin)
	cfg, err := config.Parse([]byte(text), filepath.Join(dir, "zkhost.toml"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	d, err := daemon.New(ctx, cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	runDone := make(chan struct{})
	runCtx, stop := context.WithCancel(ctx)
	go func() { d.Run(runCtx); close(runDone) }()
	defer func() { stop(); <-runDone }()

	const n = 4
	full, pub := witnesses(t, 3, n)
	job, err := d.Submit(ctx, api.SubmitRequest{Circuit: "rootchain", Witnesses: full})
	if err != nil {
		t.Fatal(err)
	}
	// The daemon's own solver lacks the hint: a witness job is refused at once.
	_, err = d.Submit(ctx, api.SubmitRequest{Circuit: "rootchain-builtin", Witnesses: full[:1]})
	if err == nil || !strings.Contains(err.Error(), "FifthRoot") || !strings.Contains(err.Error(), "synthesizer plugin") {
		t.Errorf("a witness job of the built-in solver: %v, want a refusal naming the missing FifthRoot hint", err)
	}
	done := await(ctx, t, d, job.ID)
	if done.State != api.JobDone || len(done.Partitions) != n {
		t.Fatalf("job is %s with %d partitions (error %q), want done with %d", done.State, len(done.Partitions), done.Error, n)
	}
	c, err := circuit.Load(keyDir, keySet)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	verify := func(what string, done api.Job) {
		t.Helper()
		for i, p := range done.Partitions {
			proof := groth16.NewProof(ecc.BLS12_381)
			if _, err := proof.ReadFrom(bytes.NewReader(p.Proof)); err != nil {
				t.Fatalf("%s, partition %d: the proof does not decode: %v", what, i, err)
			}
			if err := groth16.Verify(proof, c.VK, pub[i]); err != nil {
				t.Fatalf("%s, partition %d: the proof does not verify: %v", what, i, err)
			}
		}
	}
	verify("witness job", done)

	// Wire assignments solved here, where the hint is, need no solver: the
	// daemon checks them against every constraint itself, for the plugin's
	// circuit as for any other.
	assignments, err := c.GnarkAssignments(full[:2], solver.WithHints(rootchain.FifthRoot))
	if err != nil {
		t.Fatal(err)
	}
	ajob, err := d.Submit(ctx, api.SubmitRequest{Circuit: "rootchain", Assignments: assignments})
	if err != nil {
		t.Fatal(err)
	}
	adone := await(ctx, t, d, ajob.ID)
	if adone.State != api.JobDone || len(adone.Partitions) != len(assignments) {
		t.Fatalf("assignment job is %s with %d partitions (error %q), want done with %d", adone.State, len(adone.Partitions), adone.Error, len(assignments))
	}
	verify("assignment job", adone)
}

// await waits for a job to end and returns it with its proofs.
func await(ctx context.Context, t *testing.T, d *daemon.Daemon, id string) api.Job {
	t.Helper()
	if err := d.Await(ctx, id, func(api.JobEvent) error { return nil }); err != nil {
		t.Fatalf("await %s: %v", id, err)
	}
	job, err := d.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	return job
}
