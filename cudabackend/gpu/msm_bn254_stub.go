//go:build !cuda

package gpu

import (
	"github.com/consensys/gnark-crypto/ecc/bn254"
)

// UploadBN254G1 copies BN254 G1 points to device dev; without CUDA an error.
func UploadBN254G1(dev int, points []bn254.G1Affine) (*BN254G1Bases, error) {
	return nil, errNoCUDABuild
}

// UploadBN254G2 copies BN254 G2 points to device dev; without CUDA an error.
func UploadBN254G2(dev int, points []bn254.G2Affine) (*BN254G2Bases, error) {
	return nil, errNoCUDABuild
}

// MSM computes sum scalars[i]*bases[i]; without CUDA an error.
func (b *Bases[A, J, S]) MSM(scalars []S) (J, MSMTiming, error) {
	var res J
	return res, MSMTiming{}, errNoCUDABuild
}

// Precompute keeps copies of the points; without CUDA an error.
func (b *Bases[A, J, S]) Precompute(maxDepth int) error { return errNoCUDABuild }

// Free releases the points; without CUDA there is nothing to release.
func (b *Bases[A, J, S]) Free() error { return nil }
