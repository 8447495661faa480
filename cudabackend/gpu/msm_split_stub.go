//go:build !cuda

package gpu

import (
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
)

// ClassifyScalars classifies device scalars; without CUDA an error.
func ClassifyScalars(buf *Buffer, off, n int, s *Stream) (*ScalarSplit, error) {
	return nil, errNoCUDABuild
}

// Free releases the split; without CUDA there is nothing to release.
func (s *ScalarSplit) Free() error { return nil }

// MSMSplit computes a split MSM; without CUDA an error.
func (b *G1Bases) MSMSplit(sp *ScalarSplit, lo, n int, s *Stream) (bls12381.G1Jac, MSMTiming, error) {
	return bls12381.G1Jac{}, MSMTiming{}, errNoCUDABuild
}

// MSMSplit computes a split MSM; without CUDA an error.
func (b *G2Bases) MSMSplit(sp *ScalarSplit, lo, n int, s *Stream) (bls12381.G2Jac, MSMTiming, error) {
	return bls12381.G2Jac{}, MSMTiming{}, errNoCUDABuild
}
