//go:build !cuda

package gpu

import (
	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/zkhost/zkhost/sdk/constraints"
	"github.com/zkhost/zkhost/sdk/curve"
	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/refprover"
)

// Groth16Key is a proving key's point sets resident on one GPU; without CUDA
// there is none.
type Groth16Key struct{}

// LoadGroth16Key reports that the package was built without CUDA.
func LoadGroth16Key[G1, G2 any](dev int, pk *keyfile.ProvingKey[G1, G2], chunk uint64) (*Groth16Key, error) {
	return nil, errNoCUDABuild
}

// LoadGroth16KeyPlan reports that the package was built without CUDA.
func LoadGroth16KeyPlan[G1, G2 any](dev int, pk *keyfile.ProvingKey[G1, G2], plan DevicePlan, opts ProveOptions) (*Groth16Key, error) {
	return nil, errNoCUDABuild
}

// Curve is ecc.UNKNOWN.
func (k *Groth16Key) Curve() ecc.ID { return ecc.UNKNOWN }

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

// StageCurve reports that the package was built without CUDA.
func StageCurve[S any](s *Groth16Slot, w, a, b []S, threads int) error { return errNoCUDABuild }

// StageWithCurve reports that the package was built without CUDA.
func StageWithCurve[S any](s *Groth16Slot, nbWires, nbConstraints int, fill func(w, a, b []S) error) error {
	return errNoCUDABuild
}

// ProveCompactCurve reports that the package was built without CUDA.
func ProveCompactCurve[S, G1, G1J, G2, G2J any](c curve.Curve[S, G1, G1J, G2, G2J], k *Groth16Key, s *Groth16Slot, nbConstraints, nbOther int) (refprover.MSMResults[G1J, G2J], Groth16Timing, error) {
	return refprover.MSMResults[G1J, G2J]{}, Groth16Timing{}, errNoCUDABuild
}

// ProveCurve reports that the package was built without CUDA.
func ProveCurve[S, G1, G1J, G2, G2J any](c curve.Curve[S, G1, G1J, G2, G2J], k *Groth16Key, s *Groth16Slot, n int) (refprover.MSMResults[G1J, G2J], Groth16Timing, error) {
	return refprover.MSMResults[G1J, G2J]{}, Groth16Timing{}, errNoCUDABuild
}

// SetConstraints reports that the package was built without CUDA.
func (k *Groth16Key) SetConstraints(m *constraints.Matrices) error { return errNoCUDABuild }

// HasConstraints is false.
func (k *Groth16Key) HasConstraints() bool { return false }

// CompactCapacity is zero.
func (s *Groth16Slot) CompactCapacity() int { return 0 }

// StageCompactWithCurve reports that the package was built without CUDA.
func StageCompactWithCurve[S any](s *Groth16Slot, nbWires, nbOther int, fill func(other, bits []uint64, values []S) error) error {
	return errNoCUDABuild
}

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
