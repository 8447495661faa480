package oneshot

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"

	"github.com/zkhost/zkhost/sdk/circuit"
	"github.com/zkhost/zkhost/sdk/circuits"
	"github.com/zkhost/zkhost/sdk/shm"
)

var (
	backendBin string // zkhost-backend-cpu, built once
	noGPUBin   string // zkhost-backend-cuda built without CUDA: a backend without a usable device
	keyDir     string // small merkle and chain keys, generated once
)

func TestMain(m *testing.M) {
	tmp, err := os.MkdirTemp("", "oneshot-test-")
	if err != nil {
		panic(err)
	}
	code := func() int {
		defer os.RemoveAll(tmp)
		backendBin = filepath.Join(tmp, "zkhost-backend-cpu")
		if out, err := exec.Command("go", "build", "-o", backendBin, "github.com/zkhost/zkhost/cmd/zkhost-backend-cpu").CombinedOutput(); err != nil {
			println("building the backend:", err.Error(), string(out))
			return 1
		}
		noGPUBin = filepath.Join(tmp, "zkhost-backend-cuda")
		if out, err := exec.Command("go", "build", "-o", noGPUBin, "github.com/zkhost/zkhost/cmd/zkhost-backend-cuda").CombinedOutput(); err != nil {
			println("building the CUDA backend without CUDA:", err.Error(), string(out))
			return 1
		}
		keyDir = filepath.Join(tmp, "keys")
		for _, spec := range []struct {
			name   string
			params map[string]int
		}{{"merkle", map[string]int{"d": 4, "k": 2}}, {"chain", map[string]int{"k": 8}}} {
			s, err := circuits.Lookup(spec.name, spec.params)
			if err != nil {
				panic(err)
			}
			if err := circuit.Keygen(s, keyDir); err != nil {
				println("keygen:", err.Error())
				return 1
			}
		}
		return m.Run()
	}()
	os.Exit(code)
}

func options(t *testing.T) Options {
	return Options{KeyDir: keyDir, Circuit: "merkle", Partitions: 3, OutDir: t.TempDir(), Backend: backendBin}
}

// shmLeft lists the partitions (memfds) this process still holds after a run.
func shmLeft(t *testing.T) []string {
	t.Helper()
	left, err := shm.Held(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	return left
}

func TestProveThroughBackendProcess(t *testing.T) {
	opts := options(t)
	res, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Partitions) != 3 || res.Backend.Name != "zkhost-backend-cpu" {
		t.Fatalf("result: %+v", res)
	}
	c, err := circuit.Load(keyDir, "merkle-d4-k2")
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	seen := map[string]bool{}
	for _, p := range res.Partitions {
		if !p.Verified || p.Prove <= 0 || p.DeviceBusy <= 0 || len(p.Phases) == 0 {
			t.Errorf("partition %d: %+v", p.Index, p)
		}
		// The daemon's timeline gave every figure: the host's phases, and the
		// backend's within the span they report and within the Prove call.
		if p.Synthesis <= 0 || p.Transfer <= 0 || p.Verify <= 0 || p.BackendWall <= 0 || p.BackendWall > p.Prove || p.Constraints <= 0 {
			t.Errorf("partition %d: figures %+v", p.Index, p)
		}
		var busy time.Duration
		for _, ph := range p.Phases {
			busy += ph.DeviceBusy
			if ph.Name == "" || ph.Start < 0 || ph.Wall < 0 || ph.Start+ph.Wall > p.BackendWall {
				t.Errorf("partition %d: phase %+v outside the backend's span %v", p.Index, ph, p.BackendWall)
			}
		}
		if busy != p.DeviceBusy {
			t.Errorf("partition %d: device busy %v, its phases say %v", p.Index, p.DeviceBusy, busy)
		}
		// Check the files independently of the host's own verification.
		proof := groth16.NewProof(ecc.BLS12_381)
		f, err := os.Open(p.ProofFile)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := proof.ReadFrom(f); err != nil {
			t.Fatal(err)
		}
		f.Close()
		pubBytes, err := os.ReadFile(p.PublicFile)
		if err != nil {
			t.Fatal(err)
		}
		seen[string(pubBytes)] = true
		pub, _ := witness.New(ecc.BLS12_381.ScalarField())
		if err := pub.UnmarshalBinary(pubBytes); err != nil {
			t.Fatal(err)
		}
		if err := groth16.Verify(proof, c.VK, pub); err != nil {
			t.Errorf("partition %d: written proof does not verify: %v", p.Index, err)
		}
	}
	if len(seen) != 3 {
		t.Errorf("partitions share public inputs: %d distinct of 3", len(seen))
	}
	if _, err := os.Stat(filepath.Join(opts.OutDir, "summary.json")); err != nil {
		t.Error(err)
	}
	if left := shmLeft(t); len(left) > 0 {
		t.Errorf("shared-memory files left: %v", left)
	}
}

func TestWitnessFiles(t *testing.T) {
	opts := options(t)
	spec, _ := circuits.Lookup("merkle", map[string]int{"d": 4, "k": 2})
	wdir := t.TempDir()
	if err := circuit.WriteWitnesses(spec, 2, wdir); err != nil {
		t.Fatal(err)
	}
	opts.Partitions = 0
	opts.WitnessFiles = []string{circuit.WitnessPath(wdir, 0), circuit.WitnessPath(wdir, 1)}
	res, err := Run(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Partitions) != 2 {
		t.Fatalf("%d partitions", len(res.Partitions))
	}
}

