package solve

import (
	"cmp"
	"context"
	"slices"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/zkhost/zkhost/sdk/internal/par"
)

// Long linear expressions from one another.
//
// A hash's linear layers are folded by gnark's frontend into the linear
// expressions of the constraints that follow: in Poseidon2's partial rounds
// one state element is never constrained, so the expression of each round's
// S-box input holds every earlier round's output with a full-field
// coefficient, one term more each round. Evaluated term by term that is a
// product per term and most of the solve. But the expressions obey the
// recurrence of the round matrix: each is, on the wires they share, a
// combination α·P1 + β·P2 of the two before it, plus a term or two. compileLong
// finds such combinations and the solver evaluates those expressions from the
// values of the earlier two (kept in slots), with two products and the few
// remaining terms.

// longMin is the least number of terms an expression needs to be worth a
// slot and a search.
const longMin = 16

// combo is how one long expression is evaluated: from slots p1 and p2 (when
// base is set) with factors alpha and beta, plus the terms extra[rStart:rEnd]
// (coefficient and wire pairs, as gnark's calldata); without base, the
// expression's own terms. Its value goes to slot when read is set: when a
// later combo is evaluated from it.
type combo struct {
	slot, p1, p2    uint32
	base, two, read bool
	alpha, beta     fr.Element
	rStart, rEnd    uint32
}

// longExpr is a long expression seen by compileLong.
type longExpr struct {
	slot  uint32
	level int
	terms []wireCoeff // sorted by wire
}

type wireCoeff struct {
	wire  uint32
	coeff fr.Element
}

// compileLong marks the long expressions of the program's constraints and
// finds their combinations. It appends the residual terms' coefficients to the
// program's coefficient table.
//
// The search costs a field inversion and a product per term for every long
// expression (seconds for a large Poseidon2 circuit, all of it before the
// first partition can be solved), and each expression's search depends only
// on which expressions came before it, not on their results. So the
// expressions go in batches: their terms sorted in parallel, their bases taken
// from the history in order, their combinations searched in parallel, and the
// results written in order, as one pass in order would write them.
func (p *Program) compileLong() {
	history := map[uint64][]*longExpr{}
	var batch []longJob
	flush := func() {
		p.runLongBatch(batch, history)
		batch = batch[:0]
	}
	for li, lv := range p.levels {
		for i := lv.start; i < lv.end; i++ {
			o := &p.ops[i]
			if o.out == opHint {
				continue
			}
			cd := p.callData[o.cd:]
			lens := [3]uint32{cd[1], cd[2], cd[3]}
			off := uint32(4)
			for k := 0; k < 3; k++ {
				seg := cd[off : off+2*lens[k]]
				off += 2 * lens[k]
				if lens[k] < longMin || o.out == uint8(k+1) {
					continue
				}
				batch = append(batch, longJob{op: i, k: k, level: li, seg: seg})
			}
			if len(batch) >= longBatch {
				flush()
			}
		}
	}
	flush()
	read := make([]bool, p.nbSlots)
	for _, c := range p.combos {
		if c.base {
			read[c.p1] = true
		}
		if c.two {
			read[c.p2] = true
		}
	}
	for i := range p.combos {
		p.combos[i].read = read[p.combos[i].slot]
	}
}

// longBatch is how many long expressions compileLong takes at a time: enough
// to keep every core busy, few enough that their sorted terms stay small. A
// variable so that a test can compile one expression at a time, as a pass in
// order would.
var longBatch = 1 << 14

// longJob is one long expression in compileLong's batch.
type longJob struct {
	op    uint32 // its instruction, an index into Program.ops
	k     int    // L, R or O
	level int
	seg   []uint32

	terms []wireCoeff // sorted by wire; nil when a wire repeats
	slot  uint32
	bases []*longExpr
	fit   comboFit
}

