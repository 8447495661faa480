package synthtest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	blsfr "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	bnfr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	hclog "github.com/hashicorp/go-hclog"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/circuit"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/internal/logbuf"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/partcheck"
	"github.com/zkhost/zkhost/sdk/plugins"
	"github.com/zkhost/zkhost/sdk/refprover"
	"github.com/zkhost/zkhost/sdk/shm"
)

// Config says which synthesizer Run checks and with what.
type Config struct {
	// SynthesizerPath is the synthesizer binary under test.
	SynthesizerPath string
	// SHA256, Args and Env are used as the host uses them (plugins.Launch).
	SHA256 []byte
	Args   []string
	Env    []string
	// KeyDir and Circuit name the key set of the circuit the synthesizer solves,
	// in sdk/circuit's layout (KeyDir/Circuit.{ccs,vk,pk}, as `zkhost keygen`
	// or circuit.KeygenCircuit write them), of BLS12-381 or BN254.
	KeyDir  string
	Circuit string
	// Witnesses are valid full witnesses of the circuit over its curve's
	// scalar field (gnark's witness.MarshalBinary, as clients submit them); at
	// least one.
	Witnesses [][]byte
	// Unsatisfiable are witnesses that decode but do not satisfy the circuit;
	// each must be refused with ErrInvalidArgument. Optional.
	Unsatisfiable [][]byte
	// CallTimeout bounds each call (default two minutes).
	CallTimeout time.Duration
	// Logger receives the synthesizer's logs. Nil keeps them and prints them
	// when the suite fails.
	Logger hclog.Logger
}

// suite is the state the checks share.
type suite struct {
	cfg   Config
	proc  *plugins.Process
	synth sdk.Synthesizer
	c     *circuit.Circuit
	ref   sdk.CircuitRef
	store *shm.Store // makes the outputs as the host does
	desc  sdk.SynthDescription

	mu    sync.Mutex
	names int
}

// Run launches cfg.SynthesizerPath and runs the conformance checks as subtests
// of t.
func Run(t *testing.T, cfg Config) {
	if cfg.SynthesizerPath == "" {
		t.Fatal("synthtest: Config.SynthesizerPath is empty")
	}
	if len(cfg.Witnesses) == 0 {
		t.Fatal("synthtest: Config.Witnesses is empty; give at least one valid witness")
	}
	if cfg.CallTimeout <= 0 {
		cfg.CallTimeout = 2 * time.Minute
	}
	c, err := circuit.Load(cfg.KeyDir, cfg.Circuit)
	if err != nil {
		t.Fatalf("synthtest: loading the key set: %v", err)
	}
	t.Cleanup(func() { c.Close() })
	ref, err := circuitRef(c)
	if err != nil {
		t.Fatal(err)
	}
	s := &suite{cfg: cfg, c: c, ref: ref, store: shm.NewStore()}
	t.Cleanup(func() { s.store.Close() })

	logger := cfg.Logger
	if logger == nil {
		logger = logbuf.LoggerForTest(t, "synthesizer")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	proc, err := plugins.Launch(ctx, plugins.LaunchConfig{
		Kind: plugins.KindSynthesizer, Path: cfg.SynthesizerPath, SHA256: cfg.SHA256,
		Args: cfg.Args, Env: cfg.Env, Logger: logger,
	})
	cancel()
	if err != nil {
		t.Fatalf("launching the synthesizer: %v", err)
	}
	t.Cleanup(proc.Kill)
	s.proc, s.synth = proc, proc.Synthesizer()

	if !t.Run("Describe", s.testDescribe) {
		return
	}
	if !t.Run("LoadCircuit", s.testLoadCircuit) {
		return
	}
	t.Run("Synthesize", s.testSynthesize)
	t.Run("BadRequests", s.testBadRequests)
	if proc.Exited() {
		t.Error("the synthesizer process exited during the suite")
	}
}

// circuitRef describes c as the host does.
func circuitRef(c *circuit.Circuit) (sdk.CircuitRef, error) {
	ccsPath, _, _, _ := circuit.Paths(c.KeyDir, c.Name)
	data, err := os.ReadFile(ccsPath)
	if err != nil {
		return sdk.CircuitRef{}, fmt.Errorf("synthtest: %w", err)
	}
	return sdk.CircuitRef{
		ID: c.Name, Curve: c.Curve, CCSPath: ccsPath, CCSSHA256: sha256.Sum256(data),
		NbWires: uint64(c.NbWires), NbConstraints: uint64(c.NbConstraints),
		NbPublic: uint64(c.NbPublic), NbSecret: uint64(c.NbSecret),
	}, nil
}

func (s *suite) ctx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.CallTimeout)
	t.Cleanup(cancel)
	return ctx
}

