package solve

import (
	"fmt"
	"math/big"
	"math/bits"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/constraint"
	csolver "github.com/consensys/gnark/constraint/solver"
)

// nBitsName is the name gnark registers std/math/bits' bit decomposition hint
// under. Solve runs it natively when the solver options map its ID to that
// function (a user's override of the ID runs as given).
const nBitsName = "github.com/consensys/gnark/std/math/bits.nBits"

// parallelChunk is how many instructions one thread takes at a time from a
// level, and a level with fewer than two chunks runs on one thread: below that
// the handoff between threads costs more than it saves.
const parallelChunk = 256

// UnsatisfiedError says that the witness does not satisfy constraint
// Constraint: a·b != c with the values given.
type UnsatisfiedError struct {
	Constraint int
	A, B, C    fr.Element
}

func (e *UnsatisfiedError) Error() string {
	return fmt.Sprintf("constraint #%d is not satisfied: %s ⋅ %s != %s", e.Constraint, e.A.String(), e.B.String(), e.C.String())
}

// HintError says that hint Name failed on the inputs of instruction Instruction.
type HintError struct {
	Name string
	Err  error
}

func (e *HintError) Error() string { return fmt.Sprintf("hint %s: %v", e.Name, e.Err) }
func (e *HintError) Unwrap() error { return e.Err }

// hintFn is a hint resolved for one Solve.
type hintFn struct {
	name   string
	native bool // gnark's nBits, run natively
	fn     csolver.Hint
}

// run is the state of one Solve.
type run struct {
	p      *Program
	values []fr.Element
	// tags says of each wire whether its value is 0, 1 or anything else, so
	// that a term reads a byte rather than the value to find its product
	// trivial.
	tags []uint8
	a, b []fr.Element
	// slots hold the values of the long linear expressions (recurrence.go).
	slots []fr.Element
	hints []hintFn
	q     *big.Int

	failed atomic.Bool
	errMu  sync.Mutex
	err    error
}

// Solve solves the program for witness (the public values but the constant one,
// then the secret ones, as in gnark's witness vector) into W (len NbWires), A
// and B (len NbConstraints), which it overwrites. opts are gnark's solver
// options: hints (WithHints, OverrideHint) and threads (WithNbTasks; every core
// by default). W, A and B are what gnark's R1CS Solve returns as its
// solution's W, A and B for the same witness and options. A and B may both be
// nil: W alone is solved (for a compact partition, whose backend evaluates A
// and B itself), and every constraint is still checked.
func (p *Program) Solve(witness fr.Vector, W, A, B []fr.Element, opts ...csolver.Option) error {
	cfg, err := csolver.NewConfig(opts...)
	if err != nil {
		return err
	}
	if want := p.nbInputs - 1; len(witness) != want {
		return fmt.Errorf("invalid witness size, got %d, expected %d", len(witness), want)
	}
	if len(W) != p.nbWires || !abLengthsOK(A, B, p.nbConstraints) {
		return fmt.Errorf("solve: destination lengths W %d, A %d, B %d; want %d, %d, %d",
			len(W), len(A), len(B), p.nbWires, p.nbConstraints, p.nbConstraints)
	}
	r := &run{p: p, values: W, a: A, b: B, q: fr.Modulus(), hints: make([]hintFn, len(p.hintIDs)),
		tags: make([]uint8, p.nbWires), slots: make([]fr.Element, p.nbSlots)}
	var missing []string
	for i, id := range p.hintIDs {
		f, ok := cfg.HintFunctions[id]
		if !ok {
			missing = append(missing, p.hintNames[i])
			continue
		}
		r.hints[i] = hintFn{name: p.hintNames[i], fn: f, native: csolver.GetHintName(f) == nBitsName}
	}
	if len(missing) > 0 {
		return fmt.Errorf("solver missing hint(s): %v", missing)
	}
	W[0].SetOne()
	copy(W[1:], witness)
	for i := 0; i < p.nbInputs; i++ {
		r.tags[i] = tagOf(&W[i])
	}

	threads := cfg.NbTasks
	if threads <= 0 {
		threads = runtime.NumCPU()
	}
	if threads == 1 {
		for _, lv := range p.levels {
			if !r.ops(lv.start, lv.end) {
				break
			}
		}
		return r.err
	}
	pool := newPool(threads - 1)
	defer pool.close()
	for _, lv := range p.levels {
		n := lv.end - lv.start
		if n < 2*parallelChunk {
			if !r.ops(lv.start, lv.end) {
				break
			}
			continue
		}
		var next atomic.Uint32
		next.Store(lv.start)
		work := func() {
			for {
				s := next.Add(parallelChunk) - parallelChunk
				if s >= lv.end {
					return
				}
				if !r.ops(s, min(s+parallelChunk, lv.end)) {
					return
				}
			}
		}
		pool.run(work)
		if r.failed.Load() {
			break
		}
	}
	return r.err
}