func TestBadInputs(t *testing.T) {
	chainSpec, _ := circuits.Lookup("chain", map[string]int{"k": 8})
	wrongShape := t.TempDir()
	if err := circuit.WriteWitnesses(chainSpec, 1, wrongShape); err != nil {
		t.Fatal(err)
	}
	// A corrupted key: a copy of the merkle keys with one byte of the pk flipped.
	corrupt := t.TempDir()
	for _, ext := range []string{circuit.ExtCCS, circuit.ExtVK, circuit.ExtPK, circuit.ExtMeta} {
		data, err := os.ReadFile(filepath.Join(keyDir, "merkle-d4-k2"+ext))
		if err != nil {
			t.Fatal(err)
		}
		if ext == circuit.ExtPK {
			data[len(data)-100] ^= 1
		}
		if err := os.WriteFile(filepath.Join(corrupt, "merkle-d4-k2"+ext), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	notExec := filepath.Join(t.TempDir(), "backend")
	if err := os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name string
		edit func(*Options)
		want string
	}{
		{"unknown circuit", func(o *Options) { o.Circuit = "nosuch" }, `no key set named "nosuch"`},
		{"missing key directory", func(o *Options) { o.KeyDir = "/nonexistent/keys" }, "/nonexistent/keys"},
		{"witness of the wrong shape", func(o *Options) {
			o.Partitions, o.WitnessFiles = 0, []string{circuit.WitnessPath(wrongShape, 0)}
		}, "public and 1 secret values, circuit merkle-d4-k2 wants"},
		{"missing witness file", func(o *Options) { o.Partitions, o.WitnessFiles = 0, []string{"/nonexistent.wtns"} }, "/nonexistent.wtns"},
		{"corrupted key file", func(o *Options) { o.KeyDir = corrupt }, "g1"},
		{"missing backend", func(o *Options) { o.Backend = "/nonexistent/zkhost-backend-cpu" }, "/nonexistent/zkhost-backend-cpu"},
		{"non-executable backend", func(o *Options) { o.Backend = notExec }, "not executable"},
		{"nothing to prove", func(o *Options) { o.Partitions = 0 }, "nothing to prove"},
		{"no output directory", func(o *Options) { o.OutDir = "" }, "--out"},
		{"backend checksum mismatch", func(o *Options) { o.BackendSHA256 = make([]byte, 32) }, "checksum"},
		{"backend without a device", func(o *Options) { o.Backend = noGPUBin }, "backend zkhost-backend-cuda has no usable device: unavailable: built without CUDA"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			opts := options(t)
			tc.edit(&opts)
			_, err := Run(context.Background(), opts)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got error %v, want one containing %q", err, tc.want)
			}
			if strings.HasPrefix(err.Error(), "circuit: ") {
				t.Errorf("error %q starts with a package name", err)
			}
			if left := shmLeft(t); len(left) > 0 {
				t.Errorf("shared-memory files left: %v", left)
			}
		})
	}
}

func TestCancelCleansUp(t *testing.T) {
	opts := options(t)
	opts.Partitions = 50
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(1500*time.Millisecond, cancel)
	start := time.Now()
	_, err := Run(ctx, opts)
	if err == nil {
		t.Fatal("a cancelled run succeeded")
	}
	if el := time.Since(start); el > 20*time.Second {
		t.Errorf("cancel took %v", el)
	}
	// The error says what was left behind: as many proofs as it counts, no summary.
	var ie *InterruptedError
	if !errors.As(err, &ie) || !errors.Is(err, context.Canceled) || ie.Total != 50 || ie.Written >= 50 {
		t.Fatalf("cancelled run = %v, want an InterruptedError wrapping context.Canceled", err)
	}
	if proofs, _ := filepath.Glob(filepath.Join(opts.OutDir, "*.proof")); len(proofs) != ie.Written {
		t.Errorf("%d proofs written, the error says %d", len(proofs), ie.Written)
	}
	if _, err := os.Stat(filepath.Join(opts.OutDir, "summary.json")); !os.IsNotExist(err) {
		t.Errorf("an interrupted run wrote summary.json: %v", err)
	}
	want := fmt.Sprintf("interrupted: wrote %d of 50 proofs to %s; the directory is incomplete (no summary.json)", ie.Written, opts.OutDir)
	if err.Error() != want {
		t.Errorf("error %q\nwant  %q", err, want)
	}
	if left := shmLeft(t); len(left) > 0 {
		t.Errorf("shared-memory files left after cancel: %v", left)
	}
}

// summary.json of the gnark peer, which reports no phases, has [] for them, not null.
func TestGnarkPeerSummary(t *testing.T) {
	opts := options(t)
	opts.Partitions, opts.GnarkPeer = 1, true
	if _, err := Run(context.Background(), opts); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(opts.OutDir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(data), `"phases": []`) || strings.Contains(string(data), "null") {
		t.Errorf("summary.json:\n%s", data)
	}
}
