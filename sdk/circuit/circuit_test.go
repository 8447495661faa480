package circuit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	"github.com/consensys/gnark/constraint/solver"
	"github.com/consensys/gnark/frontend"
	"github.com/consensys/gnark/frontend/cs/r1cs"

	"github.com/zkhost/zkhost/sdk/circuits"
	"github.com/zkhost/zkhost/sdk/keyconv"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/testcircuit"
)

// The test circuits: small, so the whole package runs in seconds.
var testSpecs = []struct {
	name   string
	params map[string]int
}{
	{"chain", map[string]int{"k": 8}},
	{"merkle", map[string]int{"k": 2, "d": 4}},
}

var (
	keysOnce sync.Once
	keysDir  string
	keysErr  error
)

// sharedKeys runs Keygen for every test circuit once, into a directory tests must copy
// before changing anything in it.
func sharedKeys(t *testing.T) string {
	t.Helper()
	keysOnce.Do(func() {
		keysDir, keysErr = os.MkdirTemp("", "zkhost-circuit-test-")
		if keysErr != nil {
			return
		}
		for _, ts := range testSpecs {
			spec, err := circuits.Lookup(ts.name, ts.params)
			if err != nil {
				keysErr = err
				return
			}
			if keysErr = Keygen(spec, keysDir); keysErr != nil {
				return
			}
		}
	})
	if keysErr != nil {
		t.Fatal(keysErr)
	}
	return keysDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	for _, dir := range []string{keysDir, bn254KeysDir} {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
	os.Exit(code)
}

func spec(t *testing.T, i int) circuits.Spec {
	t.Helper()
	s, err := circuits.Lookup(testSpecs[i].name, testSpecs[i].params)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// copyKeys copies circuit name's files from the shared key directory into a fresh one.
func copyKeys(t *testing.T, name string) string {
	t.Helper()
	src := sharedKeys(t)
	dst := t.TempDir()
	for _, ext := range []string{ExtCCS, ExtVK, ExtPK, ExtMeta} {
		b, err := os.ReadFile(filepath.Join(src, name+ext))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, name+ext), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

func load(t *testing.T, dir, name string) *Circuit {
	t.Helper()
	c, err := Load(dir, name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func TestKeygenAndLoad(t *testing.T) {
	dir := sharedKeys(t)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 4*len(testSpecs) {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("key directory holds %v, want 4 files per circuit and nothing else", names)
	}
	for i := range testSpecs {
		s := spec(t, i)
		t.Run(s.ID(), func(t *testing.T) {
			c := load(t, dir, s.ID())
			if c.Meta == nil {
				t.Fatal("no metadata")
			}
			if c.Meta.ID != s.ID() || c.Meta.Circuit != s.Name || c.Meta.Setup != SetupDevelopment || c.Meta.Curve != "bls12-381" {
				t.Errorf("metadata %+v", c.Meta)
			}
			if c.Meta.PKDigest != c.PKDigestHex() {
				t.Errorf("metadata pk digest %s, key %s", c.Meta.PKDigest, c.PKDigestHex())
			}
			for k, v := range s.Params {
				if c.Meta.Params[k] != v {
					t.Errorf("metadata param %s = %d, want %d", k, c.Meta.Params[k], v)
				}
			}
			if c.NbPublic != c.CCS.GetNbPublicVariables() || c.NbConstraints != c.CCS.GetNbConstraints() {
				t.Errorf("sizes %d public %d constraints disagree with the ccs", c.NbPublic, c.NbConstraints)
			}
			if c.DomainSize != ecc.NextPowerOfTwo(uint64(c.NbConstraints)) || c.Key().DomainSize != c.DomainSize {
				t.Errorf("domain %d (key %d) for %d constraints", c.DomainSize, c.Key().DomainSize, c.NbConstraints)
			}
			if s.Name == "chain" && c.NbConstraints != 256 {
				t.Errorf("chain k=8 has %d constraints, want 256", c.NbConstraints)
			}
			if c.PKPath != filepath.Join(dir, s.ID()+ExtPK) {
				t.Errorf("PKPath %s", c.PKPath)
			}
			t.Logf("%s: %d constraints, %d wires, %d public, domain %d", s.ID(), c.NbConstraints, c.NbWires, c.NbPublic, c.DomainSize)
		})
	}
}

func TestKeygenRefusesExisting(t *testing.T) {
	s := spec(t, 0)
	dir := copyKeys(t, s.ID())
	before, _ := os.ReadFile(filepath.Join(dir, s.ID()+ExtPK))
	err := Keygen(s, dir)
	if !errors.Is(err, ErrExists) {
		t.Fatalf("Keygen over an existing key set: %v, want ErrExists", err)
	}
	after, _ := os.ReadFile(filepath.Join(dir, s.ID()+ExtPK))
	if !bytes.Equal(before, after) {
		t.Error("a refused Keygen changed the proving key")
	}
}

// committed uses gnark's Commit API, which zkhost does not support.
func TestKeygenRefusesCommitments(t *testing.T) {
	dir := t.TempDir()
	err := keygen(context.Background(), dir, &testcircuit.Committed{}, Metadata{Version: MetadataVersion, ID: "committed"})
	if !errors.Is(err, ErrCommitments) || !strings.Contains(err.Error(), "commitments") {
		t.Fatalf("keygen of a circuit with commitments: %v, want ErrCommitments", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("a refused keygen left %d entries", len(entries))
	}
}

func TestKeygenLeavesNothingOnError(t *testing.T) {
	s := spec(t, 0)
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	// A directory that cannot be created.
	if err := Keygen(s, filepath.Join(dir, "sub", "missing", "\x00bad")); err == nil {
		t.Error("Keygen into an invalid directory succeeded")
	}
	if err := keygen(context.Background(), dir, s.Circuit(), Metadata{ID: "../escape"}); err == nil {
		t.Error("keygen with a path as name succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("failed keygens left %d entries", len(entries))
	}
}

func TestLoadErrors(t *testing.T) {
	chain := spec(t, 0).ID()
	merkle := spec(t, 1).ID()
	shared := sharedKeys(t)

	// A second key set for the same circuit: same ccs, a different setup.
	other := t.TempDir()
	if err := Keygen(spec(t, 0), other); err != nil {
		t.Fatal(err)
	}

	cp := func(t *testing.T, from, to string) {
		b, err := os.ReadFile(from)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(to, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name   string
		mutate func(t *testing.T, dir string)
		want   string
	}{
		{"missing ccs", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, chain+ExtCCS)) }, chain + ".ccs: no such file"},
		{"missing vk", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, chain+ExtVK)) }, chain + ".vk: no such file"},
		{"missing pk", func(t *testing.T, dir string) { os.Remove(filepath.Join(dir, chain+ExtPK)) }, chain + ".pk: no such file"},
		{"corrupt pk section", func(t *testing.T, dir string) {
			p := filepath.Join(dir, chain+ExtPK)
			f, err := keyfile.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			z := f.Sections()[keyfile.SectionG1Z-1]
			f.Close()
			b, _ := os.ReadFile(p)
			b[z.Offset+10] ^= 1
			os.WriteFile(p, b, 0o644)
		}, "section g1_z is corrupt"},
		{"ccs of another circuit", func(t *testing.T, dir string) {
			cp(t, filepath.Join(shared, merkle+ExtCCS), filepath.Join(dir, chain+ExtCCS))
		}, "does not match"},
		{"vk of another setup", func(t *testing.T, dir string) {
			cp(t, filepath.Join(other, chain+ExtVK), filepath.Join(dir, chain+ExtVK))
		}, chain + ".vk: SHA-256"},
		{"vk of another setup, no metadata", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, chain+ExtMeta))
			cp(t, filepath.Join(other, chain+ExtVK), filepath.Join(dir, chain+ExtVK))
		}, "different setups"},
		{"pk of another setup", func(t *testing.T, dir string) {
			cp(t, filepath.Join(other, chain+ExtPK), filepath.Join(dir, chain+ExtPK))
		}, "different setups"},
		{"pk of another circuit, no metadata", func(t *testing.T, dir string) {
			os.Remove(filepath.Join(dir, chain+ExtMeta))
			cp(t, filepath.Join(shared, merkle+ExtPK), filepath.Join(dir, chain+ExtPK))
		}, "the files are not one key set"},
		{"metadata pk digest", func(t *testing.T, dir string) {
			p := filepath.Join(dir, chain+ExtMeta)
			b, _ := os.ReadFile(p)
			var m Metadata
			json.Unmarshal(b, &m)
			m.PKDigest = strings.Repeat("00", 32)
			b, _ = json.Marshal(m)
			os.WriteFile(p, b, 0o644)
		}, "header digest"},
		{"bad metadata", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, chain+ExtMeta), []byte("{"), 0o644)
		}, "bad metadata"},
		{"garbage ccs", func(t *testing.T, dir string) {
			os.WriteFile(filepath.Join(dir, chain+ExtCCS), bytes.Repeat([]byte{0xff}, 100), 0o644)
		}, "is not a gnark constraint system"},
		{"truncated vk", func(t *testing.T, dir string) {
			p := filepath.Join(dir, chain+ExtVK)
			b, _ := os.ReadFile(p)
			os.WriteFile(p, b[:len(b)/2], 0o644)
		}, "is not a gnark BLS12-381 verifying key"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := copyKeys(t, chain)
			tc.mutate(t, dir)
			c, err := Load(dir, chain)
			if err == nil {
				c.Close()
				t.Fatalf("Load succeeded, want an error containing %q", tc.want)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not contain %q", err, tc.want)
			}
		})
	}
	if _, err := Load(shared, "../"+chain); err == nil {
		t.Error("Load of a path-like name succeeded")
	}

	// Without metadata a consistent set still loads (keys converted from gnark files).
	dir := copyKeys(t, chain)
	os.Remove(filepath.Join(dir, chain+ExtMeta))
	c := load(t, dir, chain)
	if c.Meta != nil {
		t.Error("Meta is set without a metadata file")
	}
}

