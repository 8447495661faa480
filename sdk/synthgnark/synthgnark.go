package synthgnark

import (
	"bytes"
	"context"
	"crypto/sha256"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/consensys/gnark-crypto/ecc"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/backend/witness"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	"github.com/consensys/gnark/constraint/solver"
	"github.com/consensys/gnark/logger"
	_ "github.com/consensys/gnark/std/math/bits" // registers its hints (api.ToBinary's) at init

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/solve"
)

// Options configures a Synthesizer.
type Options struct {
	// Name and Version describe the synthesizer; Name defaults to "gnark".
	Name    string
	Version string
	// Solver holds the options passed to gnark's solver for every partition,
	// typically solver.WithHints with the circuit's own hints.
	Solver []solver.Option
	// MaxInFlight is how many partitions are solved at once; default 1 (gnark's
	// solver uses every core for one partition).
	MaxInFlight int
}

// Synthesizer solves gnark circuits (BLS12-381 R1CS) with its user's hints. It
// implements sdk.Synthesizer; create it with New.
type Synthesizer struct {
	opts Options

	mu       sync.Mutex
	circuits map[string]*loaded
}

type loaded struct {
	ref sdk.CircuitRef
	ccs *cs.R1CS
	// program is ccs compiled for sdk/solve, or nil when it does not handle
	// the system (gnark's solver then runs).
	program *solve.Program
}

var _ sdk.Synthesizer = (*Synthesizer)(nil)

// New returns a Synthesizer with opts.
//
// The solver knows the hints of gnark's bit decomposition (std/math/bits,
// behind api.ToBinary and friends) and of the std packages the synthesizer's
// program imports (each registers its hints when initialized); other hints,
// the circuit's own among them, go in opts.Solver. New does not call
// std.RegisterHints: it registers hints that importing std already registered,
// and gnark logs each duplicate.
//
// New silences gnark's logger (logger.Disable): it writes to standard output,
// which go-plugin owns. A program that imports gnark/std packages whose
// initialization logs (std.RegisterHints's duplicates, say) prints before main
// runs, which breaks the handshake; the host then refuses the synthesizer at
// start with "Unrecognized remote plugin message" and the printed line.
func New(opts Options) *Synthesizer {
	logger.Disable()
	if opts.Name == "" {
		opts.Name = "gnark"
	}
	if opts.MaxInFlight < 1 {
		opts.MaxInFlight = 1
	}
	return &Synthesizer{opts: opts, circuits: map[string]*loaded{}}
}

// Describe answers the synthesizer's name, API version, curve and concurrency.
func (s *Synthesizer) Describe(ctx context.Context) (sdk.SynthDescription, error) {
	return sdk.SynthDescription{
		Name:        s.opts.Name,
		Version:     s.opts.Version,
		APIVersions: []uint32{sdk.SynthAPIVersion},
		Curves:      []sdk.Curve{sdk.CurveBLS12381},
		MaxInFlight: s.opts.MaxInFlight,
	}, nil
}

// LoadCircuit reads ref's constraint system, checks its SHA-256 against
// ref.CCSSHA256 and its sizes against ref's, and keeps it for Synthesize.
func (s *Synthesizer) LoadCircuit(ctx context.Context, ref sdk.CircuitRef) error {
	s.mu.Lock()
	if l, ok := s.circuits[ref.ID]; ok {
		s.mu.Unlock()
		if l.ref.CCSSHA256 != ref.CCSSHA256 {
			return sdk.Errorf(sdk.ErrInvalidArgument, "circuit %s is loaded with another constraint system (SHA-256 %x, now %x)", ref.ID, l.ref.CCSSHA256, ref.CCSSHA256)
		}
		return nil
	}
	s.mu.Unlock()
	if ref.Curve != sdk.CurveBLS12381 {
		return sdk.Errorf(sdk.ErrInvalidArgument, "circuit %s: curve %q, this synthesizer solves %s", ref.ID, ref.Curve, sdk.CurveBLS12381)
	}
	data, err := os.ReadFile(ref.CCSPath)
	if err != nil {
		return sdk.Errorf(sdk.ErrInvalidArgument, "circuit %s: constraint system: %v", ref.ID, err)
	}
	if sum := sha256.Sum256(data); sum != ref.CCSSHA256 {
		return sdk.Errorf(sdk.ErrInvalidArgument, "circuit %s: constraint system %s has SHA-256 %x, the host says %x", ref.ID, ref.CCSPath, sum, ref.CCSSHA256)
	}
	ccs := new(cs.R1CS)
	if _, err := ccs.ReadFrom(bytes.NewReader(data)); err != nil {
		return sdk.Errorf(sdk.ErrInvalidArgument, "circuit %s: constraint system %s does not decode as a BLS12-381 R1CS: %v", ref.ID, ref.CCSPath, err)
	}
	nbPublic, nbSecret := uint64(ccs.GetNbPublicVariables()), uint64(ccs.GetNbSecretVariables())
	nbWires := nbPublic + nbSecret + uint64(ccs.GetNbInternalVariables())
	for _, f := range []struct {
		name      string
		got, want uint64
	}{
		{"wires", nbWires, ref.NbWires},
		{"constraints", uint64(ccs.GetNbConstraints()), ref.NbConstraints},
		{"public wires", nbPublic, ref.NbPublic},
		{"secret inputs", nbSecret, ref.NbSecret},
	} {
		if f.got != f.want {
			return sdk.Errorf(sdk.ErrInvalidArgument, "circuit %s: the constraint system has %d %s, the host says %d", ref.ID, f.got, f.name, f.want)
		}
	}
	program, _ := solve.Compile(ccs) // nil: gnark's solver runs
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.circuits[ref.ID]; !ok {
		s.circuits[ref.ID] = &loaded{ref: ref, ccs: ccs, program: program}
	}
	return nil
}

