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
func (b *Bases[A, J, S]) MSM(scalars []S) (J, MSMTiming, error) {
	var res J
	return res, MSMTiming{}, errNoCUDABuild
}

// MSMDevice is MSM with device-resident scalars; without CUDA an error.
func (b *Bases[A, J, S]) MSMDevice(scalars *Buffer, off, n int, s *Stream) (J, MSMTiming, error) {
	var res J
	return res, MSMTiming{}, errNoCUDABuild
}

// Free releases the points; without CUDA there is nothing to release.
func (b *Bases[A, J, S]) Free() error { return nil }

// Precompute keeps copies of the points; without CUDA an error.
func (b *Bases[A, J, S]) Precompute(maxDepth int) error { return errNoCUDABuild }

// Precomputed returns no copies without CUDA.
func (b *Bases[A, J, S]) Precomputed() (c, depth int) { return 0, 1 }

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
