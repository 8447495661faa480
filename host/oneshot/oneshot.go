package oneshot

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"time"

	"github.com/consensys/gnark/backend/groth16"
	"github.com/consensys/gnark/backend/witness"
	hclog "github.com/hashicorp/go-hclog"

	"github.com/zkhost/zkhost/host/api"
	"github.com/zkhost/zkhost/host/config"
	"github.com/zkhost/zkhost/host/finalize"
	"github.com/zkhost/zkhost/host/inprocess"
	"github.com/zkhost/zkhost/host/timeline"
	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/circomconv"
	"github.com/zkhost/zkhost/sdk/circuit"
	"github.com/zkhost/zkhost/sdk/circuits"
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
	// SnarkjsJSON also writes each proof as snarkjs's <i>.proof.json and
	// <i>.public.json (sdk/circomconv), for circuits imported from circom.
	SnarkjsJSON bool
	// Backend is the backend binary; BackendSHA256 optionally pins it.
	Backend       string
	BackendSHA256 config.Digest
	// Threads, above 0, is passed to the backend as -threads (the CPU
	// backend's goroutines per proof), as [device.options] threads would be.
	Threads int
	Logger  hclog.Logger
	// GnarkPeer proves with gnark's own groth16.Prove in this process instead of a
	// backend: the peer every benchmark compares with, on the same circuit, witnesses
	// and cores. Synthesis is inside gnark's Prove; it is reported as prove time.
	GnarkPeer bool
}

// PartitionResult is one partition's outcome. The figures of a partition proved
// through the daemon come from its timeline: each is the last attempt's.
type PartitionResult struct {
	Index       int           `json:"index"`
	Constraints int           `json:"constraints"`
	Synthesis   time.Duration `json:"synthesis_ns"`
	Transfer    time.Duration `json:"transfer_ns"` // writing the shared-memory file
	Prove       time.Duration `json:"prove_ns"`    // the Prove call, as the host saw it
	// BackendWall spans the backend's phases, from the first one's start to the
	// last one's end.
	BackendWall time.Duration `json:"backend_wall_ns"`
	DeviceBusy  time.Duration `json:"device_busy_ns"`
	// Verify is the daemon's finalize phase: gnark's groth16.Verify of the proof,
	// and (through the daemon) its journal write.
	Verify   time.Duration `json:"verify_ns"`
	Verified bool          `json:"verified"`
	// Phases are the backend's phases, Start counted from the first one's start.
	Phases     []sdk.Phase `json:"phases"`
	ProofFile  string      `json:"proof_file"`
	PublicFile string      `json:"public_file"`
}

// Result is the job's outcome, also written as summary.json.
type Result struct {
	Circuit    string            `json:"circuit"`
	KeyDigest  string            `json:"key_digest"`
	Backend    sdk.Description   `json:"backend"`
	Partitions []PartitionResult `json:"partitions"`
	Total      time.Duration     `json:"total_ns"`
}

// InterruptedError is Run's error when its context ends before the job is done
// (Ctrl-C): Written proofs are in OutDir, but summary.json is not, so the directory
// does not pass for a complete run. The daemon hands proofs over when the whole job
// is done, so an interrupted run through it writes none.
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

// inputs are a job's inputs, one per partition, as the daemon takes them.
type inputs struct {
	data       [][]byte
	assignment bool     // wire assignments, not gnark witnesses
	files      []string // where each came from; empty for generated witnesses
}

// partitionIndex finds "partition N" in the daemon's account of a failed job.
var partitionIndex = regexp.MustCompile(`\bpartition (\d+)\b`)

// namePartitions adds to each "partition N" in msg the file partition N came
// from, when it came from one.
func (in inputs) namePartitions(msg string) string {
	kind := "witness"
	if in.assignment {
		kind = "wire assignment"
	}
	return partitionIndex.ReplaceAllStringFunc(msg, func(m string) string {
		i, _ := strconv.Atoi(partitionIndex.FindStringSubmatch(m)[1])
		if i < 0 || i >= len(in.files) {
			return m
		}
		return fmt.Sprintf("%s (%s %s)", m, kind, in.files[i])
	})
}

