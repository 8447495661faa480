//go:build !cuda

package gpu

import (
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fp"
)

// ProbeMadd runs the arithmetic throughput probe; without CUDA an error.
func ProbeMadd(dev, regBlocks, blocksPerSM, iters int, points []bls12381.G1Affine) (MaddProbe, []bls12381.G1Affine, error) {
	return MaddProbe{}, nil, errNoCUDABuild
}

// ProbeFmul runs the product throughput probe; without CUDA an error.
func ProbeFmul(dev, ilp, blocksPerSM, iters int, xs, ys []fp.Element) (FmulProbe, []fp.Element, error) {
	return FmulProbe{}, nil, errNoCUDABuild
}