// fail records the first error of a run.
func (r *run) fail(err error) {
	r.errMu.Lock()
	if r.err == nil {
		r.err = err
	}
	r.errMu.Unlock()
	r.failed.Store(true)
}

// ops runs ops[start:end] and reports whether all succeeded. A panic in a hint
// is an error of the run, not of the process.
func (r *run) ops(start, end uint32) (ok bool) {
	defer func() {
		if v := recover(); v != nil {
			r.fail(fmt.Errorf("solver failed: %v", v))
			ok = false
		}
	}()
	for i := start; i < end; i++ {
		o := &r.p.ops[i]
		var err error
		if o.out == opHint {
			err = r.hint(o)
		} else {
			err = r.r1c(o)
		}
		if err != nil {
			r.fail(err)
			return false
		}
	}
	return true
}

// Wire tags.
const (
	tagOther = iota
	tagZero
	tagOne
)

func tagOf(v *fr.Element) uint8 {
	switch {
	case v.IsZero():
		return tagZero
	case v.IsOne():
		return tagOne
	}
	return tagOther
}

// set sets wire w to v.
func (r *run) set(w uint32, v *fr.Element) {
	r.values[w] = *v
	r.tags[w] = tagOf(v)
}

// acc adds the terms of terms (coefficient and wire ID pairs, gnark's
// calldata) to res.
func (r *run) acc(res *fr.Element, terms []uint32) {
	coeffs, small, values, tags := r.p.coeffs, r.p.smallCoeffs, r.values, r.tags
	// The terms whose wire is 1 and whose coefficient is a small integer (a
	// power of two of a bit recomposition, 1, -2 of a XOR) add up as
	// integers, made a field element once at the end. |sum| stays below 2^62
	// (each addend is at most 2^32 in size; the sum moves to res first).
	var sum int64
	for k := 0; k+1 < len(terms); k += 2 {
		cid, vid := terms[k], terms[k+1]
		if vid == constWire {
			res.Add(res, &coeffs[cid])
			continue
		}
		switch tags[vid] {
		case tagZero:
			continue
		case tagOne:
			if c := small[cid]; c != notSmall {
				sum += c
				if sum > 1<<61 || sum < -(1<<61) {
					addInt(res, sum)
					sum = 0
				}
				continue
			}
			res.Add(res, &coeffs[cid])
			continue
		}
		v := &values[vid]
		switch cid {
		case constraint.CoeffIdZero:
		case constraint.CoeffIdOne:
			res.Add(res, v)
		case constraint.CoeffIdTwo:
			res.Add(res, v)
			res.Add(res, v)
		case constraint.CoeffIdMinusOne:
			res.Sub(res, v)
		default:
			var t fr.Element
			t.Mul(&coeffs[cid], v)
			res.Add(res, &t)
		}
	}
	if sum != 0 {
		addInt(res, sum)
	}
}

// addInt adds the integer n to res.
func addInt(res *fr.Element, n int64) {
	if n >= -smallRange && n <= smallRange {
		res.Add(res, &smallElements[n+smallRange])
		return
	}
	var t fr.Element
	t.SetInt64(n)
	res.Add(res, &t)
}

// smallElements holds the integers -smallRange..smallRange as field elements:
// most constraints' sums are a few bits, and SetInt64 costs a product.
const smallRange = 256

var smallElements = func() (t [2*smallRange + 1]fr.Element) {
	for i := range t {
		t[i].SetInt64(int64(i - smallRange))
	}
	return t
}()

// long evaluates the long linear expression seg into res (zero on entry) as
// its combo says, and keeps its value in the combo's slot.
func (r *run) long(res *fr.Element, seg []uint32, c *combo) {
	if c.base {
		res.Mul(&c.alpha, &r.slots[c.p1])
		if c.two {
			var t fr.Element
			t.Mul(&c.beta, &r.slots[c.p2])
			res.Add(res, &t)
		}
		r.acc(res, r.p.extra[c.rStart:c.rEnd])
	} else {
		r.acc(res, seg)
	}
	r.slots[c.slot] = *res
}

// mul sets z = x·y, without the product when either is 0 or 1.
func mul(z, x, y *fr.Element) {
	switch {
	case x.IsZero() || y.IsZero():
		z.SetZero()
	case x.IsOne():
		*z = *y
	case y.IsOne():
		*z = *x
	default:
		z.Mul(x, y)
	}
}