// Run proves the job described by opts: through a daemon started in this process
// (host/inprocess) with one device running opts.Backend, or with gnark's
// groth16.Prove when opts.GnarkPeer is set.
func Run(ctx context.Context, opts Options) (*Result, error) {
	start := time.Now()
	name, err := circuit.ResolveName(opts.KeyDir, opts.Circuit)
	if err != nil {
		return nil, err
	}
	in, err := readInputs(name, opts)
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
		return runGnark(ctx, opts, name, in, start)
	}
	return runDaemon(ctx, opts, name, in, start)
}

// runDaemon proves through the daemon's pipeline: a daemon in this process serves
// the one circuit on one device, takes the job, and hands back its verified proofs;
// its timeline gives each partition's figures.
func runDaemon(ctx context.Context, opts Options, name string, in inputs, start time.Time) (*Result, error) {
	log := opts.Logger
	if log == nil {
		log = hclog.NewNullLogger()
	}
	tl, err := os.CreateTemp("", "zkhost-prove-timeline-*.jsonl")
	if err != nil {
		return nil, err
	}
	tl.Close()
	defer os.Remove(tl.Name())
	d, err := inprocess.Start(ctx, inprocess.Options{
		Circuit: name, KeyDir: opts.KeyDir, Backend: opts.Backend, BackendSHA256: opts.BackendSHA256,
		Devices: 1, Threads: opts.Threads, Timeline: tl.Name(), LogLevel: logLevel(log), Logger: log,
	})
	if err != nil {
		return nil, err
	}
	defer d.Close() // stops the backend and removes every partition file, on every path
	c, ok := d.Circuit(name)
	if !ok {
		return nil, fmt.Errorf("the daemon does not serve circuit %s", name)
	}
	desc := d.Devices()[0].Description
	if !desc.Device.Available {
		// Said here: the daemon's refusal would advise a later submission.
		return nil, fmt.Errorf("backend %s has no usable device: %s", desc.Name, desc.Device.Reason)
	}
	res := &Result{Circuit: c.Name, KeyDigest: c.PKDigestHex(), Backend: desc}

	req := api.SubmitRequest{Circuit: name}
	if in.assignment {
		req.Assignments = in.data
	} else {
		req.Witnesses = in.data
	}
	job, err := d.Submit(ctx, req)
	if err != nil {
		return nil, api.NameInputFiles(err, in.files)
	}
	if err := await(ctx, d, job.ID); err != nil {
		if ctx.Err() != nil {
			return nil, &InterruptedError{Total: len(job.Partitions), OutDir: opts.OutDir, Err: ctx.Err()}
		}
		return nil, err
	}
	done, err := d.Get(ctx, job.ID)
	if err != nil {
		return nil, err
	}
	if done.State != api.JobDone {
		return nil, fmt.Errorf("job %s: %s", done.State, in.namePartitions(done.Error))
	}
	for _, p := range done.Partitions {
		pr := PartitionResult{Index: p.Index, Constraints: c.NbConstraints, Verified: p.State == api.PartitionVerified,
			Prove: p.ProveEnd.Sub(p.ProveStart), Phases: []sdk.Phase{}}
		if err := writeProof(&pr, p.Proof, p.PublicWitness, opts.OutDir, opts.SnarkjsJSON); err != nil {
			return nil, err
		}
		res.Partitions = append(res.Partitions, pr)
	}
	// Stopping the daemon flushes its timeline.
	if err := d.Close(); err != nil {
		return nil, err
	}
	if err := fromTimeline(tl.Name(), job.ID, res.Partitions); err != nil {
		return nil, fmt.Errorf("timeline: %w", err)
	}
	res.Total = time.Since(start)
	if err := writeJSON(filepath.Join(opts.OutDir, "summary.json"), res); err != nil {
		return nil, err
	}
	return res, nil
}

// await follows job id until it ends or ctx does.
func await(ctx context.Context, d *inprocess.Daemon, id string) error {
	for {
		err := d.Await(ctx, id, func(api.JobEvent) error { return nil })
		if errors.Is(err, api.ErrUnavailable) && ctx.Err() == nil {
			// Its events fell behind (a job of many partitions): follow it again
			// from a new snapshot.
			if job, gerr := d.Get(ctx, id); gerr == nil && !job.State.Terminal() {
				continue
			}
		}
		return err
	}
}

