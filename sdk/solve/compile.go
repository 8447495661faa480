package solve

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bls12-381"
	csolver "github.com/consensys/gnark/constraint/solver"
)

// ErrUnsupported says that a constraint system uses something Compile does not
// handle exactly as gnark's solver does; solve it with gnark's Solve.
var ErrUnsupported = errors.New("solve: constraint system not supported by the fast solver")

// constWire is the wire ID gnark gives a constant term (constraint.Term.MarkConstant).
const constWire = math.MaxUint32

// Where the wire a constraint solves sits: in none of its linear expressions
// (the constraint is only checked), in L, in R or in O. The values are gnark's.
const (
	outNone = iota
	outL
	outR
	outO
)

// opHint marks an op that runs a hint rather than a constraint.
const opHint = 0xff

// op is one instruction of the program, in the order the solver runs them.
type op struct {
	// cd is where the instruction's calldata starts in the system's CallData.
	cd uint64
	// id is the constraint's index (A[id], B[id]) for a constraint, the index
	// into Program.hintIDs for a hint.
	id uint32
	// unk is the position of the solved term among the constraint's terms
	// (L's, then R's, then O's), when out is not outNone.
	unk uint32
	// out is outNone, outL, outR or outO for a constraint, opHint for a hint.
	out uint8
	// long has bit k set when linear expression k (L, R, O) is a long one
	// with a combo (recurrence.go); the op's combos start at Program.combos[lin].
	long uint8
	lin  uint32
	// square says that L and R are the same expression and neither holds
	// the solved term (x·x of a hash's S-box or a power chain): one sum, and
	// a square rather than a product.
	square bool
	// product says that O is the solved wire alone, with coefficient 1: the
	// wire is L·R (most constraints of a hash or a bit circuit).
	product bool
}

// level is a run of ops that depend only on earlier levels.
type level struct{ start, end uint32 }

// Program is a constraint system compiled for Solve. It refers to the system's
// calldata and coefficients, so the system must not change while the program is
// used. A Program is safe for concurrent Solves.
type Program struct {
	callData []uint32
	coeffs   []fr.Element
	// smallCoeffs holds each coefficient as an integer when it is one of at
	// most 2^32 in size (c or c - q), notSmall otherwise.
	smallCoeffs []int64

	ops    []op
	levels []level

	// hintIDs lists the distinct hints the program calls; a hint op's id
	// indexes it.
	hintIDs []csolver.HintID
	// hintNames are the names the system records for them (MHintsDependencies).
	hintNames []string

	// combos say how the long linear expressions are evaluated, extra holds
	// their residual terms, nbSlots is how many values they keep
	// (recurrence.go).
	combos  []combo
	extra   []uint32
	nbSlots uint32

	parallelShare float64

	// scratch keeps runs' working memory (*scratch) between Solves.
	scratch sync.Pool

	nbWires       int
	nbConstraints int
	nbInputs      int // wires set from the witness: the constant one, public and secret
	nbPublic      int // public wires, the constant one included
}

// NbWires is the length of the W a Solve returns.
func (p *Program) NbWires() int { return p.nbWires }

// NbConstraints is the length of the A and B a Solve returns.
func (p *Program) NbConstraints() int { return p.nbConstraints }

// NbLevels is the number of levels: runs of instructions that depend only on
// earlier ones. A circuit with as many levels as instructions is serial: one
// thread solves it as fast as many.
func (p *Program) NbLevels() int { return len(p.levels) }

// NbInstructions is the number of instructions, constraints and hints.
func (p *Program) NbInstructions() int { return len(p.ops) }

