//go:build !cuda

package gpu

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/zkhost/zkhost/sdk/keyfile"
)

// PrepareNTT caches NTT tables on a device; without CUDA an error wrapping
// ErrUnavailable.
func PrepareNTT[E Fr](dev, logN int) error { return errNoCUDABuild }

// ReleaseNTT frees cached NTT tables; without CUDA an error.
func ReleaseNTT(dev int) error { return errNoCUDABuild }

// NTT transforms a in place on a device as gnark-crypto's fft.Domain would;
// without CUDA an error wrapping ErrUnavailable.
func NTT[E Fr](dev int, a []E, dir Direction, dec Decimation, coset bool, radix NTTRadix) error {
	return errNoCUDABuild
}

// NTTDevice transforms resident data; without CUDA an error.
func NTTDevice[E Fr](buf *Buffer, logN int, dir Direction, dec Decimation, coset bool, radix NTTRadix, s *Stream) error {
	return errNoCUDABuild
}

// ComputeH computes Groth16's quotient as gnark's computeH; without CUDA an
// error wrapping ErrUnavailable.
func ComputeH(a, b []fr.Element, logN int) ([]fr.Element, error) { return nil, errNoCUDABuild }

// ComputeHForm is ComputeH over either field in either form; without CUDA an
// error.
func ComputeHForm[E Fr](dev int, a, b []E, logN int, form keyfile.HForm) ([]E, HTiming, error) {
	return nil, HTiming{}, errNoCUDABuild
}

// ComputeHOn is ComputeH on a given device; without CUDA an error.
func ComputeHOn(dev int, a, b []fr.Element, logN int) ([]fr.Element, HTiming, error) {
	return nil, HTiming{}, errNoCUDABuild
}

// ComputeHStreamOn computes H out of core; without CUDA an error.
func ComputeHStreamOn(dev int, a, b []fr.Element, logN int, block uint64) ([]fr.Element, HTiming, error) {
	return nil, HTiming{}, errNoCUDABuild
}

// ComputeHDevice computes H on resident data; without CUDA an error.
func ComputeHDevice(a, b, c *Buffer, logN int, s *Stream, timing bool) (HTiming, error) {
	return HTiming{}, errNoCUDABuild
}
