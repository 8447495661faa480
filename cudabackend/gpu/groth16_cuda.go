//go:build cuda

package gpu

/*
#include <stdlib.h>
#include "groth16.h"
*/
import "C"

import (
	"fmt"
	"math/bits"
	"runtime"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/refprover"
)

// Groth16Key is a proving key's point sets resident on one GPU.
type Groth16Key struct {
	ptr   *C.zk_g16_key
	bytes uint64
}

func ptrOf[T any](s []T) unsafe.Pointer {
	if len(s) == 0 {
		return nil
	}
	return unsafe.Pointer(&s[0])
}

func boolBytes(b []bool) *C.uint8_t {
	if len(b) == 0 {
		return nil
	}
	// A Go bool is one byte, 0 or 1.
	return (*C.uint8_t)(unsafe.Pointer(&b[0]))
}

// LoadGroth16Key uploads pk's point sets to device dev.
func LoadGroth16Key(dev int, pk *keyfile.ProvingKey) (*Groth16Key, error) {
	if pk.DomainSize == 0 || pk.DomainSize&(pk.DomainSize-1) != 0 {
		return nil, fmt.Errorf("gpu: domain size %d is not a power of two: %w", pk.DomainSize, ErrInvalid)
	}
	logN := bits.TrailingZeros64(pk.DomainSize)
	var e errBuf
	var k *C.zk_g16_key
	rc := C.zk_g16_key_load(C.int(dev), C.uint32_t(logN), C.size_t(pk.NbWires), C.size_t(pk.NbPublic),
		ptrOf(pk.G1A), C.size_t(len(pk.G1A)), boolBytes(pk.InfinityA),
		ptrOf(pk.G1B), C.size_t(len(pk.G1B)), boolBytes(pk.InfinityB),
		ptrOf(pk.G1K), C.size_t(len(pk.G1K)), ptrOf(pk.G1Z), C.size_t(len(pk.G1Z)),
		ptrOf(pk.G2B), &k, e.ptr(), e.size())
	runtime.KeepAlive(pk)
	if err := check("gpu: load key", rc, &e); err != nil {
		return nil, err
	}
	return &Groth16Key{ptr: k, bytes: uint64(C.zk_g16_key_device_bytes(k))}, nil
}

// DeviceBytes is the device memory the key holds.
func (k *Groth16Key) DeviceBytes() uint64 { return k.bytes }

// Free releases the key's device memory. Not while proofs on it run.
func (k *Groth16Key) Free() error {
	if k == nil || k.ptr == nil {
		return nil
	}
	var e errBuf
	err := check("gpu: free key", C.zk_g16_key_free(k.ptr, e.ptr(), e.size()), &e)
	k.ptr = nil
	return err
}

// Prove runs one proof's device work: upload W, A, B, compute H, the four G1
// MSMs and the G2 MSM. The host assembles the proof from the sums.
func (k *Groth16Key) Prove(w, a, b []fr.Element) (refprover.MSMResults, Groth16Timing, error) {
	var res refprover.MSMResults
	if len(a) != len(b) {
		return res, Groth16Timing{}, fmt.Errorf("gpu: %d A values but %d B values: %w", len(a), len(b), ErrInvalid)
	}
	if len(w) == 0 || len(a) == 0 {
		return res, Groth16Timing{}, fmt.Errorf("gpu: empty partition: %w", ErrInvalid)
	}
	var g1 [4]bls12381.G1Jac
	var g2 bls12381.G2Jac
	var t C.zk_g16_timing
	var e errBuf
	rc := C.zk_g16_prove(k.ptr, unsafe.Pointer(&w[0]), C.size_t(len(w)), unsafe.Pointer(&a[0]), unsafe.Pointer(&b[0]),
		C.size_t(len(a)), unsafe.Pointer(&g1[0]), unsafe.Pointer(&g2), &t, e.ptr(), e.size())
	runtime.KeepAlive(w)
	runtime.KeepAlive(a)
	runtime.KeepAlive(b)
	if err := check("gpu: prove", rc, &e); err != nil {
		return res, Groth16Timing{}, err
	}
	// An empty sum comes back all zero; gnark's Jacobian infinity is (1, 1, 0).
	for i := range g1 {
		if g1[i].X.IsZero() && g1[i].Y.IsZero() && g1[i].Z.IsZero() {
			g1[i].X.SetOne()
			g1[i].Y.SetOne()
		}
	}
	if g2.X.IsZero() && g2.Y.IsZero() && g2.Z.IsZero() {
		g2.X.SetOne()
		g2.Y.SetOne()
	}
	res.Ar, res.Bs1, res.Krs, res.Krs2, res.Bs2 = g1[0], g1[1], g1[2], g1[3], g2
	return res, Groth16Timing{
		Upload: msDuration(t.upload_ms), NTT: msDuration(t.ntt_ms), MSMG1: msDuration(t.msm_g1_ms),
		MSMG2Start: msDuration(t.msm_g2_start_ms), MSMG2: msDuration(t.msm_g2_ms), Total: msDuration(t.total_ms),
	}, nil
}

// HostRegister pins host memory for DMA (read-only use by the device).
func HostRegister(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	var e errBuf
	return check("gpu: pin host memory", C.zk_host_register(unsafe.Pointer(&b[0]), C.size_t(len(b)), e.ptr(), e.size()), &e)
}

// HostUnregister undoes HostRegister.
func HostUnregister(b []byte) error {
	if len(b) == 0 {
		return nil
	}
	var e errBuf
	return check("gpu: unpin host memory", C.zk_host_unregister(unsafe.Pointer(&b[0]), e.ptr(), e.size()), &e)
}