// Compile compiles r1cs for Solve, or returns an error wrapping ErrUnsupported
// saying why it cannot.
func Compile(r1cs *cs.R1CS) (*Program, error) {
	if r1cs.Type != constraint.SystemR1CS {
		return nil, fmt.Errorf("%w: not an R1CS", ErrUnsupported)
	}
	if len(r1cs.CommitmentInfo.CommitmentIndexes()) > 0 {
		return nil, fmt.Errorf("%w: commitments", ErrUnsupported)
	}
	if r1cs.GkrInfo.Is() {
		return nil, fmt.Errorf("%w: GKR", ErrUnsupported)
	}
	p := &Program{
		callData:      r1cs.CallData,
		coeffs:        r1cs.Coefficients,
		nbWires:       len(r1cs.Public) + len(r1cs.Secret) + r1cs.NbInternalVariables,
		nbConstraints: r1cs.GetNbConstraints(),
		nbInputs:      len(r1cs.Public) + len(r1cs.Secret),
		nbPublic:      len(r1cs.Public),
		ops:           make([]op, 0, len(r1cs.Instructions)),
	}
	p.smallCoeffs = make([]int64, len(p.coeffs))
	for i := range p.coeffs {
		p.smallCoeffs[i] = smallInt(&p.coeffs[i])
	}
	if p.nbPublic < 1 {
		return nil, fmt.Errorf("%w: no constant-one wire", ErrUnsupported)
	}

	// solved mirrors gnark's solver's flags, which depend only on the system:
	// the witness's wires, then each instruction's outputs in level order.
	solved := make([]bool, p.nbWires)
	for i := 0; i < p.nbInputs; i++ {
		solved[i] = true
	}
	covered := make([]bool, p.nbConstraints)
	hintIndex := map[csolver.HintID]uint32{}
	var r1c constraint.R1C
	var hint constraint.HintMapping

	for _, lv := range r1cs.Levels {
		start := uint32(len(p.ops))
		for _, i := range lv {
			pi := r1cs.Instructions[i]
			blueprint := r1cs.Blueprints[pi.BlueprintID]
			inst := pi.Unpack(&r1cs.System)
			switch b := blueprint.(type) {
			case constraint.BlueprintR1C:
				if _, generic := b.(*constraint.BlueprintGenericR1C); !generic {
					return nil, fmt.Errorf("%w: R1C blueprint %T", ErrUnsupported, b)
				}
				b.DecompressR1C(&r1c, inst)
				o, err := compileR1C(&r1c, pi, solved, covered)
				if err != nil {
					return nil, err
				}
				p.ops = append(p.ops, o)
			case constraint.BlueprintHint:
				if _, generic := b.(*constraint.BlueprintGenericHint); !generic {
					return nil, fmt.Errorf("%w: hint blueprint %T", ErrUnsupported, b)
				}
				b.DecompressHint(&hint, inst)
				if err := checkHint(&hint, solved); err != nil {
					return nil, err
				}
				idx, ok := hintIndex[hint.HintID]
				if !ok {
					idx = uint32(len(p.hintIDs))
					hintIndex[hint.HintID] = idx
					p.hintIDs = append(p.hintIDs, hint.HintID)
					p.hintNames = append(p.hintNames, r1cs.MHintsDependencies[hint.HintID])
				}
				p.ops = append(p.ops, op{cd: pi.StartCallData, id: idx, out: opHint})
			default:
				return nil, fmt.Errorf("%w: blueprint %T", ErrUnsupported, blueprint)
			}
		}
		if end := uint32(len(p.ops)); end > start {
			// A level's instructions are independent: run them in the
			// order of their calldata, so that reading it streams rather
			// than jumps (gnark orders a level by when each instruction
			// became solvable).
			lvOps := p.ops[start:end]
			slices.SortFunc(lvOps, func(a, b op) int { return cmp.Compare(a.cd, b.cd) })
			p.levels = append(p.levels, level{start: start, end: end})
		}
	}
	for w, ok := range solved {
		if !ok {
			return nil, fmt.Errorf("%w: wire %d is never solved", ErrUnsupported, w)
		}
	}
	for c, ok := range covered {
		if !ok {
			return nil, fmt.Errorf("%w: constraint %d is in no instruction", ErrUnsupported, c)
		}
	}
	// The residuals' coefficients go into a table of the program's own.
	p.coeffs = slices.Clip(slices.Clone(p.coeffs))
	p.compileLong()
	p.parallelShare = p.parallelShareOf()
	return p, nil
}

