package circuit

import (
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	bnfr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
	"github.com/consensys/gnark/backend/witness"
	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	cs_bn254 "github.com/consensys/gnark/constraint/bn254"
	"github.com/consensys/gnark/constraint/solver"

	"github.com/zkhost/zkhost/sdk"
	"github.com/zkhost/zkhost/sdk/circom"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/solvebn254"
)

// A wire assignment is a partition solved elsewhere: the value of every wire of the
// circuit, so the host needs no solver (and none of the circuit's hints) to prove it.
// docs/assignment.md documents the format:
//
//	offset  size  field
//	0       4     magic "ZKWA"
//	4       4     version, big-endian uint32: 1
//	8       4     public wires, including the constant-one wire (big-endian uint32)
//	12      4     secret wires (big-endian uint32)
//	16      4     all wires: public + secret + internal (big-endian uint32)
//	20      32·n  the n wire values in gnark's wire order (the constant one, public
//	              inputs, secret inputs, internal wires), each a canonical big-endian
//	              scalar of the circuit's curve (fr.Element.Bytes)
const (
	AssignmentMagic   = "ZKWA"
	AssignmentVersion = 1
	assignmentHeader  = 20
)

// ExtAssignment is the file name extension of wire assignment files.
const ExtAssignment = ".wires"

// GnarkAssignments solves full witnesses of c (gnark's MarshalBinary), a job's
// partitions, with gnark's own solver, given the hints the circuit needs in
// opts, and returns their wire assignments in order: what a client that
// solves elsewhere sends (docs/assignment.md shows the same steps), and the
// reference the tests compare zkhost's solvers with.
func (c *Circuit) GnarkAssignments(fullWitnesses [][]byte, opts ...solver.Option) ([][]byte, error) {
	out := make([][]byte, len(fullWitnesses))
	for i, b := range fullWitnesses {
		w, err := ParseWitness(b, c)
		if err != nil {
			return nil, fmt.Errorf("witness %d %w", i, err)
		}
		sol, err := c.System.Solve(w, opts...)
		if err != nil {
			return nil, fmt.Errorf("witness %d: %w", i, err)
		}
		switch sol := sol.(type) {
		case *cs.R1CSSolution:
			out[i] = MarshalAssignment(sol.W, c.NbPublic, c.NbSecret)
		case *cs_bn254.R1CSSolution:
			out[i] = MarshalAssignment(sol.W, c.NbPublic, c.NbSecret)
		default:
			return nil, fmt.Errorf("witness %d: gnark's solver gave a %T", i, sol)
		}
	}
	return out, nil
}

// IsAssignment reports whether data is a wire assignment (it starts with
// AssignmentMagic, or is a circom witness: IsWtns) rather than a gnark witness. They
// cannot be confused: a gnark witness starts with its public input count, and either
// magic read as one is over a billion.
func IsAssignment(data []byte) bool {
	return len(data) >= len(AssignmentMagic) && string(data[:len(AssignmentMagic)]) == AssignmentMagic || IsWtns(data)
}

// MarshalAssignment encodes the wire values W of a circuit with nbPublic public wires
// (the constant-one wire included) and nbSecret secret wires as a wire assignment,
// scalars of either curve.
func MarshalAssignment[S any, PS curve.Scalar[S]](W []S, nbPublic, nbSecret int) []byte {
	b := make([]byte, assignmentHeader, assignmentHeader+len(W)*fr.Bytes)
	copy(b, AssignmentMagic)
	binary.BigEndian.PutUint32(b[4:], AssignmentVersion)
	binary.BigEndian.PutUint32(b[8:], uint32(nbPublic))
	binary.BigEndian.PutUint32(b[12:], uint32(nbSecret))
	binary.BigEndian.PutUint32(b[16:], uint32(len(W)))
	for i := range W {
		v := PS(&W[i]).Bytes()
		b = append(b, v[:]...)
	}
	return b
}