// runLongBatch runs the batch's expressions (in program order) through the
// three steps compileLong describes.
func (p *Program) runLongBatch(batch []longJob, history map[uint64][]*longExpr) {
	eachJob(batch, func(b *longJob) { b.terms, _ = p.sortedTerms(b.seg) })
	for j := range batch {
		b := &batch[j]
		if b.terms == nil {
			continue
		}
		n := b.terms
		b.slot = p.nbSlots
		p.nbSlots++
		key := uint64(n[0].wire)<<32 | uint64(n[1].wire)
		for _, h := range history[key] {
			if h.level < b.level && len(b.bases) < 2 {
				b.bases = append(b.bases, h)
			}
		}
		e := &longExpr{slot: b.slot, level: b.level, terms: n}
		// A copy of an expression in the history (x in x·x, and again in
		// x⁴·x) adds nothing to it: two equal bases leave no system to
		// solve.
		if slices.ContainsFunc(history[key], func(h *longExpr) bool { return slices.Equal(h.terms, n) }) {
			continue
		}
		hs := append([]*longExpr{e}, history[key]...)
		if len(hs) > 4 {
			hs = hs[:4]
		}
		history[key] = hs
	}
	eachJob(batch, func(b *longJob) {
		if b.terms != nil {
			b.fit = findCombo(b.terms, b.bases)
		}
	})
	// In order: the combos and the residuals' coefficients as a pass in
	// order gives them.
	for j := range batch {
		b := &batch[j]
		if b.terms == nil {
			continue
		}
		o := &p.ops[b.op]
		if o.long == 0 {
			o.lin = uint32(len(p.combos))
		}
		o.long |= 1 << b.k
		c := combo{slot: b.slot}
		if f := &b.fit; f.base {
			c.base, c.p1, c.alpha = true, f.p1, f.alpha
			if f.two {
				c.two, c.p2, c.beta = true, f.p2, f.beta
			}
			c.rStart = uint32(len(p.extra))
			for _, t := range f.residual {
				p.extra = append(p.extra, uint32(len(p.coeffs)), t.wire)
				p.coeffs = append(p.coeffs, t.coeff)
				p.smallCoeffs = append(p.smallCoeffs, smallInt(&t.coeff))
			}
			c.rEnd = uint32(len(p.extra))
		}
		p.combos = append(p.combos, c)
	}
}

// sortedTerms returns seg's terms sorted by wire, or false when a wire repeats.
func (p *Program) sortedTerms(seg []uint32) ([]wireCoeff, bool) {
	n := make([]wireCoeff, 0, len(seg)/2)
	for k := 0; k+1 < len(seg); k += 2 {
		n = append(n, wireCoeff{wire: seg[k+1], coeff: p.coeffs[seg[k]]})
	}
	slices.SortFunc(n, func(a, b wireCoeff) int { return cmp.Compare(a.wire, b.wire) })
	for i := 1; i < len(n); i++ {
		if n[i].wire == n[i-1].wire {
			return nil, false
		}
	}
	return n, true
}

// eachJob calls f on every job of batch, on every core.
func eachJob(batch []longJob, f func(*longJob)) {
	par.ForChunks(context.Background(), len(batch), 16, func(start, end int) {
		for j := start; j < end; j++ {
			f(&batch[j])
		}
	})
}

// comboFit is what findCombo found for an expression: to be evaluated from
// the slots of bases p1 (and p2, when two is set) with factors alpha (and
// beta) plus the residual terms, when base is set; from its own terms when
// not.
type comboFit struct {
	base, two   bool
	p1, p2      uint32
	alpha, beta fr.Element
	residual    []wireCoeff
}