// compileR1C finds the one term of r whose wire is not solved yet, if any, as
// gnark's solveR1C does at run time, and marks its wire solved.
func compileR1C(r *constraint.R1C, pi constraint.PackedInstruction, solved, covered []bool) (op, error) {
	o := op{cd: pi.StartCallData, id: pi.ConstraintOffset, out: outNone}
	if int(o.id) >= len(covered) || covered[o.id] {
		return op{}, fmt.Errorf("%w: constraint %d appears twice or out of range", ErrUnsupported, o.id)
	}
	covered[o.id] = true
	pos := uint32(0)
	unknownWire := -1
	for k, le := range []constraint.LinearExpression{r.L, r.R, r.O} {
		for _, t := range le {
			if t.IsConstant() {
				pos++
				continue
			}
			w := t.WireID()
			if w >= len(solved) {
				return op{}, fmt.Errorf("%w: constraint %d names wire %d", ErrUnsupported, o.id, w)
			}
			if !solved[w] {
				if o.out != outNone {
					// gnark panics here ("found more than one wire to instantiate").
					return op{}, fmt.Errorf("%w: constraint %d has more than one unsolved wire", ErrUnsupported, o.id)
				}
				if t.CoeffID() == constraint.CoeffIdZero {
					// gnark panics here ("division by 0").
					return op{}, fmt.Errorf("%w: constraint %d solves a wire with coefficient 0", ErrUnsupported, o.id)
				}
				o.out = uint8(k + 1)
				o.unk = pos
				unknownWire = w
			}
			pos++
		}
	}
	if unknownWire >= 0 {
		solved[unknownWire] = true
	}
	o.square = o.out != outL && o.out != outR && slices.Equal(r.L, r.R)
	o.product = o.out == outO && len(r.O) == 1 && r.O[0].CoeffID() == constraint.CoeffIdOne
	return o, nil
}

// checkHint checks that h reads only solved wires and writes only unsolved
// ones, and marks its outputs solved.
func checkHint(h *constraint.HintMapping, solved []bool) error {
	for _, le := range h.Inputs {
		for _, t := range le {
			if t.IsConstant() {
				continue
			}
			if w := t.WireID(); w >= len(solved) || !solved[w] {
				return fmt.Errorf("%w: hint reads wire %d before it is solved", ErrUnsupported, w)
			}
		}
	}
	if h.OutputRange.End < h.OutputRange.Start || int(h.OutputRange.End) > len(solved) {
		return fmt.Errorf("%w: hint outputs %d..%d out of range", ErrUnsupported, h.OutputRange.Start, h.OutputRange.End)
	}
	for w := h.OutputRange.Start; w < h.OutputRange.End; w++ {
		if solved[w] {
			return fmt.Errorf("%w: hint solves wire %d twice", ErrUnsupported, w)
		}
		solved[w] = true
	}
	return nil
}

// notSmall marks a coefficient that is not a small integer.
const notSmall = math.MinInt64

// smallInt returns c as an integer of at most 2^32 in size (c itself or c - q),
// or notSmall.
func smallInt(c *fr.Element) int64 {
	v := c.Bits() // the value, not its Montgomery form
	if v[1] == 0 && v[2] == 0 && v[3] == 0 && v[0] <= 1<<32 {
		return int64(v[0])
	}
	var neg fr.Element
	neg.Neg(c)
	v = neg.Bits()
	if v[1] == 0 && v[2] == 0 && v[3] == 0 && v[0] <= 1<<32 {
		return -int64(v[0])
	}
	return notSmall
}

// ParallelShare is the share of the program's instructions (0 to 1) in levels
// wide enough for Solve to spread over threads. A circuit whose share is low
// (a hash chain, SHA-256) solves as fast on one thread as on many, and a host
// serves it best with many partitions at once, a thread each.
func (p *Program) ParallelShare() float64 { return p.parallelShare }

// parallelShareOf computes ParallelShare once, at Compile: the daemon asks
// for every partition.
func (p *Program) parallelShareOf() float64 {
	if len(p.ops) == 0 {
		return 0
	}
	wide := 0
	for _, lv := range p.levels {
		if n := int(lv.end - lv.start); n >= 2*parallelChunk {
			wide += n
		}
	}
	return float64(wide) / float64(len(p.ops))
}
