//go:build !cuda

package gpu

import (
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/refprover"
)

// Groth16Key is a proving key's point sets resident on one GPU; without CUDA
// there is none.
type Groth16Key struct{}

// LoadGroth16Key reports that the package was built without CUDA.
func LoadGroth16Key(dev int, pk *keyfile.ProvingKey) (*Groth16Key, error) { return nil, errNoCUDABuild }

// DeviceBytes is zero.
func (k *Groth16Key) DeviceBytes() uint64 { return 0 }

// Free does nothing.
func (k *Groth16Key) Free() error { return nil }

// Prove reports that the package was built without CUDA.
func (k *Groth16Key) Prove(w, a, b []fr.Element) (refprover.MSMResults, Groth16Timing, error) {
	return refprover.MSMResults{}, Groth16Timing{}, errNoCUDABuild
}

// HostRegister reports that the package was built without CUDA.
func HostRegister(b []byte) error { return errNoCUDABuild }

// HostUnregister does nothing.
func HostUnregister(b []byte) error { return nil }