// output returns a fresh output for the suite's circuit, a memfd made as the
// host makes it (shm.Store.Output), removed when t ends.
func (s *suite) output(t *testing.T) sdk.PartitionHandle {
	s.mu.Lock()
	s.names++
	n := s.names
	s.mu.Unlock()
	out, err := s.store.Output("synthtest-"+strconv.Itoa(n), s.ref.Curve, s.ref.NbWires, s.ref.NbConstraints)
	if err != nil {
		t.Fatalf("making an output: %v", err)
	}
	t.Cleanup(func() { s.store.Remove(out) })
	return out
}

// relayout returns h (its path and inode) described for other counts.
func relayout(h sdk.PartitionHandle, nbWires, nbConstraints uint64) sdk.PartitionHandle {
	wOff, aOff, bOff, size := sdk.PartitionLayout(nbWires, nbConstraints)
	return sdk.PartitionHandle{
		Path: h.Path, Inode: h.Inode, Size: int64(size), Curve: h.Curve, NbWires: nbWires, NbConstraints: nbConstraints,
		WOffset: wOff, AOffset: aOff, BOffset: bOff,
	}
}

// untouched returns an error unless the output h is still all zeros, as the
// host made it.
func untouched(h sdk.PartitionHandle) error {
	data, err := os.ReadFile(h.Path)
	if err != nil {
		return fmt.Errorf("reading the output back: %w", err)
	}
	for i, b := range data {
		if b != 0 {
			return fmt.Errorf("byte %d of the output is %#x: a refused request wrote into it", i, b)
		}
	}
	return nil
}

func (s *suite) testDescribe(t *testing.T) {
	d, err := s.synth.Describe(s.ctx(t))
	if err != nil {
		t.Fatalf("Describe: %v", err)
	}
	s.desc = d
	if d.Name == "" {
		t.Error("Describe: empty name")
	}
	if !contains(d.APIVersions, sdk.SynthAPIVersion) {
		t.Errorf("Describe: API versions %v do not include %d", d.APIVersions, sdk.SynthAPIVersion)
	}
	if !contains(d.Curves, s.ref.Curve) {
		t.Errorf("Describe: curves %v do not include %s, the circuit's", d.Curves, s.ref.Curve)
	}
	if d.MaxInFlight < 1 {
		t.Errorf("Describe: max in flight %d, want at least 1", d.MaxInFlight)
	}
}

func contains[T comparable](list []T, v T) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func (s *suite) testLoadCircuit(t *testing.T) {
	if err := s.synth.LoadCircuit(s.ctx(t), s.ref); err != nil {
		t.Fatalf("LoadCircuit: %v", err)
	}
	if err := s.synth.LoadCircuit(s.ctx(t), s.ref); err != nil {
		t.Fatalf("LoadCircuit again (it must be idempotent): %v", err)
	}
	other := s.ref
	other.CCSSHA256[0] ^= 0xff
	wantKind(t, "LoadCircuit of the loaded ID with another digest", s.synth.LoadCircuit(s.ctx(t), other), sdk.ErrInvalidArgument)
	wrong := s.ref
	wrong.ID = s.ref.ID + "-wrong-size"
	wrong.NbConstraints++
	wantKind(t, "LoadCircuit with a constraint count that is not the circuit's", s.synth.LoadCircuit(s.ctx(t), wrong), sdk.ErrInvalidArgument)
}