// CheckAssignmentHeader checks a wire assignment's header and size against circuit c
// without decoding its values: what the daemon refuses at submit. Errors say what is
// wrong and what c wants.
func CheckAssignmentHeader(data []byte, c *Circuit) error {
	if IsWtns(data) {
		_, err := checkWtns(data, c)
		return err
	}
	return checkAssignment(data[:min(len(data), compactAssignmentHeader)], int64(len(data)), c)
}

// checkAssignment checks an assignment's header (its first bytes, up to
// compactAssignmentHeader) and its total size.
func checkAssignment(head []byte, size int64, c *Circuit) error {
	if !IsAssignment(head) {
		if size >= witnessHeader {
			return fmt.Errorf("is not a wire assignment (no %q magic; a gnark witness is submitted as a witness, not an assignment)", AssignmentMagic)
		}
		return fmt.Errorf("is not a wire assignment (no %q magic)", AssignmentMagic)
	}
	if len(head) < assignmentHeader {
		return fmt.Errorf("is truncated: %d bytes, shorter than the %d-byte header", size, assignmentHeader)
	}
	version := binary.BigEndian.Uint32(head[4:])
	if version != AssignmentVersion && version != CompactAssignmentVersion && version != compactAssignmentV2 {
		return fmt.Errorf("has format version %d, this build reads %d (full), %d and %d (compact)", version, AssignmentVersion, compactAssignmentV2, CompactAssignmentVersion)
	}
	compact := version != AssignmentVersion
	if compact {
		// The curve first: a circuit of the other curve often has the same
		// counts, and the curve is what is wrong then.
		h, err := readCompactHeader(head, size)
		if err != nil {
			return err
		}
		if sdk.Curve(curve.Name(h.curve)) != c.Curve {
			return fmt.Errorf("is a compact wire assignment of %s scalars, circuit %s is %s", curve.Title(h.curve), c.Name, c.curveTitle())
		}
	}
	nbPublic := binary.BigEndian.Uint32(head[8:])
	nbSecret := binary.BigEndian.Uint32(head[12:])
	nbWires := binary.BigEndian.Uint32(head[16:])
	if int64(nbPublic) != int64(c.NbPublic) || int64(nbSecret) != int64(c.NbSecret) || int64(nbWires) != int64(c.NbWires) {
		return fmt.Errorf("has %d wires (%d public, %d secret), circuit %s has %d wires (%d public including the constant one, %d secret)",
			nbWires, nbPublic, nbSecret, c.Name, c.NbWires, c.NbPublic, c.NbSecret)
	}
	if compact {
		return nil // its size is checked with its header
	}
	if want := assignmentHeader + int64(nbWires)*fr.Bytes; size != want {
		return fmt.Errorf("has %d bytes, want %d for %d wires of %d bytes (truncated, or trailing bytes)", size, want, nbWires, fr.Bytes)
	}
	return nil
}

// ParseAssignment decodes a wire assignment for circuit c: the header checks of
// CheckAssignmentHeader, then every value must be a canonical BLS12-381 scalar and
// wire 0, the constant one, must be 1. It decodes on threads goroutines (0: every
// core). The result is W, the value of every wire, ready for Evaluate.
func ParseAssignment(data []byte, c *Circuit, threads int) ([]fr.Element, error) {
	if err := c.needBLS12381("ParseAssignment"); err != nil {
		return nil, err
	}
	W := make([]fr.Element, c.NbWires)
	if err := parseAssignmentInto(data, c, threads, W); err != nil {
		return nil, err
	}
	return W, nil
}