func TestLoadRefusesCommitments(t *testing.T) {
	ccs, err := frontend.Compile(ecc.BLS12_381.ScalarField(), r1cs.NewBuilder, &testcircuit.Committed{})
	if err != nil {
		t.Fatal(err)
	}
	chain := spec(t, 0).ID()
	dir := copyKeys(t, chain)
	os.Remove(filepath.Join(dir, chain+ExtMeta))
	f, err := os.Create(filepath.Join(dir, chain+ExtCCS))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ccs.WriteTo(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := Load(dir, chain); !errors.Is(err, ErrCommitments) {
		t.Errorf("Load of a circuit with commitments: %v, want ErrCommitments", err)
	}
}

func TestWitnessesSynthesizeAndProve(t *testing.T) {
	dir := sharedKeys(t)
	for i := range testSpecs {
		s := spec(t, i)
		t.Run(s.ID(), func(t *testing.T) {
			c := load(t, dir, s.ID())
			wdir := filepath.Join(t.TempDir(), "w")
			const n = 3
			if err := WriteWitnesses(s, n, wdir); err != nil {
				t.Fatal(err)
			}
			entries, _ := os.ReadDir(wdir)
			if len(entries) != n {
				t.Errorf("%d files in the witness directory, want %d", len(entries), n)
			}
			seen := map[string]int{}
			var publics []witness.Witness
			for p := range n {
				path := WitnessPath(wdir, p)
				w, err := ReadWitness(path, c)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := os.ReadFile(path)
				if q, dup := seen[string(b)]; dup {
					t.Errorf("partitions %d and %d have the same witness", q, p)
				}
				seen[string(b)] = p

				W, A, B, err := Synthesize(c, w, 1)
				if err != nil {
					t.Fatalf("partition %d: %v", p, err)
				}
				if len(W) != c.NbWires || len(A) != c.NbConstraints || len(B) != c.NbConstraints {
					t.Fatalf("partition %d: len W %d A %d B %d, want %d, %d, %d", p, len(W), len(A), len(B), c.NbWires, c.NbConstraints, c.NbConstraints)
				}
				// C, which Synthesize leaves out, is A∘B.
				sol, err := gnarkSolve(c, w)
				if err != nil {
					t.Fatal(err)
				}
				// Synthesize's solver gives gnark's vectors, word for word.
				if !slices.Equal(W, sol.W) || !slices.Equal(A, sol.A) || !slices.Equal(B, sol.B) {
					t.Fatalf("partition %d: Synthesize's W, A, B differ from gnark's solution", p)
				}
				for j := range sol.C {
					var ab fr.Element
					ab.Mul(&sol.A[j], &sol.B[j])
					if !ab.Equal(&sol.C[j]) {
						t.Fatalf("partition %d constraint %d: C ≠ A·B", p, j)
					}
				}

				// A full gnark proof with the proving key read back from our key file.
				proof, err := groth16.Prove(c.CCS, keyconv.ToGnark(c.Key()), w)
				if err != nil {
					t.Fatalf("partition %d: prove: %v", p, err)
				}
				pub, err := w.Public()
				if err != nil {
					t.Fatal(err)
				}
				if err := groth16.Verify(proof, c.VK, pub); err != nil {
					t.Fatalf("partition %d: verify: %v", p, err)
				}
				if p > 0 {
					// The proof does not verify against another partition's public inputs.
					if err := groth16.Verify(proof, c.VK, publics[p-1]); err == nil {
						t.Errorf("partition %d's proof verifies with partition %d's public inputs", p, p-1)
					}
				}
				publics = append(publics, pub)
			}
		})
	}
	if err := WriteWitnesses(spec(t, 0), 0, t.TempDir()); err == nil {
		t.Error("WriteWitnesses with n = 0 succeeded")
	}
}

func TestReadWitnessRejects(t *testing.T) {
	dir := sharedKeys(t)
	chain := load(t, dir, spec(t, 0).ID())
	merkle := load(t, dir, spec(t, 1).ID())
	wdir := t.TempDir()
	if err := WriteWitnesses(spec(t, 0), 1, wdir); err != nil {
		t.Fatal(err)
	}
	good, err := os.ReadFile(WitnessPath(wdir, 0))
	if err != nil {
		t.Fatal(err)
	}
	write := func(t *testing.T, b []byte) string {
		p := filepath.Join(t.TempDir(), "x.wtns")
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}

	// The chain witness read as a merkle witness: wrong counts.
	_, err = ReadWitness(WitnessPath(wdir, 0), merkle)
	if err == nil || !strings.Contains(err.Error(), "has 1 public and 1 secret values, circuit "+merkle.Name+" wants") {
		t.Errorf("chain witness for merkle: %v", err)
	}
	cases := []struct {
		name string
		data []byte
		want string
	}{
		{"empty", nil, "truncated"},
		{"truncated", good[:len(good)-1], "another field, or truncated"},
		{"trailing", append(bytes.Clone(good), 0), "another field, or truncated"},
		{"48-byte elements", append(bytes.Clone(good), make([]byte, 2*16)...), "another field"},
		{"counts disagree", func() []byte { b := bytes.Clone(good); b[3] = 2; return b }(), "header says 2 public + 1 secret"},
		{"not canonical", func() []byte { b := bytes.Clone(good); copy(b[12:44], bytes.Repeat([]byte{0xff}, 32)); return b }(), "not a BLS12-381 witness"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p := write(t, tc.data)
			_, err := ReadWitness(p, chain)
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), p) {
				t.Errorf("ReadWitness: %v, want an error naming %s and containing %q", err, p, tc.want)
			}
		})
	}
	if _, err := ReadWitness(filepath.Join(wdir, "nope.wtns"), chain); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing witness: %v", err)
	}
}

