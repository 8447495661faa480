package solve

import (
	"fmt"
	"math"
	"math/big"
	mbits "math/bits"
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark/constraint"
	csolver "github.com/consensys/gnark/constraint/solver"

	"github.com/zkhost/zkhost/sdk"
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

// bigValue marks, in a run's ints, a wire whose value is not a small integer.
const bigValue = math.MinInt32

// run is the state of one Solve.
type run struct {
	p      *Program
	values []fr.Element
	// ints holds each wire's value as an integer when it is one in
	// (-2^31, 2^31), and bigValue otherwise. A term whose coefficient and
	// wire are both small integers (nearly every term of a bit-heavy
	// circuit) is then a product of integers, without a branch on the value
	// and without field arithmetic.
	ints []int32
	a, b []fr.Element
	// slots hold the values of the long linear expressions (recurrence.go).
	slots []fr.Element
	hints []hintFn
	q     *big.Int

	failed atomic.Bool
	errMu  sync.Mutex
	err    error
}

// scratch is a run's working memory beside W, kept between Solves.
type scratch struct {
	ints  []int32
	slots []fr.Element
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
	_, err := p.solve(witness, W, A, B, nil, nil, opts)
	return err
}

// SolveCompact is Solve for W alone that also fills W's Other and Bits
// bitmaps (sdk.CompactLayout; sdk.CompactWords(NbWires) words each) and
// returns how many values are neither 0 nor 1: what sdk.PackBits computes,
// read from the solver's own record of which values are small integers
// rather than from W again.
func (p *Program) SolveCompact(witness fr.Vector, W []fr.Element, other, bits []uint64, opts ...csolver.Option) (uint64, error) {
	words := int(sdk.CompactWords(uint64(len(W))))
	if len(other) != words || len(bits) != words {
		return 0, fmt.Errorf("solve: %d wires need %d words per bitmap, got %d and %d", len(W), words, len(other), len(bits))
	}
	return p.solve(witness, W, nil, nil, other, bits, opts)
}

// solve is Solve, and, when other and bits are not nil, SolveCompact: the
// bitmaps are packed from the run's ints before its scratch goes back.
func (p *Program) solve(witness fr.Vector, W, A, B []fr.Element, other, bits []uint64, opts []csolver.Option) (uint64, error) {
	cfg, err := csolver.NewConfig(opts...)
	if err != nil {
		return 0, err
	}
	if want := p.nbInputs - 1; len(witness) != want {
		return 0, fmt.Errorf("invalid witness size, got %d, expected %d", len(witness), want)
	}
	if len(W) != p.nbWires || !abLengthsOK(A, B, p.nbConstraints) {
		return 0, fmt.Errorf("solve: destination lengths W %d, A %d, B %d; want %d, %d, %d",
			len(W), len(A), len(B), p.nbWires, p.nbConstraints, p.nbConstraints)
	}
	sc, _ := p.scratch.Get().(*scratch)
	if sc == nil {
		// Every wire is written before it is read (Compile checks that each
		// is solved), so a reused scratch needs no clearing.
		sc = &scratch{ints: make([]int32, p.nbWires), slots: make([]fr.Element, p.nbSlots)}
	}
	defer p.scratch.Put(sc)
	r := &run{p: p, values: W, a: A, b: B, q: fr.Modulus(), hints: make([]hintFn, len(p.hintIDs)),
		ints: sc.ints, slots: sc.slots}
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
		return 0, fmt.Errorf("solver missing hint(s): %v", missing)
	}
	W[0].SetOne()
	copy(W[1:], witness)
	for i := 0; i < p.nbInputs; i++ {
		r.ints[i] = intOf(&W[i])
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
	} else {
		r.parallel(threads)
	}
	if r.err != nil || other == nil {
		return 0, r.err
	}
	return sdk.PackInts(r.ints, other, bits)
}