// parseAssignmentInto is ParseAssignment into W, c.NbWires scalars S of c's
// curve, of any encoding: full, compact or a circom .wtns.
func parseAssignmentInto[S any, PS curve.Scalar[S]](data []byte, c *Circuit, threads int, W []S) error {
	if err := needScalars[S](c, "an assignment"); err != nil {
		return err
	}
	if len(W) != c.NbWires {
		return fmt.Errorf("circuit %s: W holds %d values, want %d", c.Name, len(W), c.NbWires)
	}
	if IsWtns(data) {
		if err := parseWtnsInto[S, PS](data, c, threads, W); err != nil {
			return err
		}
		return checkConstantOne[S, PS](W)
	}
	if IsCompactAssignment(data) {
		a, err := ReadCompactAssignment[S, PS](data, c)
		if err != nil {
			return err
		}
		if err := a.expand(W, threads); err != nil {
			return err
		}
		return checkConstantOne[S, PS](W)
	}
	if err := CheckAssignmentHeader(data, c); err != nil {
		return err
	}
	values := data[assignmentHeader:]
	bad := firstFailure(len(W), threads, func(lo, hi int) (int, error) {
		for i := lo; i < hi; i++ {
			if err := PS(&W[i]).SetBytesCanonical(values[i*scalarBytes : (i+1)*scalarBytes]); err != nil {
				return i, err
			}
		}
		return -1, nil
	})
	if bad.index >= 0 {
		return fmt.Errorf("wire %d is not a canonical %s scalar: %v", bad.index, c.curveTitle(), bad.err)
	}
	return checkConstantOne[S, PS](W)
}

// checkConstantOne refuses an assignment whose wire 0, the constant one, is not 1.
func checkConstantOne[S any, PS curve.Scalar[S]](W []S) error {
	if !PS(&W[0]).IsOne() {
		return fmt.Errorf("wire 0, the constant one, is %s, want 1", PS(&W[0]).String())
	}
	return nil
}

// ReadAssignment reads a wire assignment file for circuit c (ParseAssignment with
// every core); errors name the file.
func ReadAssignment(path string, c *Circuit) ([]fr.Element, error) {
	if err := c.needBLS12381("ReadAssignment"); err != nil {
		return nil, err
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("circuit: %w", err)
	}
	W, err := ParseAssignment(data, c, 0)
	if err != nil {
		return nil, fmt.Errorf("circuit: wire assignment %s %w", path, err)
	}
	return W, nil
}

// AssignmentWitness returns the gnark full witness that wire assignment W holds:
// its public and secret inputs, wires 1 to NbPublic+NbSecret-1. The finalizer checks
// a proof against its public part. W's scalars S are c's curve's.
func AssignmentWitness[S any, PS curve.Scalar[S]](c *Circuit, W []S) (witness.Witness, error) {
	if len(W) != c.NbWires {
		return nil, fmt.Errorf("circuit %s: assignment has %d wires, want %d", c.Name, len(W), c.NbWires)
	}
	return inputsWitness[S, PS](c, W[1:c.NbPublic+c.NbSecret])
}

// inputsWitness is the gnark full witness of c's public and secret inputs
// (the wires after the constant one, in order).
func inputsWitness[S any, PS curve.Scalar[S]](c *Circuit, inputs []S) (witness.Witness, error) {
	if len(inputs) != c.NbPublic-1+c.NbSecret {
		return nil, fmt.Errorf("circuit %s: assignment's inputs: %d values, want %d", c.Name, len(inputs), c.NbPublic-1+c.NbSecret)
	}
	if err := needScalars[S](c, "an assignment's inputs"); err != nil {
		return nil, err
	}
	w, err := witness.New(c.field())
	if err != nil {
		return nil, err
	}
	// The witness is built from its binary form (gnark's: public and secret
	// counts, the vector's length, then each value's 32 big-endian bytes), not
	// through Fill's channel of boxed values: every wire of a circom circuit is
	// an input, and boxing each cost more than the rest of the partition's
	// parsing (BENCHMARKS.md, "A circomlib circuit of 2^20").
	const head = witnessHeader
	buf := make([]byte, head+32*len(inputs))
	binary.BigEndian.PutUint32(buf[0:], uint32(c.NbPublic-1))
	binary.BigEndian.PutUint32(buf[4:], uint32(c.NbSecret))
	binary.BigEndian.PutUint32(buf[8:], uint32(len(inputs)))
	for i := range inputs {
		b := PS(&inputs[i]).Bytes()
		copy(buf[head+32*i:], b[:])
	}
	if err := w.UnmarshalBinary(buf); err != nil {
		return nil, fmt.Errorf("circuit %s: assignment's inputs: %w", c.Name, err)
	}
	return w, nil
}