func TestSynthesizeRejects(t *testing.T) {
	c := load(t, sharedKeys(t), spec(t, 0).ID())
	steps := 1<<8 - 1
	var x fr.Element
	x.SetUint64(5)
	bad, err := frontend.NewWitness(&circuits.Chain{X: x, Out: 1, Steps: steps}, ecc.BLS12_381.ScalarField())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := Synthesize(c, bad, 0); err == nil || !strings.Contains(err.Error(), "does not satisfy") {
		t.Errorf("unsatisfying witness: %v", err)
	}
	bn, err := frontend.NewWitness(&circuits.Chain{X: 5, Out: 1, Steps: steps}, ecc.BN254.ScalarField())
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := Synthesize(c, bn, 0); err == nil || !strings.Contains(err.Error(), "want BLS12-381") {
		t.Errorf("BN254 witness: %v", err)
	}
	m := load(t, sharedKeys(t), spec(t, 1).ID())
	mw, err := spec(t, 1).Witness(0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := Synthesize(c, mw, 0); err == nil || !strings.Contains(err.Error(), "values, want") {
		t.Errorf("merkle witness for chain: %v", err)
	}
	if _, _, _, err := Synthesize(m, nil, 0); err == nil {
		t.Error("nil witness accepted")
	}
	good := &circuits.Chain{X: x, Out: circuits.ChainOutput(x, steps), Steps: steps}
	w, _ := frontend.NewWitness(good, ecc.BLS12_381.ScalarField())
	if _, _, _, err := Synthesize(c, w, 0); err != nil {
		t.Errorf("valid witness: %v", err)
	}
}

func TestResolveName(t *testing.T) {
	dir := t.TempDir()
	touch := func(name string) {
		if err := os.WriteFile(filepath.Join(dir, name+ExtPK), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	touch("merkle-d16-k4")
	touch("chain-k10")
	touch("chain-k12")
	touch("plain")
	for _, tc := range []struct{ name, want, err string }{
		{"plain", "plain", ""},
		{"merkle", "merkle-d16-k4", ""},
		{"chain-k12", "chain-k12", ""},
		{"chain", "", "ambiguous"},
		// keygen is suggested for the example circuits only; any other name is imported.
		{"nosuch", "", "(it holds chain-k10, chain-k12, merkle-d16-k4, plain); bring a gnark circuit's files in with `zkhost key import --ccs FILE --pk FILE --vk FILE --name nosuch --out " + dir + "`"},
		{"chain-k16", "", "make one with `zkhost keygen --circuit chain --param k=16 --out " + dir + "`"},
	} {
		got, err := ResolveName(dir, tc.name)
		if tc.err == "" && (err != nil || got != tc.want) {
			t.Errorf("%s: %q, %v; want %q", tc.name, got, err, tc.want)
		}
		if tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("%s: error %v, want one containing %q", tc.name, err, tc.err)
		}
	}
	if _, err := ResolveName(filepath.Join(dir, "missing"), "merkle"); err == nil || !strings.Contains(err.Error(), "key directory") {
		t.Errorf("missing directory: %v", err)
	}
}

// TestKeygenContextStops: a keygen whose context ends (Ctrl-C) returns at once
// with the context's error and writes nothing, not even its staging directory.
func TestKeygenContextStops(t *testing.T) {
	s, err := circuits.Lookup("chain", map[string]int{"k": 14}) // a setup of seconds, more under -race
	if err != nil {
		t.Fatal(err)
	}
	for _, after := range []time.Duration{0, 50 * time.Millisecond} {
		dir := t.TempDir()
		ctx, cancel := context.WithCancel(context.Background())
		if after == 0 {
			cancel()
		} else {
			time.AfterFunc(after, cancel)
		}
		begin := time.Now()
		err := KeygenContext(ctx, s, dir)
		took := time.Since(begin)
		cancel()
		if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "nothing written") {
			t.Errorf("cancelled after %s: %v, want context.Canceled and 'nothing written'", after, err)
		}
		if took > after+2*time.Second {
			t.Errorf("cancelled after %s: returned after %s", after, took)
		}
		if entries, _ := os.ReadDir(dir); len(entries) != 0 {
			t.Errorf("cancelled after %s: left %d entries in the key directory", after, len(entries))
		}
	}
}

// gnarkSolve runs gnark's solver on w and returns the whole solution.
func gnarkSolve(c *Circuit, w witness.Witness, opts ...solver.Option) (sol *cs.R1CSSolution, err error) {
	if err := checkWitness(c, w); err != nil {
		return nil, err
	}
	defer func() {
		if r := recover(); r != nil {
			sol, err = nil, fmt.Errorf("circuit %s: solver failed: %v", c.Name, r)
		}
	}()
	res, err := c.CCS.Solve(w, opts...)
	if err != nil {
		return nil, fmt.Errorf("circuit %s: the witness does not satisfy the circuit: %w", c.Name, err)
	}
	sol, ok := res.(*cs.R1CSSolution)
	if !ok {
		return nil, fmt.Errorf("circuit %s: solver returned %T, want an R1CS solution", c.Name, res)
	}
	return sol, nil
}
