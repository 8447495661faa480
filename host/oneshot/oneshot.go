package oneshot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	hclog "github.com/hashicorp/go-hclog"

	"github.com/zkhost/zkhost/host/device"
	"github.com/zkhost/zkhost/host/finalize"
	"github.com/zkhost/zkhost/plugins"
	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/circuit"
	"github.com/zkhost/zkhost/sdk/circuits"
	"github.com/zkhost/zkhost/sdk/keyconv"
	"github.com/zkhost/zkhost/sdk/shm"
)

// Options says what to prove and where.
type Options struct {
	// KeyDir and Circuit name the circuit's key files (KeyDir/NAME.{ccs,vk,pk,json}).
	KeyDir  string
	Circuit string
	// Partitions, when WitnessFiles is empty, is how many example witnesses to
	// generate with the circuit's own generator (sdk/circuits).
	Partitions int
	// WitnessFiles are gnark full witnesses (MarshalBinary), one per partition.
	WitnessFiles []string
	// AssignmentFiles are wire assignments solved elsewhere (docs/assignment.md),
	// one per partition, instead of WitnessFiles: each is checked against every
	// constraint and proved without solving.
	AssignmentFiles []string
	// OutDir receives <i>.proof, <i>.public and summary.json.
	OutDir string
	// Backend is the backend binary; BackendSHA256 optionally pins it.
	Backend       string
	BackendSHA256 []byte
	BackendArgs   []string
	BackendEnv    []string
	Logger        hclog.Logger
	// GnarkPeer proves with gnark's own groth16.Prove in this process instead of a
	// backend: the peer every benchmark compares with, on the same circuit, witnesses
	// and cores. Synthesis is inside gnark's Prove; it is reported as prove time.
	GnarkPeer bool
}

// PartitionResult is one partition's outcome.
type PartitionResult struct {
	Index       int           `json:"index"`
	Constraints int           `json:"constraints"`
	Synthesis   time.Duration `json:"synthesis_ns"`
	Transfer    time.Duration `json:"transfer_ns"` // writing the shared-memory file
	Prove       time.Duration `json:"prove_ns"`    // the Prove call, as the host saw it
	BackendWall time.Duration `json:"backend_wall_ns"`
	DeviceBusy  time.Duration `json:"device_busy_ns"`
	Verify      time.Duration `json:"verify_ns"`
	Verified    bool          `json:"verified"`
	Phases      []sdk.Phase   `json:"phases"`
	ProofFile   string        `json:"proof_file"`
	PublicFile  string        `json:"public_file"`
}

// Result is the job's outcome, also written as summary.json.
type Result struct {
	Circuit    string            `json:"circuit"`
	KeyDigest  string            `json:"key_digest"`
	Backend    sdk.Description   `json:"backend"`
	Partitions []PartitionResult `json:"partitions"`
	Total      time.Duration     `json:"total_ns"`
}

// InterruptedError is Run's error when its context ends while partitions are being
// proven (Ctrl-C): the proofs written so far are in OutDir, but summary.json is not,
// so the directory does not pass for a complete run.
type InterruptedError struct {
	Written, Total int
	OutDir         string
	Err            error // the context's error
}

func (e *InterruptedError) Error() string {
	return fmt.Sprintf("interrupted: wrote %d of %d proofs to %s; the directory is incomplete (no summary.json)",
		e.Written, e.Total, e.OutDir)
}

func (e *InterruptedError) Unwrap() error { return e.Err }

// input is one partition's input: a gnark full witness, solved here, or the path of
// a wire assignment file, read when the partition's turn comes.
type input struct {
	w          witness.Witness
	assignment string
}

// synthesize returns the partition's W, A and B, and its full witness.
func (in input) synthesize(c *circuit.Circuit) (W, A, B []fr.Element, full witness.Witness, err error) {
	if in.assignment == "" {
		W, A, B, err = circuit.Synthesize(c, in.w, 0)
		return W, A, B, in.w, err
	}
	data, err := os.ReadFile(in.assignment)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("wire assignment: %w", err)
	}
	W, A, B, full, err = circuit.SynthesizeInput(c, data, 0)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("%s: %w", in.assignment, err)
	}
	return W, A, B, full, nil
}

// job is one partition moving through the pipeline.
type job struct {
	res    PartitionResult
	full   witness.Witness
	handle sdk.PartitionHandle
	err    error
}