// r1c solves and checks one constraint as gnark's solveR1C does: the same
// values, the same A and B, the same cases of failure.
func (r *run) r1c(o *op) error {
	cd := r.p.callData[o.cd:]
	lenL, lenR, lenO := cd[1], cd[2], cd[3]
	terms := cd[4 : 4+2*(lenL+lenR+lenO)]
	var a, b, c fr.Element
	// Each linear expression summed without its unknown term (if any).
	bounds := [4]uint32{0, 2 * lenL, 2 * (lenL + lenR), 2 * (lenL + lenR + lenO)}
	sums := [3]*fr.Element{&a, &b, &c}
	u := 2 * o.unk
	for k := 0; k < 3; k++ {
		seg := terms[bounds[k]:bounds[k+1]]
		if o.out == uint8(k+1) {
			local := u - bounds[k]
			r.acc(sums[k], seg[:local])
			r.acc(sums[k], seg[local+2:])
			continue
		}
		if bit := uint8(1) << k; o.long&bit != 0 {
			r.long(sums[k], seg, &r.p.combos[o.lin+uint32(bits.OnesCount8(o.long&(bit-1)))])
			continue
		}
		r.acc(sums[k], seg)
	}

	if o.out == outNone {
		var check fr.Element
		mul(&check, &a, &b)
		if !check.Equal(&c) {
			return &UnsatisfiedError{Constraint: int(o.id), A: a, B: b, C: c}
		}
		if r.a != nil {
			r.a[o.id], r.b[o.id] = a, b
		}
		return nil
	}

	var wire fr.Element
	switch o.out {
	case outL:
		if !solveFactor(&wire, &a, &b, &c) {
			return &UnsatisfiedError{Constraint: int(o.id), A: a, B: b, C: c}
		}
	case outR:
		if !solveFactor(&wire, &b, &a, &c) {
			return &UnsatisfiedError{Constraint: int(o.id), A: a, B: b, C: c}
		}
	case outO:
		mul(&wire, &a, &b)
		wire.Sub(&wire, &c)
	}
	// wire is the term, coefficient times value; the wire holds the value.
	switch cid := terms[u]; cid {
	case constraint.CoeffIdOne:
	case constraint.CoeffIdMinusOne:
		wire.Neg(&wire)
	default:
		wire.Div(&wire, &r.p.coeffs[cid])
	}
	r.set(terms[u+1], &wire)
	if r.a != nil {
		r.a[o.id], r.b[o.id] = a, b
	}
	return nil
}

// solveFactor solves (partial + wire)·other = c for wire, as gnark does, and
// adds wire to partial. When other is 0 gnark leaves wire 0 and only checks
// that c is 0 too; solveFactor reports that check.
func solveFactor(wire, partial, other, c *fr.Element) bool {
	if other.IsZero() {
		return c.IsZero()
	}
	if other.IsOne() {
		wire.Set(c)
	} else {
		wire.Div(c, other)
	}
	wire.Sub(wire, partial)
	partial.Add(partial, wire)
	return true
}

// hint runs one hint instruction: its inputs' linear expressions evaluated, the
// function called (or nBits run natively), its outputs set.
func (r *run) hint(o *op) error {
	cd := r.p.callData[o.cd:]
	h := &r.hints[o.id]
	nbInputs := int(cd[2])
	j := 3
	if h.native && nbInputs == 1 {
		n := int(cd[j])
		var v fr.Element
		r.acc(&v, cd[j+1:j+1+2*n])
		j += 1 + 2*n
		outStart, outEnd := cd[j], cd[j+1]
		bits := v.Bits() // the value, not its Montgomery form
		for i := uint32(0); i < outEnd-outStart; i++ {
			w := outStart + i
			if i < 256 && bits[i/64]>>(i%64)&1 == 1 {
				r.values[w].SetOne()
				r.tags[w] = tagOne
			} else {
				r.values[w].SetZero()
				r.tags[w] = tagZero
			}
		}
		return nil
	}

	inputs := make([]*big.Int, nbInputs)
	for i := range inputs {
		n := int(cd[j])
		var v fr.Element
		r.acc(&v, cd[j+1:j+1+2*n])
		j += 1 + 2*n
		inputs[i] = v.BigInt(new(big.Int))
	}
	outStart, outEnd := cd[j], cd[j+1]
	outputs := make([]*big.Int, outEnd-outStart)
	for i := range outputs {
		outputs[i] = new(big.Int)
	}
	err := h.fn(new(big.Int).Set(r.q), inputs, outputs)
	for i, out := range outputs {
		var v fr.Element
		v.SetBigInt(out)
		r.set(outStart+uint32(i), &v)
	}
	if err != nil {
		return &HintError{Name: h.name, Err: err}
	}
	return nil
}

// pool runs one function on n goroutines and the caller at once, and waits for
// all of them; its goroutines live for one Solve.
type pool struct {
	start []chan func()
	wg    sync.WaitGroup
}

func newPool(n int) *pool {
	p := &pool{start: make([]chan func(), n)}
	for i := range p.start {
		ch := make(chan func())
		p.start[i] = ch
		go func() {
			for f := range ch {
				f()
				p.wg.Done()
			}
		}()
	}
	return p
}

func (p *pool) run(f func()) {
	p.wg.Add(len(p.start))
	for _, ch := range p.start {
		ch <- f
	}
	f()
	p.wg.Wait()
}

func (p *pool) close() {
	for _, ch := range p.start {
		close(ch)
	}
}

// abLengthsOK says A and B are both nil (W alone is wanted) or both hold n
// elements.
func abLengthsOK(A, B []fr.Element, n int) bool {
	if A == nil && B == nil {
		return true
	}
	return len(A) == n && len(B) == n
}
