//go:build cuda

package gpu

/*
#include "msm.h"
*/
import "C"

import (
	"fmt"
	"runtime"
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
	return uploadBases[bn254.G1Affine, bn254.G1Jac, bn254fr.Element](dev, C.ZK_MSM_BN254_G1, "BN254 G1", points)
}

// UploadBN254G2 is UploadBN254G1 for BN254 G2 points.
func UploadBN254G2(dev int, points []bn254.G2Affine) (*BN254G2Bases, error) {
	return uploadBases[bn254.G2Affine, bn254.G2Jac, bn254fr.Element](dev, C.ZK_MSM_BN254_G2, "BN254 G2", points)
}

func uploadBases[A, J, S any](dev int, group C.int, name string, points []A) (*Bases[A, J, S], error) {
	var j J
	var s S
	b := &Bases[A, J, S]{name: name, jacBytes: unsafe.Sizeof(j), scalarBytes: unsafe.Sizeof(s)}
	if err := upload(&b.msmBases, "gpu: upload "+name+" bases", dev, group, unsafe.Pointer(unsafe.SliceData(points)), len(points), nil); err != nil {
		return nil, err
	}
	runtime.KeepAlive(points)
	return b, nil
}

// MSM returns sum scalars[i]*bases[i] over the first len(scalars) resident
// points, the scalars copied from the host on the bases' own stream.
func (b *Bases[A, J, S]) MSM(scalars []S) (J, MSMTiming, error) {
	var res J
	var s S
	if b == nil {
		return res, MSMTiming{}, fmt.Errorf("gpu: MSM: nil bases: %w", ErrInvalid)
	}
	if unsafe.Sizeof(res) != b.jacBytes || unsafe.Sizeof(s) != b.scalarBytes {
		return res, MSMTiming{}, fmt.Errorf("gpu: %s MSM: bases used with other types than they were uploaded for: %w", b.name, ErrInvalid)
	}
	t, err := b.run("gpu: "+b.name+" MSM", unsafe.Pointer(unsafe.SliceData(scalars)), len(scalars), false, nil, unsafe.Pointer(&res))
	runtime.KeepAlive(scalars)
	return res, t, err
}

// Precompute keeps up to maxDepth copies of the points (G1Bases.Precompute).
func (b *Bases[A, J, S]) Precompute(maxDepth int) error {
	if b == nil {
		return fmt.Errorf("gpu: precompute: nil bases: %w", ErrInvalid)
	}
	return b.precompute("gpu: precompute "+b.name+" bases", maxDepth)
}

// Free releases the device memory; MSMs on the bases fail afterwards.
func (b *Bases[A, J, S]) Free() error {
	if b == nil {
		return nil
	}
	return b.free("gpu: free " + b.name + " bases")
}