// logLevel is the level log logs at, for the daemon and its backend.
func logLevel(log hclog.Logger) string {
	if l := log.GetLevel(); l != hclog.NoLevel && l != hclog.Off {
		return l.String()
	}
	return "warn"
}

// fromTimeline fills each partition's synthesis, transfer, backend and verify
// figures from the events the daemon wrote for job jobID: of each phase, the
// last attempt's.
func fromTimeline(path, jobID string, parts []PartitionResult) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	byPart := map[int][]timeline.Event{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var ev timeline.Event
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			return err
		}
		if ev.Job == jobID {
			byPart[ev.Partition] = append(byPart[ev.Partition], ev)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	for i := range parts {
		p := &parts[i]
		evs := byPart[p.Index]
		last := -1 // the attempt the backend phases are taken from: the last one
		for _, ev := range evs {
			if isBackendPhase(ev) {
				last = max(last, ev.Attempt)
			}
		}
		var first, end time.Time
		for _, ev := range evs {
			if isBackendPhase(ev) && ev.Attempt == last {
				if first.IsZero() || ev.Start.Before(first) {
					first = ev.Start
				}
				if ev.End.After(end) {
					end = ev.End
				}
			}
		}
		for _, ev := range evs {
			switch {
			case ev.Phase == timeline.PhaseSynthesis:
				p.Synthesis = ev.End.Sub(ev.Start)
			case ev.Phase == timeline.PhaseStage:
				p.Transfer = ev.End.Sub(ev.Start)
			case ev.Phase == timeline.PhaseFinalize:
				p.Verify = ev.End.Sub(ev.Start)
			case isBackendPhase(ev) && ev.Attempt == last:
				p.DeviceBusy += ev.DeviceBusy
				p.Phases = append(p.Phases, sdk.Phase{Name: ev.Phase, Start: ev.Start.Sub(first), Wall: ev.End.Sub(ev.Start), DeviceBusy: ev.DeviceBusy})
			}
		}
		p.BackendWall = end.Sub(first)
	}
	return nil
}

// isBackendPhase reports whether ev is a phase a backend reported (on a device's
// lane, not one of the host's).
func isBackendPhase(ev timeline.Event) bool {
	if ev.Lane == "" {
		return false
	}
	switch ev.Phase {
	case timeline.PhaseBudgetWait, timeline.PhaseSynthesis, timeline.PhaseStage, timeline.PhaseDispatch,
		timeline.PhaseKeyLoad, timeline.PhaseFinalize, timeline.PhaseUtilization:
		return false
	}
	return true
}

// runGnark proves every partition with gnark's groth16.Prove, the peer: no daemon,
// no backend, gnark's solver inside its Prove.
func runGnark(ctx context.Context, opts Options, name string, in inputs, start time.Time) (*Result, error) {
	if in.assignment {
		return nil, errors.New("the gnark peer proves from witnesses, not wire assignments")
	}
	c, err := circuit.Load(opts.KeyDir, name)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := c.CheckSolvable(); err != nil {
		return nil, err
	}
	var witnesses []witness.Witness
	for i, data := range in.data {
		w, err := circuit.ParseWitness(data, c)
		if err != nil {
			return nil, api.NameInputFiles(api.InvalidArgumentf("witness %d %v", i, err), in.files)
		}
		witnesses = append(witnesses, w)
	}
	pk, err := c.GnarkProvingKey()
	if err != nil {
		return nil, err
	}
	res := &Result{Circuit: c.Name, KeyDigest: c.PKDigestHex(),
		Backend: sdk.Description{Name: "gnark groth16.Prove (in process)", Device: sdk.DeviceInfo{Kind: "cpu", Model: "this machine"},
			APIVersions: []uint32{}, Curves: []sdk.Curve{}}} // [] in summary.json, not null
	for i, w := range witnesses {
		if err := ctx.Err(); err != nil {
			return nil, &InterruptedError{Written: len(res.Partitions), Total: len(witnesses), OutDir: opts.OutDir, Err: err}
		}
		pr := PartitionResult{Index: i, Constraints: c.NbConstraints}
		t0 := time.Now()
		proof, err := groth16.Prove(c.System, pk, w)
		if err != nil {
			return nil, fmt.Errorf("partition %d: gnark prove: %w", i, err)
		}
		pr.Prove = time.Since(t0)
		pr.DeviceBusy = pr.Prove
		pr.Phases = []sdk.Phase{} // gnark reports none: [] in summary.json, not null
		var buf bytes.Buffer
		if _, err := proof.WriteTo(&buf); err != nil {
			return nil, err
		}
		pub, err := finalize.PublicWitness(w)
		if err != nil {
			return nil, err
		}
		t1 := time.Now()
		if _, err := finalize.Verify(c.VK, buf.Bytes(), pub); err != nil {
			return nil, fmt.Errorf("partition %d: gnark returned a proof that does not verify: %w", i, err)
		}
		pr.Verify, pr.Verified = time.Since(t1), true
		pubBytes, err := pub.MarshalBinary()
		if err != nil {
			return nil, fmt.Errorf("encode public witness: %w", err)
		}
		if err := writeProof(&pr, buf.Bytes(), pubBytes, opts.OutDir, opts.SnarkjsJSON); err != nil {
			return nil, fmt.Errorf("partition %d: %w", i, err)
		}
		res.Partitions = append(res.Partitions, pr)
	}
	res.Total = time.Since(start)
	return res, writeJSON(filepath.Join(opts.OutDir, "summary.json"), res)
}