// findCombo finds how to evaluate n from bases (most recent first) when a
// combination leaves few enough terms; otherwise n is evaluated from its own
// terms. It reads only its arguments, so expressions are searched in
// parallel.
func findCombo(n []wireCoeff, bases []*longExpr) (fit comboFit) {
	limit := len(n) / 4
	try := func(alpha, beta fr.Element, b1, b2 *longExpr) bool {
		var p2 []wireCoeff
		if b2 != nil {
			p2 = b2.terms
		}
		r := residual(n, b1.terms, p2, &alpha, &beta, limit)
		if r == nil {
			return false
		}
		fit = comboFit{base: true, p1: b1.slot, alpha: alpha, residual: r}
		if b2 != nil {
			fit.two, fit.p2, fit.beta = true, b2.slot, beta
		}
		return true
	}
	if len(bases) >= 1 {
		// One base: α from a wire both hold.
		if w, ok := common(n, bases[0].terms, nil, 1); ok {
			var alpha, zero fr.Element
			alpha.Div(&coeffOf(n, w[0]).coeff, &coeffOf(bases[0].terms, w[0]).coeff)
			if try(alpha, zero, bases[0], nil) {
				return fit
			}
		}
	}
	if len(bases) >= 2 {
		// Two bases: α and β from two wires all three hold.
		if w, ok := common(n, bases[0].terms, bases[1].terms, 2); ok {
			a1, a2 := coeffOf(bases[0].terms, w[0]).coeff, coeffOf(bases[0].terms, w[1]).coeff
			b1, b2 := coeffOf(bases[1].terms, w[0]).coeff, coeffOf(bases[1].terms, w[1]).coeff
			n1, n2 := coeffOf(n, w[0]).coeff, coeffOf(n, w[1]).coeff
			// [a1 b1; a2 b2]·[α β] = [n1 n2]
			var det, t, alpha, beta fr.Element
			det.Mul(&a1, &b2)
			t.Mul(&a2, &b1)
			det.Sub(&det, &t)
			if !det.IsZero() {
				alpha.Mul(&n1, &b2)
				t.Mul(&n2, &b1)
				alpha.Sub(&alpha, &t).Div(&alpha, &det)
				beta.Mul(&a1, &n2)
				t.Mul(&a2, &n1)
				beta.Sub(&beta, &t).Div(&beta, &det)
				try(alpha, beta, bases[0], bases[1])
			}
		}
	}
	return fit
}

// common returns the last k wires (other than the constant-one wire 0 and
// constants) that n, a and b (when not nil) all hold.
func common(n, a, b []wireCoeff, k int) ([]uint32, bool) {
	var w []uint32
	for i := len(n) - 1; i >= 0 && len(w) < k; i-- {
		x := n[i].wire
		if x == 0 || x == constWire {
			continue
		}
		if coeffOf(a, x) == nil || (b != nil && coeffOf(b, x) == nil) {
			continue
		}
		w = append(w, x)
	}
	return w, len(w) == k
}

// coeffOf returns the term of wire w in sorted terms, or nil.
func coeffOf(terms []wireCoeff, w uint32) *wireCoeff {
	i, ok := slices.BinarySearchFunc(terms, w, func(t wireCoeff, w uint32) int { return cmp.Compare(t.wire, w) })
	if !ok {
		return nil
	}
	return &terms[i]
}

// residual returns the nonzero terms of n − α·a − β·b (b may be nil), in wire
// order, or nil when there are more than limit of them. A residual of no terms
// is a non-nil empty slice. The three are sorted by wire: one merge.
func residual(n, a, b []wireCoeff, alpha, beta *fr.Element, limit int) []wireCoeff {
	r := []wireCoeff{}
	i, j, k := 0, 0, 0
	for i < len(n) || j < len(a) || k < len(b) {
		w := uint32(constWire)
		if i < len(n) {
			w = min(w, n[i].wire)
		}
		if j < len(a) {
			w = min(w, a[j].wire)
		}
		if k < len(b) {
			w = min(w, b[k].wire)
		}
		var v, t fr.Element
		if i < len(n) && n[i].wire == w {
			v = n[i].coeff
			i++
		}
		if j < len(a) && a[j].wire == w {
			t.Mul(&a[j].coeff, alpha)
			v.Sub(&v, &t)
			j++
		}
		if k < len(b) && b[k].wire == w {
			t.Mul(&b[k].coeff, beta)
			v.Sub(&v, &t)
			k++
		}
		if v.IsZero() {
			continue
		}
		if len(r) == limit {
			return nil
		}
		r = append(r, wireCoeff{wire: w, coeff: v})
	}
	return r
}
