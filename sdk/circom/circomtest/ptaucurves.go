package circomtest

import (
	"bytes"
	"fmt"
	"math/big"
	"runtime"
	"sync"
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bn254"
)

// ptauCurve is what the powers-of-tau writer needs of a curve: its two fields, and its
// generators times many scalars, encoded as snarkjs stores points (see ptau.go).
type ptauCurve struct {
	scalarField   *big.Int // r
	twoAdicity    int      // s, with r − 1 = 2^s·t, t odd
	baseField     *big.Int // q
	baseFieldSize int      // a coordinate's bytes: q rounded up to 64-bit words, ffjavascript's n8
	// g1 and g2 return s_i·G for each scalar s_i (below 2^256), one encoded point after
	// another.
	g1, g2 func(scalars []*big.Int) []byte
}

// ptauCurveOf returns the writer's view of curve: BN254 or BLS12-381, the two that snarkjs and
// zkhost share.
func ptauCurveOf(curve ecc.ID) (*ptauCurve, error) {
	c := &ptauCurve{scalarField: curve.ScalarField(), baseField: curve.BaseField()}
	switch curve {
	case ecc.BN254:
		c.g1, c.g2 = bn254G1, bn254G2
	case ecc.BLS12_381:
		c.g1, c.g2 = bls12381G1, bls12381G2
	default:
		return nil, fmt.Errorf("curve %s: snarkjs's powers of tau are for BN254 (bn128) and BLS12-381 (bls12381)", curve)
	}
	c.twoAdicity = int(new(big.Int).Sub(c.scalarField, big.NewInt(1)).TrailingZeroBits())
	c.baseFieldSize = (c.baseField.BitLen() + 63) / 64 * 8
	return c, nil
}

// The four point encoders: each curve's generators through one generic encoder. Their
// affine points hold the coordinates in Montgomery form, the limbs least significant
// first, which is snarkjs's layout once each limb is written little-endian; the point at
// infinity is (0, 0), snarkjs's all-zero bytes. gnark-crypto batch-converts G1 points to
// affine, with one inversion for them all, and has no such function for G2, whose points
// are converted one by one, on every core (oneByOne).

func bn254G1(scalars []*big.Int) []byte {
	_, _, g, _ := bn254.Generators()
	return encodePoints(mulFixedBase[bn254.G1Jac](&g, scalars, bn254.BatchJacobianToAffineG1))
}

func bn254G2(scalars []*big.Int) []byte {
	_, _, _, g := bn254.Generators()
	return encodePoints(mulFixedBase[bn254.G2Jac](&g, scalars, oneByOne[bn254.G2Jac, bn254.G2Affine]))
}

func bls12381G1(scalars []*big.Int) []byte {
	_, _, g, _ := bls12381.Generators()
	return encodePoints(mulFixedBase[bls12381.G1Jac](&g, scalars, bls12381.BatchJacobianToAffineG1))
}

func bls12381G2(scalars []*big.Int) []byte {
	_, _, _, g := bls12381.Generators()
	return encodePoints(mulFixedBase[bls12381.G2Jac](&g, scalars, oneByOne[bls12381.G2Jac, bls12381.G2Affine]))
}

// oneByOne converts Jacobian points to affine one at a time, on every core.
func oneByOne[J, A any, PA interface {
	*A
	FromJacobian(*J) *A
}](in []J) []A {
	out := make([]A, len(in))
	parallel(len(in), func(i int) { PA(&out[i]).FromJacobian(&in[i]) })
	return out
}

// encodePoints is snarkjs's encoding of affine points: their coordinates' limbs, each
// little-endian, in the order gnark-crypto keeps them in memory (x then y, a G2
// coordinate's c0 then c1), which on a little-endian host are the points' bytes.
func encodePoints[A any](points []A) []byte {
	if len(points) == 0 {
		return []byte{}
	}
	b := unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(points))), uintptr(len(points))*unsafe.Sizeof(points[0]))
	return bytes.Clone(b)
}

// jacobian is what mulFixedBase needs of a gnark-crypto point type in Jacobian coordinates,
// J, whose affine type is A. The zero J is the point at infinity (Z = 0), which gnark-crypto's
// additions and conversions to affine take as such.
type jacobian[J, A any] interface {
	*J
	FromAffine(*A) *J
	Set(*J) *J
	AddAssign(*J) *J
	AddMixed(*A) *J
	DoubleAssign() *J
}

// mulFixedBase returns s_i·g for every scalar s_i below 2^256, in affine coordinates (toAffine
// converts a slice). Every scalar multiplies the same point, so a table of g's multiples
// d·256^w·g (w the scalar's byte, d in [1, 255]) turns each product into at most 32 mixed
// additions, one per nonzero byte of the scalar, and no doublings: about a tenth of the group
// operations of gnark-crypto's BatchScalarMultiplication, which doubles 255 times for every
// point. The table is 8,160 points, computed once per call.
func mulFixedBase[J, A any, PJ jacobian[J, A]](g *A, scalars []*big.Int, toAffine func([]J) []A) []A {
	const windows, digits = 32, 255
	tableJ := make([]J, windows*digits)
	var base J // 256^w·g
	PJ(&base).FromAffine(g)
	for w := range windows {
		row := tableJ[w*digits : (w+1)*digits]
		PJ(&row[0]).Set(&base)
		for d := 1; d < digits; d++ {
			PJ(&row[d]).Set(&row[d-1])
			PJ(&row[d]).AddAssign(&base)
		}
		for range 8 {
			PJ(&base).DoubleAssign()
		}
	}
	table := toAffine(tableJ)

	out := make([]J, len(scalars))
	parallel(len(scalars), func(i int) {
		var b [32]byte // big-endian
		scalars[i].FillBytes(b[:])
		p := PJ(&out[i])
		for w := range windows {
			if d := b[31-w]; d != 0 {
				p.AddMixed(&table[w*digits+int(d)-1])
			}
		}
	})
	return toAffine(out)
}

// parallel calls f(i) for every i in [0, n), on as many goroutines as there are cores,
// each taking a contiguous share.
func parallel(n int, f func(i int)) {
	workers := min(runtime.NumCPU(), n)
	var wg sync.WaitGroup
	for k := range workers {
		start, end := k*n/workers, (k+1)*n/workers
		wg.Go(func() {
			for i := start; i < end; i++ {
				f(i)
			}
		})
	}
	wg.Wait()
}
