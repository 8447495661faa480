//go:build !cuda

package gpu

import (
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// UploadG1 copies points to device dev; without CUDA an error.
func UploadG1(dev int, points []bls12381.G1Affine) (*G1Bases, error) {
	return nil, errNoCUDABuild
}

// UploadG1Masked uploads points expanded over skip; without CUDA an error.
func UploadG1Masked(dev int, points []bls12381.G1Affine, skip []bool) (*G1Bases, error) {
	return nil, errNoCUDABuild
}

// UploadG2 copies points to device dev; without CUDA an error.
func UploadG2(dev int, points []bls12381.G2Affine) (*G2Bases, error) {
	return nil, errNoCUDABuild
}

// UploadG2Masked uploads points expanded over skip; without CUDA an error.
func UploadG2Masked(dev int, points []bls12381.G2Affine, skip []bool) (*G2Bases, error) {
	return nil, errNoCUDABuild
}

// MSM computes sum scalars[i]*bases[i]; without CUDA an error.
func (b *G1Bases) MSM(scalars []fr.Element) (bls12381.G1Jac, MSMTiming, error) {
	return bls12381.G1Jac{}, MSMTiming{}, errNoCUDABuild
}

// MSMDevice is MSM with device-resident scalars; without CUDA an error.
func (b *G1Bases) MSMDevice(scalars *Buffer, off, n int, s *Stream) (bls12381.G1Jac, MSMTiming, error) {
	return bls12381.G1Jac{}, MSMTiming{}, errNoCUDABuild
}

// Free releases the points; without CUDA there is nothing to release.
func (b *G1Bases) Free() error { return nil }

// MSM computes sum scalars[i]*bases[i]; without CUDA an error.
func (b *G2Bases) MSM(scalars []fr.Element) (bls12381.G2Jac, MSMTiming, error) {
	return bls12381.G2Jac{}, MSMTiming{}, errNoCUDABuild
}

// MSMDevice is MSM with device-resident scalars; without CUDA an error.
func (b *G2Bases) MSMDevice(scalars *Buffer, off, n int, s *Stream) (bls12381.G2Jac, MSMTiming, error) {
	return bls12381.G2Jac{}, MSMTiming{}, errNoCUDABuild
}

// Free releases the points; without CUDA there is nothing to release.
func (b *G2Bases) Free() error { return nil }

// Precompute keeps copies of the points; without CUDA an error.
func (b *G1Bases) Precompute(maxDepth int) error { return errNoCUDABuild }

// Precomputed returns no copies without CUDA.
func (b *G1Bases) Precomputed() (c, depth int) { return 0, 1 }

// Precompute keeps copies of the points; without CUDA an error.
func (b *G2Bases) Precompute(maxDepth int) error { return errNoCUDABuild }

// Precomputed returns no copies without CUDA.
func (b *G2Bases) Precomputed() (c, depth int) { return 0, 1 }

// PinnedScalars is a scalar vector in pinned host memory; without CUDA it
// cannot be allocated.
type PinnedScalars struct{}

// NewPinnedScalars reports that the package was built without CUDA.
func NewPinnedScalars(n int) (*PinnedScalars, error) { return nil, errNoCUDABuild }

// Elements returns nil without CUDA.
func (s *PinnedScalars) Elements() []fr.Element { return nil }

// Free has nothing to release without CUDA.
func (s *PinnedScalars) Free() error { return nil }

// TrimMSMPool reports that the package was built without CUDA.
func TrimMSMPool(dev int) error { return errNoCUDABuild }

// SetPieces sets the pieces of an MSM's upload; without CUDA an error.
func (b *msmBases) SetPieces(pieces, minPiece int) error { return errNoCUDABuild }

// DeviceResidency reports that the package was built without CUDA.
func DeviceResidency(dev int) (Residency, error) { return Residency{}, errNoCUDABuild }