// parallel runs the program's levels, each wide one spread over threads.
func (r *run) parallel(threads int) {
	pool := newPool(threads - 1)
	defer pool.close()
	for _, lv := range r.p.levels {
		n := lv.end - lv.start
		if n < 2*parallelChunk {
			if !r.ops(lv.start, lv.end) {
				return
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
			return
		}
	}
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

// intOf returns v as an entry of a run's ints.
func intOf(v *fr.Element) int32 {
	if n := smallInt(v); n != notSmall && n > bigValue && n <= math.MaxInt32 {
		return int32(n)
	}
	return bigValue
}

// setField sets wire w to v, a value computed in the field: its ints entry
// says 0 or 1 when it is one (cheap to see), else bigValue.
func (r *run) setField(w uint32, v *fr.Element) {
	r.values[w] = *v
	switch {
	case v.IsZero():
		r.ints[w] = 0
	case v.IsOne():
		r.ints[w] = 1
	default:
		r.ints[w] = bigValue
	}
}

// setInt sets wire w to the integer v.
func (r *run) setInt(w uint32, v int64) {
	if v > bigValue && v <= math.MaxInt32 {
		r.ints[w] = int32(v)
	} else {
		r.ints[w] = bigValue
	}
	fieldOfInt(&r.values[w], v)
}

// fieldOfInt sets z to the integer v.
func fieldOfInt(z *fr.Element, v int64) {
	if uint64(v+smallRange) <= 2*smallRange {
		*z = smallElements[v+smallRange]
		return
	}
	z.SetInt64(v)
}

// smallElements holds the integers -smallRange..smallRange as field elements:
// most values and sums are a few bits, and SetInt64 costs a product.
const smallRange = 256

var smallElements = func() (t [2*smallRange + 1]fr.Element) {
	for i := range t {
		t[i].SetInt64(int64(i - smallRange))
	}
	return t
}()

// twoTo64 is 2^64 in the field.
var twoTo64 = func() (e fr.Element) {
	e.SetUint64(1 << 32)
	e.Square(&e)
	return e
}()

// lin is the value of a linear expression as the solver sums it: the terms
// whose coefficient and wire are both small integers add up exactly as a
// 128-bit integer (lo, and hi in two's complement), the others in the field
// (f, when field is set). A product of a coefficient of at most 2^32 and a
// wire below 2^31 in size is below 2^63, and a constraint has fewer than
// 2^32 terms, so the integer never overflows.
type lin struct {
	f     fr.Element
	field bool
	lo    uint64
	hi    int64
}

// int64 returns the expression's value when it has no field part and fits
// in an int64.
func (l *lin) int64() (int64, bool) {
	return int64(l.lo), !l.field && l.hi == int64(l.lo)>>63
}

// addInt adds the integer v to the expression's integer part.
func (l *lin) addInt(v int64) {
	var carry uint64
	l.lo, carry = mbits.Add64(l.lo, uint64(v), 0)
	l.hi += v>>63 + int64(carry)
}

// value sets z to the expression's value in the field.
func (l *lin) value(z *fr.Element) {
	if l.field {
		*z = l.f
	} else {
		z.SetZero()
	}
	if l.lo == 0 && l.hi == 0 {
		return
	}
	var t fr.Element
	if l.hi == int64(l.lo)>>63 {
		fieldOfInt(&t, int64(l.lo))
	} else {
		// |n| of the 128-bit n = hi·2^64 + lo, then its sign.
		lo, hi := l.lo, uint64(l.hi)
		neg := l.hi < 0
		if neg {
			var borrow uint64
			lo, borrow = mbits.Sub64(0, lo, 0)
			hi, _ = mbits.Sub64(0, hi, borrow)
		}
		var h fr.Element
		h.SetUint64(hi)
		h.Mul(&h, &twoTo64)
		t.SetUint64(lo)
		t.Add(&t, &h)
		if neg {
			t.Neg(&t)
		}
	}
	z.Add(z, &t)
}

// acc adds the terms of terms (coefficient and wire ID pairs, gnark's
// calldata) to l.
func (r *run) acc(l *lin, terms []uint32) {
	small, ints := r.p.smallCoeffs, r.ints
	for k := 0; k+1 < len(terms); k += 2 {
		cid, vid := terms[k], terms[k+1]
		v := int64(1) // a constant term: its coefficient alone
		if vid != constWire {
			v = int64(ints[vid])
		}
		c := small[cid]
		if c == notSmall || v == bigValue {
			r.accField(l, cid, vid)
			continue
		}
		l.addInt(c * v)
	}
}

// accField adds the term of coefficient cid and wire vid to l's field part.
func (r *run) accField(l *lin, cid, vid uint32) {
	coeff := &r.p.coeffs[cid]
	if !l.field {
		l.f.SetZero()
		l.field = true
	}
	if vid == constWire {
		l.f.Add(&l.f, coeff)
		return
	}
	switch r.ints[vid] {
	case 0:
		return
	case 1:
		l.f.Add(&l.f, coeff)
		return
	}
	v := &r.values[vid]
	switch cid {
	case constraint.CoeffIdZero:
	case constraint.CoeffIdOne:
		l.f.Add(&l.f, v)
	case constraint.CoeffIdTwo:
		l.f.Add(&l.f, v)
		l.f.Add(&l.f, v)
	case constraint.CoeffIdMinusOne:
		l.f.Sub(&l.f, v)
	default:
		var t fr.Element
		t.Mul(coeff, v)
		l.f.Add(&l.f, &t)
	}
}

// long evaluates the long linear expression seg into l (zero on entry) as its
// combo says, and keeps its value in the combo's slot when a later combo
// reads it.
func (r *run) long(l *lin, seg []uint32, c *combo) {
	if c.base {
		l.field = true
		l.f.Mul(&c.alpha, &r.slots[c.p1])
		if c.two {
			var t fr.Element
			t.Mul(&c.beta, &r.slots[c.p2])
			l.f.Add(&l.f, &t)
		}
		r.acc(l, r.p.extra[c.rStart:c.rEnd])
	} else {
		r.acc(l, seg)
	}
	if c.read {
		l.value(&r.slots[c.slot])
	}
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

// square sets z = x², without the product when x is 0 or 1.
func square(z, x *fr.Element) {
	if x.IsZero() || x.IsOne() {
		*z = *x
		return
	}
	z.Square(x)
}

// r1c solves and checks one constraint as gnark's solveR1C does: the same
// values, the same A and B, the same cases of failure.
func (r *run) r1c(o *op) error {
	cd := r.p.callData[o.cd:]
	lenL, lenR, lenO := cd[1], cd[2], cd[3]
	terms := cd[4 : 4+2*(lenL+lenR+lenO)]
	if o.product && o.long == 0 {
		return r.product(o, terms, lenL, lenR)
	}
	// Each linear expression summed without its unknown term (if any).
	var ls [3]lin
	bounds := [4]uint32{0, 2 * lenL, 2 * (lenL + lenR), 2 * (lenL + lenR + lenO)}
	u := 2 * o.unk
	for k := 0; k < 3; k++ {
		if k == 1 && o.square {
			ls[1] = ls[0]
			continue
		}
		seg := terms[bounds[k]:bounds[k+1]]
		if o.out == uint8(k+1) {
			local := u - bounds[k]
			r.acc(&ls[k], seg[:local])
			r.acc(&ls[k], seg[local+2:])
			continue
		}
		if bit := uint8(1) << k; o.long&bit != 0 {
			r.long(&ls[k], seg, &r.p.combos[o.lin+uint32(mbits.OnesCount8(o.long&(bit-1)))])
			continue
		}
		r.acc(&ls[k], seg)
	}
	if a, okA := ls[0].int64(); okA {
		if b, okB := ls[1].int64(); okB {
			if c, okC := ls[2].int64(); okC {
				if done, err := r.r1cInts(o, terms, a, b, c); done {
					return err
				}
			}
		}
	}
	var a, b, c fr.Element
	ls[0].value(&a)
	if o.square {
		b = a
	} else {
		ls[1].value(&b)
	}
	ls[2].value(&c)
	return r.r1cField(o, terms, &a, &b, &c)
}

// product solves a constraint whose O is its solved wire alone, with
// coefficient 1: the wire is L·R, as r1c would find it with less to do.
func (r *run) product(o *op, terms []uint32, lenL, lenR uint32) error {
	var l, rr lin
	r.acc(&l, terms[:2*lenL])
	if o.square {
		rr = l
	} else {
		r.acc(&rr, terms[2*lenL:2*(lenL+lenR)])
	}
	w := terms[2*(lenL+lenR)+1]
	if a, ok := l.int64(); ok && factor(a) {
		if b, ok := rr.int64(); ok && factor(b) {
			r.setInt(w, a*b)
			r.setAB(o, a, b)
			return nil
		}
	}
	var a, b, wire fr.Element
	l.value(&a)
	if o.square {
		b = a
		square(&wire, &a)
	} else {
		rr.value(&b)
		mul(&wire, &a, &b)
	}
	r.setField(w, &wire)
	if r.a != nil {
		r.a[o.id], r.b[o.id] = a, b
	}
	return nil
}

// factor says that x is small enough to multiply in integers: a product of
// two such is below 2^62 in size, and its difference with an integer below
// 2^62 is below 2^63.
func factor(x int64) bool { return x > -1<<31 && x < 1<<31 }

// r1cInts is r1c for a constraint whose expressions (without the solved
// term) are the integers a, b and c: done is false when it cannot finish in
// integers (values too large, a division that is not exact), and r1cField
// then solves it in the field. Integers this small equal in the field only
// when they are equal, so the checks are gnark's.
func (r *run) r1cInts(o *op, terms []uint32, a, b, c int64) (done bool, err error) {
	if !factor(a) || !factor(b) || c <= -1<<62 || c >= 1<<62 {
		return false, nil
	}
	u := 2 * o.unk
	var term int64 // the solved term: its coefficient times its wire's value
	switch o.out {
	case outNone:
		if a*b != c {
			return true, unsatisfiedInts(o, a, b, c)
		}
		r.setAB(o, a, b)
		return true, nil
	case outO:
		term = a*b - c
	case outL, outR:
		partial, other := a, b
		if o.out == outR {
			partial, other = b, a
		}
		if other == 0 {
			// gnark leaves the wire 0 and checks that c is 0 too.
			if c != 0 {
				return true, unsatisfiedInts(o, a, b, c)
			}
		} else {
			if c%other != 0 {
				return false, nil
			}
			term = c/other - partial
		}
	}
	var v int64
	switch k := r.p.smallCoeffs[terms[u]]; {
	case k == 1:
		v = term
	case k == -1:
		v = -term
	case k != notSmall && k != 0 && term%k == 0:
		v = term / k
	default:
		return false, nil
	}
	r.setInt(terms[u+1], v)
	switch o.out {
	case outL:
		a += term
	case outR:
		b += term
	}
	r.setAB(o, a, b)
	return true, nil
}

// setAB records a constraint's A and B when the caller asked for them.
func (r *run) setAB(o *op, a, b int64) {
	if r.a != nil {
		fieldOfInt(&r.a[o.id], a)
		fieldOfInt(&r.b[o.id], b)
	}
}

// unsatisfiedInts is the UnsatisfiedError of constraint o whose a·b is not
// c, the three integers made field elements as gnark reports them.
func unsatisfiedInts(o *op, a, b, c int64) error {
	e := &UnsatisfiedError{Constraint: int(o.id)}
	fieldOfInt(&e.A, a)
	fieldOfInt(&e.B, b)
	fieldOfInt(&e.C, c)
	return e
}

// r1cField is r1c in the field, for a constraint whose expressions (without
// the solved term) are a, b and c.
func (r *run) r1cField(o *op, terms []uint32, a, b, c *fr.Element) error {
	if o.out == outNone {
		var check fr.Element
		mul(&check, a, b)
		if !check.Equal(c) {
			return &UnsatisfiedError{Constraint: int(o.id), A: *a, B: *b, C: *c}
		}
		if r.a != nil {
			r.a[o.id], r.b[o.id] = *a, *b
		}
		return nil
	}

	var wire fr.Element
	switch o.out {
	case outL:
		if !solveFactor(&wire, a, b, c) {
			return &UnsatisfiedError{Constraint: int(o.id), A: *a, B: *b, C: *c}
		}
	case outR:
		if !solveFactor(&wire, b, a, c) {
			return &UnsatisfiedError{Constraint: int(o.id), A: *a, B: *b, C: *c}
		}
	case outO:
		if o.square {
			square(&wire, a)
		} else {
			mul(&wire, a, b)
		}
		if !c.IsZero() {
			wire.Sub(&wire, c)
		}
	}
	// wire is the term, coefficient times value; the wire holds the value.
	u := 2 * o.unk
	switch cid := terms[u]; cid {
	case constraint.CoeffIdOne:
	case constraint.CoeffIdMinusOne:
		wire.Neg(&wire)
	default:
		wire.Div(&wire, &r.p.coeffs[cid])
	}
	r.setField(terms[u+1], &wire)
	if r.a != nil {
		r.a[o.id], r.b[o.id] = *a, *b
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

// zeroOne holds 0 and 1 as field elements, indexed by the bit.
var zeroOne = [2]fr.Element{smallElements[smallRange], smallElements[smallRange+1]}

// hint runs one hint instruction: its inputs' linear expressions evaluated, the
// function called (or nBits run natively), its outputs set.
func (r *run) hint(o *op) error {
	cd := r.p.callData[o.cd:]
	h := &r.hints[o.id]
	nbInputs := int(cd[2])
	j := 3
	if h.native && nbInputs == 1 {
		n := int(cd[j])
		var l lin
		r.acc(&l, cd[j+1:j+1+2*n])
		j += 1 + 2*n
		outStart, outEnd := cd[j], cd[j+1]
		var bits [4]uint64 // the value, not its Montgomery form
		if !l.field && l.hi == 0 {
			bits[0] = l.lo
		} else {
			var v fr.Element
			l.value(&v)
			bits = v.Bits()
		}
		for i := uint32(0); i < outEnd-outStart; i++ {
			var bit uint64
			if i < 256 {
				bit = bits[i/64] >> (i % 64) & 1
			}
			w := outStart + i
			r.values[w] = zeroOne[bit]
			r.ints[w] = int32(bit)
		}
		return nil
	}

	inputs := make([]*big.Int, nbInputs)
	for i := range inputs {
		n := int(cd[j])
		var l lin
		r.acc(&l, cd[j+1:j+1+2*n])
		j += 1 + 2*n
		var v fr.Element
		l.value(&v)
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
		w := outStart + uint32(i)
		r.values[w] = v
		r.ints[w] = intOf(&v)
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