// Run proves the job described by opts.
func Run(ctx context.Context, opts Options) (*Result, error) {
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	start := time.Now()
	name, err := circuit.ResolveName(opts.KeyDir, opts.Circuit)
	if err != nil {
		return nil, err
	}
	c, err := circuit.Load(opts.KeyDir, name)
	if err != nil {
		return nil, err
	}
	defer c.Close()

	inputs, err := loadInputs(c, opts)
	if err != nil {
		return nil, err
	}
	if opts.OutDir == "" {
		return nil, errors.New("no output directory (--out)")
	}
	if err := os.MkdirAll(opts.OutDir, 0o755); err != nil {
		return nil, fmt.Errorf("output directory: %w", err)
	}

	if opts.GnarkPeer {
		var witnesses []witness.Witness
		for _, in := range inputs {
			if in.assignment != "" {
				return nil, errors.New("the gnark peer proves from witnesses, not wire assignments")
			}
			witnesses = append(witnesses, in.w)
		}
		return runGnark(ctx, c, witnesses, opts.OutDir, start)
	}

	store := shm.NewStore()
	defer store.Close() // removes every partition left, on every path

	dev, err := device.Start(ctx, device.Options{
		Name: "backend",
		Launch: plugins.LaunchConfig{
			Path: opts.Backend, SHA256: opts.BackendSHA256, Args: opts.BackendArgs, Env: opts.BackendEnv,
			Logger: log.Named("backend"),
		},
		Logger: log.Named("device"),
	})
	if err != nil {
		return nil, err
	}
	defer dev.Close()
	desc := dev.Description()
	if !desc.Device.Available {
		return nil, fmt.Errorf("backend %s has no usable device: %s", desc.Name, desc.Device.Reason)
	}
	key := sdk.KeyRef{ID: c.Name, Path: c.PKPath, Digest: c.PKDigest}
	if _, err := dev.LoadKey(ctx, key); err != nil {
		return nil, fmt.Errorf("load key %s into backend %s: %w", c.PKPath, desc.Name, err)
	}

	parent := ctx // ended by the caller (an interrupt), not by a failing partition
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var written atomic.Int64
	inFlight := dev.MaxInFlight()
	staged := make(chan *job, inFlight)
	results := make([]PartitionResult, len(inputs))
	var firstErr error
	var errOnce sync.Once
	fail := func(err error) {
		errOnce.Do(func() { firstErr = err; cancel() })
	}

	// Synthesis: one partition at a time with all cores, staying at most
	// inFlight partitions ahead of the backend.
	go func() {
		defer close(staged)
		for i, in := range inputs {
			if ctx.Err() != nil {
				return
			}
			j := &job{}
			j.res.Index = i
			j.res.Constraints = c.NbConstraints
			t0 := time.Now()
			W, A, B, full, err := in.synthesize(c)
			j.full = full
			if err != nil {
				fail(fmt.Errorf("partition %d: %w", i, err))
				return
			}
			t1 := time.Now()
			h, err := store.Write(fmt.Sprintf("p%d", i), sdk.CurveBLS12381, W, A, B)
			if err != nil {
				fail(fmt.Errorf("partition %d: write shared memory: %w", i, err))
				return
			}
			j.res.Synthesis, j.res.Transfer = t1.Sub(t0), time.Since(t1)
			j.handle = h
			log.Debug("partition synthesized", "partition", i, "synthesis", j.res.Synthesis, "transfer", j.res.Transfer)
			select {
			case staged <- j:
			case <-ctx.Done():
				store.Remove(h)
				return
			}
		}
	}()

	// Proving: inFlight workers keep the backend busy; each verifies its proof.
	var wg sync.WaitGroup
	for range inFlight {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range staged {
				if ctx.Err() != nil {
					store.Remove(j.handle)
					continue
				}
				if err := proveOne(ctx, dev, key, c, j, opts.OutDir); err != nil {
					fail(fmt.Errorf("partition %d: %w", j.res.Index, err))
				} else {
					written.Add(1)
				}
				store.Remove(j.handle)
				results[j.res.Index] = j.res
			}
		}()
	}
	wg.Wait()
	// An interrupt makes the partitions in flight fail with "context canceled";
	// the caller wants to hear what was left behind instead.
	if err := parent.Err(); err != nil {
		return nil, &InterruptedError{Written: int(written.Load()), Total: len(inputs), OutDir: opts.OutDir, Err: err}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	res := &Result{Circuit: c.Name, KeyDigest: c.PKDigestHex(), Backend: desc, Partitions: results, Total: time.Since(start)}
	if err := writeJSON(filepath.Join(opts.OutDir, "summary.json"), res); err != nil {
		return nil, err
	}
	return res, nil
}