// wantKind fails t unless err is an *sdk.Error of kind want.
func wantKind(t *testing.T, what string, err error, want sdk.ErrorKind) {
	t.Helper()
	var e *sdk.Error
	switch {
	case err == nil:
		t.Errorf("%s: no error, want %s", what, want)
	case !errors.As(err, &e):
		t.Errorf("%s: %v is not a typed error, want %s", what, err, want)
	case e.Kind != want:
		t.Errorf("%s: %v, want kind %s", what, err, want)
	}
}

func (s *suite) testSynthesize(t *testing.T) {
	for i, wb := range s.cfg.Witnesses {
		out := s.output(t)
		if _, err := s.synth.Synthesize(s.ctx(t), sdk.SynthesizeRequest{CircuitID: s.ref.ID, Witness: wb, Output: out}); err != nil {
			t.Fatalf("Synthesize of witness %d: %v", i, err)
		}
		prove := i == 0 || i == len(s.cfg.Witnesses)-1
		if err := s.checkPartition(out, wb, prove); err != nil {
			t.Fatalf("witness %d: %v", i, err)
		}
	}
}

// checkPartition adopts the output a synthesizer wrote as the host does (which
// seals it, refused while the synthesizer still maps it writable), checks it
// for witness wb, and proves and verifies it when prove is set.
func (s *suite) checkPartition(out sdk.PartitionHandle, wb []byte, prove bool) error {
	h, err := s.store.Adopt(out)
	if err != nil {
		return fmt.Errorf("the host cannot take the partition: %w", err)
	}
	p, err := sdk.OpenPartition(h)
	if err != nil {
		return err
	}
	defer p.Close()
	id, err := curve.Parse(string(s.ref.Curve))
	if err != nil {
		return err
	}
	w, err := witness.New(id.ScalarField())
	if err != nil {
		return err
	}
	if err := w.UnmarshalBinary(wb); err != nil {
		return fmt.Errorf("the witness given to the suite does not decode: %w", err)
	}
	pub, err := w.Public()
	if err != nil {
		return err
	}
	// The witness decoded over the circuit's field holds that curve's
	// scalars: the curve picks the scalar type here, once.
	switch vec := pub.Vector().(type) {
	case blsfr.Vector:
		return checkOn(s, curve.BLS12381{}, p, []blsfr.Element(vec), pub, prove)
	case bnfr.Vector:
		return checkOn(s, curve.BN254{}, p, []bnfr.Element(vec), pub, prove)
	}
	return fmt.Errorf("the public witness holds %T, want BLS12-381 or BN254 scalars", pub.Vector())
}

// checkOn checks partition p of the suite's circuit on curve crv, whose scalars
// are S: its public inputs are public, it satisfies every constraint
// (sdk/partcheck, which refuses a partition of another curve than the
// circuit's), and, when prove is set, sdk/refprover proves it with the
// circuit's key into a proof gnark's verifier accepts for pub.
func checkOn[S ~[4]uint64, PS curve.Scalar[S], G1, G1J, G2, G2J any](s *suite, crv curve.Curve[S, G1, G1J, G2, G2J], p *sdk.Partition, public []S, pub witness.Witness, prove bool) error {
	if err := partcheck.CheckPartition(s.c.System, p); err != nil {
		return fmt.Errorf("the partition does not satisfy the circuit: %w", err)
	}
	W, A, B, err := sdk.Vectors[S](p)
	if err != nil {
		return err
	}
	if err := partcheck.Public[S, PS](W, public); err != nil {
		return fmt.Errorf("the partition's public inputs: %w", err)
	}
	if !prove {
		return nil
	}
	f, err := keyfile.Open(s.c.PKPath)
	if err != nil {
		return fmt.Errorf("opening the proving key: %w", err)
	}
	defer f.Close()
	pk, err := keyfile.KeyOf[G1, G2](f)
	if err != nil {
		return fmt.Errorf("the proving key: %w", err)
	}
	proof, _, err := refprover.Prove[S, PS](context.Background(), crv, pk, W, A, B, 0)
	if err != nil {
		return fmt.Errorf("proving the partition: %w", err)
	}
	// Read back with gnark, as the host reads every backend's proof.
	b, err := proof.MarshalBinary()
	if err != nil {
		return err
	}
	gp := groth16.NewProof(crv.ID())
	if _, err := gp.ReadFrom(bytes.NewReader(b)); err != nil {
		return fmt.Errorf("the proof does not decode: %w", err)
	}
	if err := groth16.Verify(gp, s.c.VK, pub); err != nil {
		return fmt.Errorf("the proof of the partition does not verify: %w", err)
	}
	return nil
}

