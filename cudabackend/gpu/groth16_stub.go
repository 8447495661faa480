//go:build !cuda

package gpu

import (
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/zkhost/zkhost/sdk/constraints"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/refprover"
)

// Groth16Key is a proving key's point sets resident on one GPU; without CUDA
// there is none.
type Groth16Key struct{}

// LoadGroth16Key reports that the package was built without CUDA.
func LoadGroth16Key(dev int, pk *keyfile.BLS12381Key, chunk uint64) (*Groth16Key, error) {
	return nil, errNoCUDABuild
}

// LoadGroth16KeyPlan reports that the package was built without CUDA.
func LoadGroth16KeyPlan(dev int, pk *keyfile.BLS12381Key, plan DevicePlan, opts ProveOptions) (*Groth16Key, error) {
	return nil, errNoCUDABuild
}

// SetOptions reports that the package was built without CUDA.
func (k *Groth16Key) SetOptions(opts ProveOptions) error { return errNoCUDABuild }

// DeviceBytes is zero.
func (k *Groth16Key) DeviceBytes() uint64 { return 0 }

// Info is empty.
func (k *Groth16Key) Info() KeyInfo { return KeyInfo{} }

// Free does nothing.
func (k *Groth16Key) Free() error { return nil }

// Groth16Slot is what one proof in flight needs; without CUDA there is none.
type Groth16Slot struct{}

// NewSlot reports that the package was built without CUDA.
func (k *Groth16Key) NewSlot() (*Groth16Slot, error) { return nil, errNoCUDABuild }

// DeviceBytes is zero.
func (s *Groth16Slot) DeviceBytes() uint64 { return 0 }

// HostBytes is zero.
func (s *Groth16Slot) HostBytes() uint64 { return 0 }

// Free does nothing.
func (s *Groth16Slot) Free() error { return nil }

// Stage reports that the package was built without CUDA.
func (s *Groth16Slot) Stage(w, a, b []fr.Element, threads int) error { return errNoCUDABuild }

// StageWith reports that the package was built without CUDA.
func (s *Groth16Slot) StageWith(nbWires, nbConstraints int, fill func(w, a, b []fr.Element) error) error {
	return errNoCUDABuild
}

// Prove reports that the package was built without CUDA.
func (k *Groth16Key) Prove(s *Groth16Slot, n int) (refprover.MSMResults[bls12381.G1Jac, bls12381.G2Jac], Groth16Timing, error) {
	return refprover.MSMResults[bls12381.G1Jac, bls12381.G2Jac]{}, Groth16Timing{}, errNoCUDABuild
}

// SetConstraints reports that the package was built without CUDA.
func (k *Groth16Key) SetConstraints(m *constraints.Matrices) error { return errNoCUDABuild }

// HasConstraints is false.
func (k *Groth16Key) HasConstraints() bool { return false }

// CompactCapacity is zero.
func (s *Groth16Slot) CompactCapacity() int { return 0 }

// StageCompactWith reports that the package was built without CUDA.
func (s *Groth16Slot) StageCompactWith(nbWires, nbOther int, fill func(other, bits []uint64, values []fr.Element) error) error {
	return errNoCUDABuild
}

// ProveCompact reports that the package was built without CUDA.
func (k *Groth16Key) ProveCompact(s *Groth16Slot, nbConstraints, nbOther int) (refprover.MSMResults[bls12381.G1Jac, bls12381.G2Jac], Groth16Timing, error) {
	return refprover.MSMResults[bls12381.G1Jac, bls12381.G2Jac]{}, Groth16Timing{}, errNoCUDABuild
}

// HostRegisterReadOnly is false without CUDA.
func HostRegisterReadOnly(dev int) bool { return false }