// UnsatisfiedError is Evaluate's error for an assignment that breaks a constraint.
type UnsatisfiedError struct {
	Circuit    string
	Constraint int    // the lowest index of a constraint that does not hold
	A, B, C    string // the constraint's three values, in decimal
}

func (e *UnsatisfiedError) Error() string {
	return fmt.Sprintf("circuit %s: the wire assignment does not satisfy constraint %d: A·B = %s · %s, but C = %s",
		e.Circuit, e.Constraint, e.A, e.B, e.C)
}

// Evaluate computes, from the wire values W, every constraint's left and right linear
// combination (A and B, as Synthesize returns them) and checks that each constraint
// holds (A·B = C). A constraint that does not hold is an *UnsatisfiedError naming the
// lowest such index; nothing is returned with it, so no proof of a false statement can
// be asked for.
//
// It reads the constraints through gnark's constraint system (its instructions,
// blueprints and coefficient table) on threads goroutines (0: every core), each taking
// a contiguous run of instructions: time and memory are linear in the circuit's size.
// W's scalars S are c's curve's fr.Element.
func Evaluate[S any, PS curve.Scalar[S]](c *Circuit, W []S, threads int) (A, B []S, err error) {
	sys, coeffs, err := systemAs[S](c)
	if err != nil {
		return nil, nil, err
	}
	A = make([]S, c.NbConstraints)
	B = make([]S, c.NbConstraints)
	if err := evaluate[S, PS](c, sys, coeffs, W, A, B, threads); err != nil {
		return nil, nil, err
	}
	return A, B, nil
}

// evaluate is Evaluate on any curve, into A and B (len c.NbConstraints): sys is the
// constraint system and coeffs its coefficient table, of the curve whose scalars are
// S.
func evaluate[S any, PS curve.Scalar[S]](c *Circuit, sys *constraint.System, coeffs, W, A, B []S, threads int) error {
	if len(W) != c.NbWires {
		return fmt.Errorf("circuit %s: assignment has %d wires, want %d", c.Name, len(W), c.NbWires)
	}
	if len(A) != c.NbConstraints || len(B) != c.NbConstraints {
		return fmt.Errorf("circuit %s: A and B hold %d and %d values, want %d", c.Name, len(A), len(B), c.NbConstraints)
	}
	var (
		mu        sync.Mutex
		evaluated int
		bad       *UnsatisfiedError
	)
	failed := firstFailure(len(sys.Instructions), threads, func(lo, hi int) (int, error) {
		var r constraint.R1C
		var ab, o S
		n := 0
		for i := lo; i < hi; i++ {
			pi := sys.Instructions[i]
			bp := sys.Blueprints[pi.BlueprintID]
			bc, ok := bp.(constraint.BlueprintR1C)
			if !ok {
				if k := bp.NbConstraints(); k != 0 {
					return i, fmt.Errorf("instruction %d is %d constraints of a kind zkhost cannot evaluate (%T)", i, k, bp)
				}
				continue // a hint: its outputs are wires of W
			}
			inst := pi.Unpack(sys)
			bc.DecompressR1C(&r, inst)
			id := int(inst.ConstraintOffset)
			if id >= len(A) {
				return i, fmt.Errorf("instruction %d is constraint %d, past the %d the system declares", i, id, len(A))
			}
			evalLinear[S, PS](&A[id], r.L, W, coeffs)
			evalLinear[S, PS](&B[id], r.R, W, coeffs)
			evalLinear[S, PS](&o, r.O, W, coeffs)
			n++
			if PS(&ab).Mul(&A[id], &B[id]); !PS(&ab).Equal(&o) {
				mu.Lock()
				if bad == nil || id < bad.Constraint {
					bad = &UnsatisfiedError{Circuit: c.Name, Constraint: id, A: PS(&A[id]).String(), B: PS(&B[id]).String(), C: PS(&o).String()}
				}
				mu.Unlock()
				return i, errUnsatisfied
			}
		}
		mu.Lock()
		evaluated += n
		mu.Unlock()
		return -1, nil
	})
	if failed.index >= 0 {
		if failed.err == errUnsatisfied {
			return bad
		}
		return fmt.Errorf("circuit %s: %w", c.Name, failed.err)
	}
	if evaluated != c.NbConstraints {
		return fmt.Errorf("circuit %s: evaluated %d constraints of the %d the system declares", c.Name, evaluated, c.NbConstraints)
	}
	return nil
}

