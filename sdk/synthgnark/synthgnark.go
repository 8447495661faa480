package synthgnark

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"math/big"
	"os"
	"runtime"
	"sync"
	"time"

	blsfr "github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	bnfr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	cs_bn254 "github.com/consensys/gnark/constraint/bn254"
	"github.com/consensys/gnark/constraint/solver"
	"github.com/consensys/gnark/logger"
	_ "github.com/consensys/gnark/std/math/bits" // registers its hints (api.ToBinary's) at init

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/solve"
	"github.com/zkhost/zkhost/sdk/solvebn254"
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

// Synthesizer solves gnark circuits (R1CS of BLS12-381 or BN254) with its
// user's hints. It implements sdk.Synthesizer; create it with New.
type Synthesizer struct {
	opts Options

	mu       sync.Mutex
	circuits map[string]*loaded
}

type loaded struct {
	ref sdk.CircuitRef
	// solve solves one partition of the circuit and writes it: solveAndWrite
	// bound, by LoadCircuit, to the circuit's curve and compiled program.
	solve solveFunc
}

// solveFunc solves the full witness w of circuit ref and writes the partition
// to out, unless ctx ends first.
type solveFunc func(ctx context.Context, ref sdk.CircuitRef, w witness.Witness, out sdk.PartitionHandle, opts []solver.Option) error

// curves are the curves the synthesizer solves (newSystem's).
var curves = []sdk.Curve{sdk.CurveBLS12381, sdk.CurveBN254}

// newSystem returns an empty gnark R1CS of curve c, to read the circuit into,
// and bind, which returns the solveFunc of that system once read; ok is false
// for a curve the synthesizer does not solve. Each curve's solver is a package
// of its own (sdk/solve, and sdk/solvebn254 generated from it), so the curve
// picks it here; everything after is one generic path, solveAndWrite.
func newSystem(c sdk.Curve) (ccs constraint.ConstraintSystem, bind func() solveFunc, ok bool) {
	switch c {
	case sdk.CurveBLS12381:
		r := new(cs.R1CS)
		return r, func() solveFunc {
			program, _ := solve.Compile(r) // nil: gnark's solver runs
			return solveAndWrite[blsfr.Element, blsfr.Vector](func(w witness.Witness, opts []solver.Option) (W, A, B []blsfr.Element, err error) {
				return solve.R1CS(r, program, w, opts...)
			})
		}, true
	case sdk.CurveBN254:
		r := new(cs_bn254.R1CS)
		return r, func() solveFunc {
			program, _ := solvebn254.Compile(r) // nil: gnark's solver runs
			return solveAndWrite[bnfr.Element, bnfr.Vector](func(w witness.Witness, opts []solver.Option) (W, A, B []bnfr.Element, err error) {
				return solvebn254.R1CS(r, program, w, opts...)
			})
		}, true
	}
	return nil, nil, false
}

