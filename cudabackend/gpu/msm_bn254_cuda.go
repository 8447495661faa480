//go:build cuda

package gpu

/*
#include "msm.h"
*/
import "C"

import (
	"unsafe"

	"github.com/consensys/gnark-crypto/ecc/bn254"
	bn254fr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// The ABI's byte sizes must be gnark-crypto's bn254 types': msm.cu
// reinterprets Go slices (32-byte coordinates, Fq2 of two).
var (
	_ [64 - unsafe.Sizeof(bn254.G1Affine{})]struct{}
	_ [unsafe.Sizeof(bn254.G1Affine{}) - 64]struct{}
	_ [128 - unsafe.Sizeof(bn254.G2Affine{})]struct{}
	_ [unsafe.Sizeof(bn254.G2Affine{}) - 128]struct{}
	_ [96 - unsafe.Sizeof(bn254.G1Jac{})]struct{}
	_ [unsafe.Sizeof(bn254.G1Jac{}) - 96]struct{}
	_ [192 - unsafe.Sizeof(bn254.G2Jac{})]struct{}
	_ [unsafe.Sizeof(bn254.G2Jac{}) - 192]struct{}
	_ [32 - unsafe.Sizeof(bn254fr.Element{})]struct{}
	_ [unsafe.Sizeof(bn254fr.Element{}) - 32]struct{}
)

// UploadBN254G1 copies BN254 G1 points (gnark affine, infinity as (0, 0)) to
// device dev and keeps them there until Free, as UploadG1 does BLS12-381's.
func UploadBN254G1(dev int, points []bn254.G1Affine) (*BN254G1Bases, error) {
	return uploadBases[bn254.G1Affine, bn254.G1Jac, bn254fr.Element](dev, C.ZK_MSM_BN254_G1, "BN254 G1", points, nil)
}

// UploadBN254G2 is UploadBN254G1 for BN254 G2 points.
func UploadBN254G2(dev int, points []bn254.G2Affine) (*BN254G2Bases, error) {
	return uploadBases[bn254.G2Affine, bn254.G2Jac, bn254fr.Element](dev, C.ZK_MSM_BN254_G2, "BN254 G2", points, nil)
}