// minChunk is the fewest items firstFailure gives a goroutine: smaller chunks cost
// more in goroutines than they save. Tests lower it to run small circuits in many
// chunks.
var minChunk = 4096

// errUnsatisfied marks a chunk of Evaluate that stopped at an unsatisfied constraint.
var errUnsatisfied = fmt.Errorf("unsatisfied constraint")

// evalLinear sets dst to Σ coefficient·W[wire] over the terms of l. The coefficient
// table's first entries are 0, 1, 2, -1 and -2 (gnark's CoeffId constants), which
// are almost every coefficient a frontend writes: they cost an addition, not a
// multiplication. Deliberately parallel to sdk/internal/devsetup's accumulate:
// see why there.
func evalLinear[S any, PS curve.Scalar[S]](dst *S, l constraint.LinearExpression, W, coeffs []S) {
	d := PS(dst)
	d.SetZero()
	var t S
	for _, term := range l {
		v := &W[term.VID]
		switch term.CID {
		case constraint.CoeffIdZero:
		case constraint.CoeffIdOne:
			d.Add(dst, v)
		case constraint.CoeffIdMinusOne:
			d.Sub(dst, v)
		case constraint.CoeffIdTwo:
			PS(&t).Double(v)
			d.Add(dst, &t)
		case constraint.CoeffIdMinusTwo:
			PS(&t).Double(v)
			d.Sub(dst, &t)
		default:
			PS(&t).Mul(&coeffs[term.CID], v)
			d.Add(dst, &t)
		}
	}
}

// failure is the first failure of a firstFailure run: the lowest failing index, or
// -1.
type failure struct {
	index int
	err   error
}

// firstFailure runs work over [0, n) in contiguous chunks on threads goroutines (0:
// GOMAXPROCS). work returns the index it failed at and why, or -1. firstFailure
// returns the failure with the lowest index: since chunks are contiguous and each
// stops at its first failure, that is the first failure in index order. A panic in
// work (a malformed constraint system indexing out of range) is a failure at the
// chunk's start.
func firstFailure(n, threads int, work func(lo, hi int) (int, error)) failure {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	chunks := min(threads, max(1, n/minChunk))
	size := (n + chunks - 1) / max(chunks, 1)
	results := make([]failure, chunks)
	var wg sync.WaitGroup
	for k := range chunks {
		lo, hi := k*size, min(n, (k+1)*size)
		wg.Go(func() {
			defer func() {
				if r := recover(); r != nil {
					results[k] = failure{lo, fmt.Errorf("malformed constraint system: %v", r)}
				}
			}()
			i, err := work(lo, hi)
			results[k] = failure{i, err}
		})
	}
	wg.Wait()
	for _, f := range results {
		if f.index >= 0 {
			return f
		}
	}
	return failure{index: -1}
}

