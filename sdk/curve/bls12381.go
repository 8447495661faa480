package curve

import (
	"math/big"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
)

//go:generate ./gen.sh

// BLS12381 is the binding of BLS12-381. gen.sh writes BN254's from it: a binding is the
// same calls on another curve's types (see the package doc).
type BLS12381 struct{}

var _ Curve[fr.Element, bls12381.G1Affine, bls12381.G1Jac, bls12381.G2Affine, bls12381.G2Jac] = BLS12381{}

// ID returns ecc.BLS12_381.
func (BLS12381) ID() ecc.ID { return ecc.BLS12_381 }

// NewDomain returns gnark-crypto's domain of size n.
func (BLS12381) NewDomain(n uint64, shift *fr.Element) Domain[fr.Element] {
	if shift != nil {
		return bls12381Domain{fft.NewDomain(n, fft.WithShift(*shift))}
	}
	return bls12381Domain{fft.NewDomain(n)}
}

type bls12381Domain struct{ d *fft.Domain }

func (d bls12381Domain) Size() uint64          { return d.d.Cardinality }
func (d bls12381Domain) Generator() fr.Element { return d.d.Generator }
func (d bls12381Domain) Shift() fr.Element     { return d.d.FrMultiplicativeGen }
func (d bls12381Domain) Transform(a []fr.Element, inverse, dif, coset bool, tasks int) {
	opts := []fft.Option{fft.WithNbTasks(tasks)}
	if coset {
		opts = append(opts, fft.OnCoset())
	}
	dec := fft.DIT
	if dif {
		dec = fft.DIF
	}
	if inverse {
		d.d.FFTInverse(a, dec, opts...)
	} else {
		d.d.FFT(a, dec, opts...)
	}
}

func (BLS12381) G1MultiExp(points []bls12381.G1Affine, scalars []fr.Element, tasks int) (bls12381.G1Jac, error) {
	var p bls12381.G1Jac
	_, err := p.MultiExp(points, scalars, ecc.MultiExpConfig{NbTasks: tasks})
	return p, err
}
func (BLS12381) G1Infinity() bls12381.G1Jac {
	var p bls12381.G1Jac
	p.X.SetOne()
	p.Y.SetOne()
	return p
}
func (BLS12381) G1FromAffine(a *bls12381.G1Affine) (p bls12381.G1Jac) { p.FromAffine(a); return p }
func (BLS12381) G1ToAffine(p *bls12381.G1Jac) (a bls12381.G1Affine)   { a.FromJacobian(p); return a }
func (BLS12381) G1Add(p, q *bls12381.G1Jac)                           { p.AddAssign(q) }
func (BLS12381) G1AddMixed(p *bls12381.G1Jac, a *bls12381.G1Affine)   { p.AddMixed(a) }
func (BLS12381) G1ScalarMul(p *bls12381.G1Jac, k *big.Int) (q bls12381.G1Jac) {
	q.ScalarMultiplication(p, k)
	return q
}

func (BLS12381) G2MultiExp(points []bls12381.G2Affine, scalars []fr.Element, tasks int) (bls12381.G2Jac, error) {
	var p bls12381.G2Jac
	_, err := p.MultiExp(points, scalars, ecc.MultiExpConfig{NbTasks: tasks})
	return p, err
}
func (BLS12381) G2Infinity() bls12381.G2Jac {
	var p bls12381.G2Jac
	p.X.SetOne()
	p.Y.SetOne()
	return p
}
func (BLS12381) G2FromAffine(a *bls12381.G2Affine) (p bls12381.G2Jac) { p.FromAffine(a); return p }
func (BLS12381) G2ToAffine(p *bls12381.G2Jac) (a bls12381.G2Affine)   { a.FromJacobian(p); return a }
func (BLS12381) G2Add(p, q *bls12381.G2Jac)                           { p.AddAssign(q) }
func (BLS12381) G2AddMixed(p *bls12381.G2Jac, a *bls12381.G2Affine)   { p.AddMixed(a) }
func (BLS12381) G2ScalarMul(p *bls12381.G2Jac, k *big.Int) (q bls12381.G2Jac) {
	q.ScalarMultiplication(p, k)
	return q
}