// writeProof writes a partition's proof and public witness to outDir/<i>.proof and
// outDir/<i>.public and records their paths; with snarkjs, also snarkjs's
// outDir/<i>.proof.json and outDir/<i>.public.json.
func writeProof(pr *PartitionResult, proof, public []byte, outDir string, snarkjs bool) error {
	if len(proof) == 0 || len(public) == 0 {
		return fmt.Errorf("no proof or public witness for partition %d", pr.Index)
	}
	idx := strconv.Itoa(pr.Index)
	pr.ProofFile = filepath.Join(outDir, idx+".proof")
	pr.PublicFile = filepath.Join(outDir, idx+".public")
	if err := WriteFileAtomic(pr.ProofFile, proof); err != nil {
		return err
	}
	if err := WriteFileAtomic(pr.PublicFile, public); err != nil {
		return err
	}
	if !snarkjs {
		return nil
	}
	proofJSON, publicJSON, err := circomconv.SnarkjsFilesOf(proof, public)
	if err != nil {
		return fmt.Errorf("partition %d: %w", pr.Index, err)
	}
	if err := WriteFileAtomic(filepath.Join(outDir, idx+".proof.json"), proofJSON); err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(outDir, idx+".public.json"), publicJSON)
}

// readInputs reads the witness files or wire assignment files, or generates
// example witnesses for key set name. The daemon checks each against the circuit
// when the job is submitted.
func readInputs(name string, opts Options) (inputs, error) {
	files, kind := opts.WitnessFiles, "witness"
	in := inputs{}
	if len(opts.AssignmentFiles) > 0 {
		if len(opts.WitnessFiles) > 0 {
			return in, errors.New("give witness files or wire assignment files, not both")
		}
		files, kind, in.assignment = opts.AssignmentFiles, "wire assignment", true
	}
	if len(files) > 0 && opts.Partitions > 0 && opts.Partitions != len(files) {
		return in, fmt.Errorf("--partitions %d disagrees with %d %s files", opts.Partitions, len(files), kind)
	}
	if len(files) > 0 {
		for _, p := range files {
			data, err := os.ReadFile(p)
			if err != nil {
				return in, fmt.Errorf("%s: %w", kind, err)
			}
			in.data = append(in.data, data)
		}
		in.files = files
		return in, nil
	}
	if opts.Partitions < 1 {
		return in, errors.New("nothing to prove: give --partitions N, witness files or wire assignment files")
	}
	spec, err := circuits.FromID(name)
	if err != nil {
		return in, fmt.Errorf("circuit %s has no example witness generator (pass witness files): %w", name, err)
	}
	for i := range opts.Partitions {
		w, err := spec.Witness(i, 0)
		if err != nil {
			return in, err
		}
		data, err := w.MarshalBinary()
		if err != nil {
			return in, fmt.Errorf("example witness %d: %w", i, err)
		}
		in.data = append(in.data, data)
	}
	return in, nil
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