// runGnark proves every partition with gnark's groth16.Prove, the peer.
func runGnark(ctx context.Context, c *circuit.Circuit, witnesses []witness.Witness, outDir string, start time.Time) (*Result, error) {
	pk := keyconv.ToGnark(c.Key())
	res := &Result{Circuit: c.Name, KeyDigest: c.PKDigestHex(),
		Backend: sdk.Description{Name: "gnark groth16.Prove (in process)", Device: sdk.DeviceInfo{Kind: "cpu", Model: "this machine"},
			APIVersions: []uint32{}, Curves: []sdk.Curve{}}} // [] in summary.json, not null
	for i, w := range witnesses {
		if err := ctx.Err(); err != nil {
			return nil, &InterruptedError{Written: len(res.Partitions), Total: len(witnesses), OutDir: outDir, Err: err}
		}
		j := &job{full: w}
		j.res.Index, j.res.Constraints = i, c.NbConstraints
		t0 := time.Now()
		proof, err := groth16.Prove(c.CCS, pk, w)
		if err != nil {
			return nil, fmt.Errorf("partition %d: gnark prove: %w", i, err)
		}
		j.res.Prove = time.Since(t0)
		j.res.DeviceBusy = j.res.Prove
		j.res.Phases = []sdk.Phase{} // gnark reports none: [] in summary.json, not null
		var buf bytes.Buffer
		if _, err := proof.WriteTo(&buf); err != nil {
			return nil, err
		}
		if err := finishOne(c, j, buf.Bytes(), outDir); err != nil {
			return nil, fmt.Errorf("partition %d: %w", i, err)
		}
		res.Partitions = append(res.Partitions, j.res)
	}
	res.Total = time.Since(start)
	return res, writeJSON(filepath.Join(outDir, "summary.json"), res)
}

// proveOne proves, verifies and writes one partition.
func proveOne(ctx context.Context, dev *device.Device, key sdk.KeyRef, c *circuit.Circuit, j *job, outDir string) error {
	t0 := time.Now()
	pr, err := dev.Prove(ctx, key, j.handle)
	if err != nil {
		return fmt.Errorf("prove: %w", err)
	}
	j.res.Prove = time.Since(t0)
	j.res.BackendWall, j.res.DeviceBusy, j.res.Phases = pr.Wall, pr.DeviceBusy, pr.Phases
	return finishOne(c, j, pr.Proof, outDir)
}

// finishOne verifies a partition's proof and writes it with its public witness.
func finishOne(c *circuit.Circuit, j *job, proof []byte, outDir string) error {
	pub, err := finalize.PublicWitness(j.full)
	if err != nil {
		return err
	}
	t1 := time.Now()
	if _, err := finalize.Verify(c.VK, proof, pub); err != nil {
		return fmt.Errorf("backend returned a proof that does not verify: %w", err)
	}
	j.res.Verify = time.Since(t1)
	j.res.Verified = true

	pubBytes, err := pub.MarshalBinary()
	if err != nil {
		return fmt.Errorf("encode public witness: %w", err)
	}
	idx := strconv.Itoa(j.res.Index)
	j.res.ProofFile = filepath.Join(outDir, idx+".proof")
	j.res.PublicFile = filepath.Join(outDir, idx+".public")
	if err := WriteFileAtomic(j.res.ProofFile, proof); err != nil {
		return err
	}
	return WriteFileAtomic(j.res.PublicFile, pubBytes)
}

// loadInputs reads the witness files, checks the wire assignment files' headers (they
// are read one at a time, when proved), or generates example witnesses.
func loadInputs(c *circuit.Circuit, opts Options) ([]input, error) {
	files, kind := opts.WitnessFiles, "witness"
	if len(opts.AssignmentFiles) > 0 {
		if len(opts.WitnessFiles) > 0 {
			return nil, errors.New("give witness files or wire assignment files, not both")
		}
		files, kind = opts.AssignmentFiles, "wire assignment"
	}
	if len(files) > 0 && opts.Partitions > 0 && opts.Partitions != len(files) {
		return nil, fmt.Errorf("--partitions %d disagrees with %d %s files", opts.Partitions, len(files), kind)
	}
	var ins []input
	for _, p := range opts.AssignmentFiles {
		if err := circuit.CheckAssignmentFile(p, c); err != nil {
			return nil, err
		}
		ins = append(ins, input{assignment: p})
	}
	if len(ins) > 0 {
		return ins, nil
	}
	// Witnesses are solved here: a circuit with hints this build lacks cannot be.
	if err := c.CheckSolvable(); err != nil {
		return nil, err
	}
	if len(files) > 0 {
		for _, p := range files {
			// Read here rather than with circuit.ReadWitness, whose errors start with
			// its package name: the user wants the file and what is wrong with it.
			data, err := os.ReadFile(p)
			if err != nil {
				return nil, fmt.Errorf("witness: %w", err)
			}
			w, err := circuit.ParseWitness(data, c)
			if err != nil {
				return nil, fmt.Errorf("witness %s %w", p, err)
			}
			ins = append(ins, input{w: w})
		}
		return ins, nil
	}
	if opts.Partitions < 1 {
		return nil, errors.New("nothing to prove: give --partitions N, witness files or wire assignment files")
	}
	spec, err := circuits.FromID(c.Name)
	if err != nil {
		return nil, fmt.Errorf("circuit %s has no example witness generator (pass witness files): %w", c.Name, err)
	}
	for i := range opts.Partitions {
		w, err := spec.Witness(i, 0)
		if err != nil {
			return nil, err
		}
		ins = append(ins, input{w: w})
	}
	return ins, nil
}

// WriteFileAtomic writes data to path through a temporary file and a rename, so
// a reader never sees a half-written file.
func WriteFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

func writeJSON(path string, v any) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	return WriteFileAtomic(path, buf.Bytes())
}
