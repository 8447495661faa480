package devsetup

import (
	"context"
	"math/big"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	"github.com/consensys/gnark/constraint"
	cs "github.com/consensys/gnark/constraint/bls12-381"

	"github.com/zkhost/zkhost/sdk/internal/par"
)

// lagrangeAt returns L_i(τ) for i < m, the Lagrange basis of domain evaluated at τ:
// L_i(τ) = (τ^N − 1)/N · ω^i/(τ − ω^i). gnark's setupABC walks the same values with a
// recurrence; here each chunk starts from ω^start and inverts its denominators together.
// τ must not be in the domain (probability N/r for a random τ); then some τ − ω^i is zero
// and so is that L_i, as in gnark, whose batch inversion also maps 0 to 0.
func lagrangeAt(ctx context.Context, domain *fft.Domain, tau *fr.Element, m int) ([]fr.Element, error) {
	var scale fr.Element
	one := fr.One()
	scale.Exp(*tau, new(big.Int).SetUint64(domain.Cardinality)).Sub(&scale, &one).Mul(&scale, &domain.CardinalityInv)
	l := make([]fr.Element, m)
	err := par.ForChunks(ctx, m, scalarChunk, func(start, end int) {
		den := l[start:end]
		var w fr.Element
		w.Exp(domain.Generator, big.NewInt(int64(start)))
		for i := range den {
			den[i].Sub(tau, &w)
			w.Mul(&w, &domain.Generator)
		}
		inv := fr.BatchInvert(den)
		w.Exp(domain.Generator, big.NewInt(int64(start))).Mul(&w, &scale)
		for i := range den {
			den[i].Mul(&inv[i], &w)
			w.Mul(&w, &domain.Generator)
		}
	})
	return l, err
}

// evaluateABC returns, for every wire, Σ over constraints i of the wire's coefficient in
// the constraint's L (R, O) times L_i(τ): the scalars of pk.G1.A (B) and the C part of K,
// exactly as gnark's setupABC.
//
// The accumulation is one pass over the constraints per linear combination, L, R and O on
// three goroutines: a wire takes terms from many constraints (the constant wire from
// nearly all), so splitting the constraints among workers would need locks or copies.
func evaluateABC(ctx context.Context, r1cs *cs.R1CS, domain *fft.Domain, tau *fr.Element, nbWires int) (a, b, c []fr.Element, err error) {
	l, err := lagrangeAt(ctx, domain, tau, r1cs.GetNbConstraints())
	if err != nil {
		return nil, nil, nil, err
	}
	a, b, c = make([]fr.Element, nbWires), make([]fr.Element, nbWires), make([]fr.Element, nbWires)
	sides := []struct {
		dst  []fr.Element
		side func(*constraint.R1C) constraint.LinearExpression
	}{
		{a, func(r *constraint.R1C) constraint.LinearExpression { return r.L }},
		{b, func(r *constraint.R1C) constraint.LinearExpression { return r.R }},
		{c, func(r *constraint.R1C) constraint.LinearExpression { return r.O }},
	}
	err = par.ForChunks(ctx, len(sides), 1, func(s, _ int) {
		dst, side := sides[s].dst, sides[s].side
		it := r1cs.GetR1CIterator()
		for i, r := 0, it.Next(); r != nil; i, r = i+1, it.Next() {
			if i%scalarChunk == 0 && ctx.Err() != nil {
				return
			}
			for _, t := range side(r) {
				accumulate(r1cs, &dst[t.WireID()], t, &l[i])
			}
		}
	})
	if err != nil {
		return nil, nil, nil, err
	}
	return a, b, c, nil
}

// accumulate adds t's coefficient times v to res, as gnark's setupABC does.
// Deliberately parallel to sdk/circuit's evalLinear: this one follows gnark's
// setup term by term, so the development setup matches gnark's key; that one
// is the per-partition evaluation loop, which keeps its scratch element out of
// the loop and also has a case for -2. One shared function would be a call in
// the hot loop for a setup-time saving of five lines.
func accumulate(r1cs *cs.R1CS, res *fr.Element, t constraint.Term, v *fr.Element) {
	switch id := t.CoeffID(); id {
	case constraint.CoeffIdZero:
	case constraint.CoeffIdOne:
		res.Add(res, v)
	case constraint.CoeffIdMinusOne:
		res.Sub(res, v)
	case constraint.CoeffIdTwo:
		var d fr.Element
		d.Double(v)
		res.Add(res, &d)
	default:
		var p fr.Element
		p.Mul(&r1cs.Coefficients[id], v)
		res.Add(res, &p)
	}
}
