// Package gnarkref holds gnark's unexported prover steps, copied, as the references
// the proving packages' tests (refprover's on the CPU, cudabackend/gpu's on the GPU)
// compare their results with bit for bit.
package gnarkref

import (
	"math/big"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
)

// ComputeH is gnark v0.14.0's computeH (backend/groth16/bls12-381/prove.go), step
// for step, with its three vectors (c = a∘b for a solved R1CS) and gnark-crypto's
// FFTs. It works on copies: a, b and c are left as they were.
func ComputeH(a, b, c []fr.Element, domain *fft.Domain) []fr.Element {
	n := int(domain.Cardinality)
	a = append(make([]fr.Element, 0, n), a...)
	b = append(make([]fr.Element, 0, n), b...)
	c = append(make([]fr.Element, 0, n), c...)
	padding := make([]fr.Element, n-len(a))
	a, b, c = append(a, padding...), append(b, padding...), append(c, padding...)

	domain.FFTInverse(a, fft.DIF)
	domain.FFTInverse(b, fft.DIF)
	domain.FFTInverse(c, fft.DIF)
	domain.FFT(a, fft.DIT, fft.OnCoset())
	domain.FFT(b, fft.DIT, fft.OnCoset())
	domain.FFT(c, fft.DIT, fft.OnCoset())

	var den, one fr.Element
	one.SetOne()
	den.Exp(domain.FrMultiplicativeGen, big.NewInt(int64(domain.Cardinality)))
	den.Sub(&den, &one).Inverse(&den)
	for i := range a {
		a[i].Mul(&a[i], &b[i]).Sub(&a[i], &c[i]).Mul(&a[i], &den)
	}
	domain.FFTInverse(a, fft.DIF, fft.OnCoset())
	return a
}