// solveAndWrite returns the solveFunc of a circuit whose scalars are S, solved
// by solveR1CS: it checks the witness's sizes against the circuit's, solves,
// and writes W, A and B. V is the curve's fr.Vector, what a witness of its
// field holds.
func solveAndWrite[S ~[4]uint64, V ~[]S](solveR1CS func(w witness.Witness, opts []solver.Option) (W, A, B []S, err error)) solveFunc {
	return func(ctx context.Context, ref sdk.CircuitRef, w witness.Witness, out sdk.PartitionHandle, opts []solver.Option) error {
		v, ok := w.Vector().(V)
		if !ok {
			return sdk.Errorf(sdk.ErrInvalidArgument, "witness holds %T, want %s scalars", w.Vector(), curve.TitleOf(string(ref.Curve)))
		}
		if want := ref.NbPublic - 1 + ref.NbSecret; uint64(len(v)) != want {
			return sdk.Errorf(sdk.ErrInvalidArgument, "witness has %d values, circuit %s wants %d (%d public, %d secret)", len(v), ref.ID, want, ref.NbPublic-1, ref.NbSecret)
		}
		pub, err := w.Public()
		if err != nil {
			return sdk.Errorf(sdk.ErrInvalidArgument, "witness: %v", err)
		}
		if got := uint64(len(pub.Vector().(V))); got != ref.NbPublic-1 {
			return sdk.Errorf(sdk.ErrInvalidArgument, "witness has %d public values, circuit %s wants %d", got, ref.ID, ref.NbPublic-1)
		}
		W, A, B, err := solveR1CS(w, opts)
		if err != nil {
			return sdk.Errorf(sdk.ErrInvalidArgument, "circuit %s: the witness does not satisfy the circuit: %v", ref.ID, err)
		}
		if err := ctx.Err(); err != nil {
			return sdk.Errorf(sdk.ErrCanceled, "synthesize: %v", err)
		}
		return sdk.WritePartition(out, W, A, B)
	}
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

// Describe answers the synthesizer's name, API version, curves and
// concurrency.
func (s *Synthesizer) Describe(ctx context.Context) (sdk.SynthDescription, error) {
	return sdk.SynthDescription{
		Name:        s.opts.Name,
		Version:     s.opts.Version,
		APIVersions: []uint32{sdk.SynthAPIVersion},
		Curves:      append([]sdk.Curve(nil), curves...),
		MaxInFlight: s.opts.MaxInFlight,
	}, nil
}

// LoadCircuit reads ref's constraint system as gnark's R1CS of ref.Curve,
// checks its SHA-256 against ref.CCSSHA256 and its sizes against ref's, and
// keeps it for Synthesize.
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
	ccs, bind, ok := newSystem(ref.Curve)
	if !ok {
		return sdk.Errorf(sdk.ErrInvalidArgument, "circuit %s: curve %q, this synthesizer solves %v", ref.ID, ref.Curve, curves)
	}
	data, err := os.ReadFile(ref.CCSPath)
	if err != nil {
		return sdk.Errorf(sdk.ErrInvalidArgument, "circuit %s: constraint system: %v", ref.ID, err)
	}
	if sum := sha256.Sum256(data); sum != ref.CCSSHA256 {
		return sdk.Errorf(sdk.ErrInvalidArgument, "circuit %s: constraint system %s has SHA-256 %x, the host says %x", ref.ID, ref.CCSPath, sum, ref.CCSSHA256)
	}
	if err := readSystem(ccs, data); err != nil {
		return sdk.Errorf(sdk.ErrInvalidArgument, "circuit %s: constraint system %s does not decode as a %s R1CS: %v", ref.ID, ref.CCSPath, curve.TitleOf(string(ref.Curve)), err)
	}
	// gnark's decoder reads a system of another curve all the same (its
	// scalars fit either type); the field the system was compiled for is in
	// its header.
	if id, _ := curve.Parse(string(ref.Curve)); ccs.Field().Cmp(id.ScalarField()) != 0 {
		return sdk.Errorf(sdk.ErrInvalidArgument, "circuit %s: constraint system %s is compiled for %s, the host says the circuit is %s",
			ref.ID, ref.CCSPath, fieldTitle(ccs.Field()), curve.TitleOf(string(ref.Curve)))
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
	l := &loaded{ref: ref, solve: bind()}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.circuits[ref.ID]; !ok {
		s.circuits[ref.ID] = l
	}
	return nil
}

// readSystem decodes data, a gnark constraint system file, into ccs. gnark's
// decoder allocates the length it reads before checking it, and panics on some
// malformed input: the length is checked first and a panic is an error.
func readSystem(ccs constraint.ConstraintSystem, data []byte) (err error) {
	if len(data) < 32 || binary.LittleEndian.Uint64(data) != uint64(len(data)-32) {
		return errors.New("bad length header or truncated")
	}
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("decoder failed: %v", r)
		}
	}()
	_, err = ccs.ReadFrom(bytes.NewReader(data))
	return err
}

// fieldTitle names the curve whose scalar field is field, or its modulus.
func fieldTitle(field *big.Int) string {
	for _, id := range curve.IDs {
		if id.ScalarField().Cmp(field) == 0 {
			return curve.Title(id)
		}
	}
	return "the field of modulus " + field.Text(16)
}

// Synthesize parses req.Witness over the circuit's curve, solves the circuit
// with the configured solver options and writes the partition to req.Output.
// gnark's solver takes no context: a cancelled call returns when the solve
// finishes, and writes nothing.
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
	id, err := curve.Parse(string(ref.Curve)) // LoadCircuit took only a curve newSystem knows
	if err != nil {
		return sdk.SynthesizeResult{}, sdk.Errorf(sdk.ErrInternal, "circuit %s: %v", ref.ID, err)
	}
	w, err := witness.New(id.ScalarField())
	if err != nil {
		return sdk.SynthesizeResult{}, sdk.Errorf(sdk.ErrInternal, "witness: %v", err)
	}
	if err := w.UnmarshalBinary(req.Witness); err != nil {
		return sdk.SynthesizeResult{}, sdk.Errorf(sdk.ErrInvalidArgument, "witness (%d bytes) does not decode as a %s gnark witness: %v", len(req.Witness), curve.Title(id), err)
	}
	if err := l.solve(ctx, ref, w, req.Output, s.solverOptions()); err != nil {
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
