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