// SynthesizeInput synthesizes one partition from its input, a gnark full witness
// (Synthesize) or a wire assignment (ParseAssignment and Evaluate), told apart by
// IsAssignment. Besides W, A and B it returns the full witness, whose public part a
// proof is verified against.
func SynthesizeInput(c *Circuit, data []byte, threads int) (W, A, B []fr.Element, full witness.Witness, err error) {
	W, A, B = make([]fr.Element, c.NbWires), make([]fr.Element, c.NbConstraints), make([]fr.Element, c.NbConstraints)
	if full, err = SynthesizeInputInto(c, data, threads, W, A, B); err != nil {
		return nil, nil, nil, nil, err
	}
	return W, A, B, full, nil
}

// SynthesizeInputInto is SynthesizeInput writing W, A and B into the caller's
// vectors (len c.NbWires, c.NbConstraints, c.NbConstraints), such as a
// partition's memory (shm.Store.WriteWith): a witness is solved there in place,
// and a wire assignment parsed and evaluated there. A and B may both be nil
// (W alone, for a compact partition).
func SynthesizeInputInto(c *Circuit, data []byte, threads int, W, A, B []fr.Element) (full witness.Witness, err error) {
	if err := c.needBLS12381("SynthesizeInputInto"); err != nil {
		return nil, err
	}
	if len(W) != c.NbWires || (A != nil || B != nil) && (len(A) != c.NbConstraints || len(B) != c.NbConstraints) {
		return nil, fmt.Errorf("circuit %s: destination lengths W %d, A %d, B %d; want %d, %d, %d (or A and B nil)",
			c.Name, len(W), len(A), len(B), c.NbWires, c.NbConstraints, c.NbConstraints)
	}
	if !IsAssignment(data) {
		if full, err = ParseWitness(data, c); err != nil {
			return nil, fmt.Errorf("witness %w", err)
		}
		return full, SynthesizeInto(c, full, threads, W, A, B)
	}
	// A wire assignment is parsed into W and, unless W alone is asked for (the
	// backend then evaluates A, B and C from the circuit's matrices, and checks
	// every constraint as it does), evaluated into A and B in place.
	if err := parseAssignmentInto(data, c, threads, W); err != nil {
		return nil, fmt.Errorf("wire assignment %w", err)
	}
	if A != nil {
		if err := evaluate(c, &c.CCS.System, c.CCS.Coefficients, W, A, B, threads); err != nil {
			return nil, err
		}
	}
	return AssignmentWitness(c, W)
}

// SynthesizeInputCompact is SynthesizeInputInto for W alone that also fills
// W's compact bitmaps (other and bits, sdk.CompactWords(c.NbWires) words
// each) and returns how many values are neither 0 nor 1, on a circuit of
// either curve: W's scalars S are its curve's fr.Element (anything else is
// an error). A gnark witness is solved (the curve's sdk/solve), a wire
// assignment parsed into W; the constraints are left to the backend, which
// evaluates A and B from them and checks every one.
func SynthesizeInputCompact[S ~[4]uint64](c *Circuit, data []byte, threads int, W []S, other, bits []uint64) (full witness.Witness, nbOther uint64, err error) {
	switch r := c.System.(type) {
	case *cs.R1CS:
		w, ok := any(W).([]fr.Element)
		if !ok {
			break
		}
		return synthesizeCompact(c, data, threads, w, other, bits,
			func(full witness.Witness, W []fr.Element) (uint64, error) {
				return SynthesizeCompactInto(c, full, threads, W, other, bits)
			})
	case *cs_bn254.R1CS:
		w, ok := any(W).([]bnfr.Element)
		if !ok {
			break
		}
		return synthesizeCompact(c, data, threads, w, other, bits,
			func(full witness.Witness, W []bnfr.Element) (uint64, error) {
				if err := c.CheckSolvable(); err != nil {
					return 0, err
				}
				n, err := solvebn254.CompactInto(r, c.bn254Program(), full, W, other, bits, solverOpts(threads)...)
				if err != nil {
					return 0, fmt.Errorf("circuit %s: the witness does not satisfy the circuit: %w", c.Name, err)
				}
				return n, nil
			})
	}
	return nil, 0, fmt.Errorf("circuit %s: compact synthesis of %s scalars (%T) for a %s circuit", c.Name,
		curve.Title(curve.ScalarIDOf[S]()), *new(S), c.curveTitle())
}