// Synthesize parses req.Witness, solves the circuit with the configured solver
// options and writes the partition to req.Output. gnark's solver takes no
// context: a cancelled call returns when the solve finishes.
func (s *Synthesizer) Synthesize(ctx context.Context, req sdk.SynthesizeRequest) (sdk.SynthesizeResult, error) {
	start := time.Now()
	s.mu.Lock()
	l, ok := s.circuits[req.CircuitID]
	s.mu.Unlock()
	if !ok {
		return sdk.SynthesizeResult{}, sdk.Errorf(sdk.ErrKeyNotLoaded, "circuit %q is not loaded", req.CircuitID)
	}
	ref := l.ref
	if req.Output.NbWires != ref.NbWires || req.Output.NbConstraints != ref.NbConstraints || req.Output.Curve != ref.Curve {
		return sdk.SynthesizeResult{}, sdk.Errorf(sdk.ErrInvalidArgument, "output handle is for %d wires and %d constraints of %s, circuit %s has %d and %d of %s",
			req.Output.NbWires, req.Output.NbConstraints, req.Output.Curve, ref.ID, ref.NbWires, ref.NbConstraints, ref.Curve)
	}
	w, err := witness.New(ecc.BLS12_381.ScalarField())
	if err != nil {
		return sdk.SynthesizeResult{}, sdk.Errorf(sdk.ErrInternal, "witness: %v", err)
	}
	if err := w.UnmarshalBinary(req.Witness); err != nil {
		return sdk.SynthesizeResult{}, sdk.Errorf(sdk.ErrInvalidArgument, "witness (%d bytes) does not decode as a BLS12-381 gnark witness: %v", len(req.Witness), err)
	}
	v, ok := w.Vector().(fr.Vector)
	if !ok {
		return sdk.SynthesizeResult{}, sdk.Errorf(sdk.ErrInvalidArgument, "witness holds %T, want BLS12-381 scalars", w.Vector())
	}
	if want := ref.NbPublic - 1 + ref.NbSecret; uint64(len(v)) != want {
		return sdk.SynthesizeResult{}, sdk.Errorf(sdk.ErrInvalidArgument, "witness has %d values, circuit %s wants %d (%d public, %d secret)", len(v), ref.ID, want, ref.NbPublic-1, ref.NbSecret)
	}
	pub, err := w.Public()
	if err != nil {
		return sdk.SynthesizeResult{}, sdk.Errorf(sdk.ErrInvalidArgument, "witness: %v", err)
	}
	if got := uint64(len(pub.Vector().(fr.Vector))); got != ref.NbPublic-1 {
		return sdk.SynthesizeResult{}, sdk.Errorf(sdk.ErrInvalidArgument, "witness has %d public values, circuit %s wants %d", got, ref.ID, ref.NbPublic-1)
	}
	W, A, B, err := solve.R1CS(l.ccs, l.program, w, s.solverOptions()...)
	if err != nil {
		return sdk.SynthesizeResult{}, sdk.Errorf(sdk.ErrInvalidArgument, "circuit %s: the witness does not satisfy the circuit: %v", ref.ID, err)
	}
	if err := ctx.Err(); err != nil {
		return sdk.SynthesizeResult{}, sdk.Errorf(sdk.ErrCanceled, "synthesize: %v", err)
	}
	if err := sdk.WritePartition(req.Output, W, A, B); err != nil {
		return sdk.SynthesizeResult{}, err
	}
	return sdk.SynthesizeResult{Wall: time.Since(start)}, nil
}

// solverOptions are the configured options with the solver's threads bounded
// by the share of cores one in-flight partition gets.
func (s *Synthesizer) solverOptions() []solver.Option {
	threads := max(1, runtime.GOMAXPROCS(0)/s.opts.MaxInFlight)
	return append([]solver.Option{solver.WithNbTasks(threads)}, s.opts.Solver...)
}