func (s *suite) testBadRequests(t *testing.T) {
	valid := s.cfg.Witnesses[0]
	garbled := bytes.Clone(valid)
	for i := 12; i < len(garbled); i++ {
		garbled[i] = 0xff // every element above the modulus
	}
	type badCase struct {
		name    string
		circuit string
		witness []byte
		out     func(sdk.PartitionHandle) sdk.PartitionHandle
		want    sdk.ErrorKind
	}
	cases := []badCase{
		{name: "unknown circuit", circuit: s.ref.ID + "-unknown", witness: valid, want: sdk.ErrKeyNotLoaded},
		{name: "empty witness", witness: nil, want: sdk.ErrInvalidArgument},
		{name: "truncated witness", witness: valid[:len(valid)-7], want: sdk.ErrInvalidArgument},
		{name: "garbled witness", witness: garbled, want: sdk.ErrInvalidArgument},
		{name: "output one wire too many", witness: valid, want: sdk.ErrInvalidArgument, out: func(h sdk.PartitionHandle) sdk.PartitionHandle {
			return relayout(h, h.NbWires+1, h.NbConstraints)
		}},
		{name: "output one constraint too few", witness: valid, want: sdk.ErrInvalidArgument, out: func(h sdk.PartitionHandle) sdk.PartitionHandle {
			return relayout(h, h.NbWires, h.NbConstraints-1)
		}},
	}
	for i, u := range s.cfg.Unsatisfiable {
		cases = append(cases, badCase{name: fmt.Sprintf("unsatisfiable witness %d", i), witness: u, want: sdk.ErrInvalidArgument})
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			made := s.output(t)
			out := made
			if tc.out != nil {
				out = tc.out(made)
			}
			id := tc.circuit
			if id == "" {
				id = s.ref.ID
			}
			_, err := s.synth.Synthesize(s.ctx(t), sdk.SynthesizeRequest{CircuitID: id, Witness: tc.witness, Output: out})
			wantKind(t, "Synthesize", err, tc.want)
			if err := untouched(made); err != nil {
				t.Error(err)
			}
		})
	}
	t.Run("output of another inode", func(t *testing.T) {
		// The handle names one output by path and another by inode: a
		// descriptor number reused for another file must not be written.
		other, out := s.output(t), s.output(t)
		out.Inode = other.Inode
		_, err := s.synth.Synthesize(s.ctx(t), sdk.SynthesizeRequest{CircuitID: s.ref.ID, Witness: valid, Output: out})
		wantKind(t, "Synthesize into a file that is not the one the handle names", err, sdk.ErrInvalidArgument)
		for _, h := range []sdk.PartitionHandle{other, out} {
			if err := untouched(h); err != nil {
				t.Error(err)
			}
		}
	})
	t.Run("output gone", func(t *testing.T) {
		out := s.output(t)
		if err := s.store.Remove(out); err != nil {
			t.Fatal(err)
		}
		_, err := s.synth.Synthesize(s.ctx(t), sdk.SynthesizeRequest{CircuitID: s.ref.ID, Witness: valid, Output: out})
		wantKind(t, "Synthesize into an output the host removed", err, sdk.ErrInvalidArgument)
	})
	t.Run("still serving", func(t *testing.T) {
		out := s.output(t)
		if _, err := s.synth.Synthesize(s.ctx(t), sdk.SynthesizeRequest{CircuitID: s.ref.ID, Witness: valid, Output: out}); err != nil {
			t.Fatalf("Synthesize after the bad requests: %v", err)
		}
		if err := s.checkPartition(out, valid, false); err != nil {
			t.Fatal(err)
		}
	})
}