// synthesizeCompact is SynthesizeInputCompact on the scalars S of c's curve:
// a gnark witness is parsed and solved into W and its bitmaps by solve; a
// wire assignment, of any encoding, is parsed into W, then packed.
func synthesizeCompact[S ~[4]uint64, PS curve.Scalar[S]](c *Circuit, data []byte, threads int, W []S, other, bits []uint64,
	solve func(full witness.Witness, W []S) (uint64, error)) (witness.Witness, uint64, error) {
	if len(W) != c.NbWires {
		return nil, 0, fmt.Errorf("circuit %s: W holds %d values, want %d", c.Name, len(W), c.NbWires)
	}
	if !IsAssignment(data) {
		full, err := ParseWitness(data, c)
		if err != nil {
			return nil, 0, fmt.Errorf("witness %w", err)
		}
		n, err := solve(full, W)
		if err != nil {
			return nil, 0, err
		}
		return full, n, nil
	}
	if err := parseAssignmentInto[S, PS](data, c, threads, W); err != nil {
		return nil, 0, fmt.Errorf("wire assignment %w", err)
	}
	full, err := inputsWitness[S, PS](c, W[1:c.NbPublic+c.NbSecret])
	if err != nil {
		return nil, 0, err
	}
	n, err := sdk.PackBitsOf[S, PS](W, other, bits, max(1, threads))
	if err != nil {
		return nil, 0, err
	}
	return full, n, nil
}

// solverOpts are the solver's options for threads goroutines (0: every core).
func solverOpts(threads int) []solver.Option {
	if threads > 0 {
		return []solver.Option{solver.WithNbTasks(threads)}
	}
	return nil
}

// CheckInput checks one partition's input the way the daemon does at submit: a gnark
// full witness is parsed (ParseWitness), a wire assignment's header and size are
// checked (CheckAssignmentHeader). assignment says which the client declared; an
// input of the other kind is refused.
func CheckInput(data []byte, assignment bool, c *Circuit) error {
	if assignment {
		return CheckAssignmentHeader(data, c)
	}
	if IsWtns(data) {
		return fmt.Errorf("is a circom witness (.wtns), which is a wire assignment, not a gnark witness (submit it as an assignment: --assignment)")
	}
	if IsAssignment(data) {
		return fmt.Errorf("is a wire assignment, not a gnark witness (submit it as an assignment: --assignment)")
	}
	_, err := ParseWitness(data, c)
	return err
}

// InputSizeRange returns the sizes in bytes an input of circuit c may have,
// held to before its bytes arrive: a gnark full witness and a full wire
// assignment have exactly InputSize's bytes; a compact wire assignment has at
// least its header (version 2's, the shorter) and bitmaps, and at most every
// value besides (a range that holds the full assignment's size too); a circom
// .wtns has circom.WitnessSize's.
func InputSizeRange(c *Circuit, assignment bool) (lo, hi int64) {
	if !assignment {
		n := InputSize(c, false)
		return n, n
	}
	n := uint64(c.NbWires)
	return compactAssignmentSize(compactAssignmentHeaderV2, n, 0), max(compactAssignmentSize(compactAssignmentHeader, n, n), circom.WitnessSize(n))
}

// InputSize returns the size in bytes every input of circuit c has: a wire
// assignment's header and one scalar per wire, or a gnark full witness's header and
// one scalar per public (less the constant one) and secret value. The daemon holds a
// streamed input's declared size to it before accepting its bytes.
func InputSize(c *Circuit, assignment bool) int64 {
	if assignment {
		return assignmentHeader + int64(c.NbWires)*fr.Bytes
	}
	return witnessHeader + int64(c.NbPublic-1+c.NbSecret)*fr.Bytes
}
