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
	"sync"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/zkhost/zkhost/sdk/keyfile"
	"github.com/zkhost/zkhost/sdk/refprover"
)

// Groth16Key is a proving key's point sets resident on one GPU.
type Groth16Key struct {
	ptr    *C.zk_g16_key
	bytes  uint64
	nwires int // for the slots' staging views
	domain int
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
	return &Groth16Key{ptr: k, bytes: uint64(C.zk_g16_key_device_bytes(k)), nwires: int(pk.NbWires), domain: int(pk.DomainSize)}, nil
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

// Groth16Slot is what one proof in flight on a key needs, allocated once
// (NewSlot) and reused by every proof: device buffers, streams, events and a
// pinned staging buffer the partition is copied into. One proof per slot at a
// time; proofs in different slots run at once.
type Groth16Slot struct {
	ptr         *C.zk_g16_slot
	w, a, b     []fr.Element // the pinned staging, C memory
	deviceBytes uint64
	hostBytes   uint64
}

// NewSlot allocates a slot for proofs on k.
func (k *Groth16Key) NewSlot() (*Groth16Slot, error) {
	var s Groth16Slot
	var w, a, b unsafe.Pointer
	var dev, host C.uint64_t
	var e errBuf
	if err := check("gpu: new slot", C.zk_g16_slot_create(k.ptr, &s.ptr, &w, &a, &b, &dev, &host, e.ptr(), e.size()), &e); err != nil {
		return nil, err
	}
	s.w = unsafe.Slice((*fr.Element)(w), k.nwires)
	s.a = unsafe.Slice((*fr.Element)(a), k.domain)
	s.b = unsafe.Slice((*fr.Element)(b), k.domain)
	s.deviceBytes, s.hostBytes = uint64(dev), uint64(host)
	return &s, nil
}

// DeviceBytes is the device memory the slot holds.
func (s *Groth16Slot) DeviceBytes() uint64 { return s.deviceBytes }

// HostBytes is the pinned host memory the slot holds.
func (s *Groth16Slot) HostBytes() uint64 { return s.hostBytes }

// Free releases the slot. Not while a proof runs in it.
func (s *Groth16Slot) Free() error {
	if s == nil || s.ptr == nil {
		return nil
	}
	var e errBuf
	err := check("gpu: free slot", C.zk_g16_slot_free(s.ptr, e.ptr(), e.size()), &e)
	s.ptr, s.w, s.a, s.b = nil, nil, nil, nil
	return err
}

// Stage copies a partition (w: the key's wires; a, b: up to its domain) into
// the slot's pinned staging with up to threads goroutines. It runs on the CPU
// only, so it overlaps whatever the GPU computes for other slots; the upload
// from there is then a DMA at the bus's full speed.
func (s *Groth16Slot) Stage(w, a, b []fr.Element, threads int) error {
	if len(w) != len(s.w) || len(a) != len(b) || len(a) == 0 || len(a) > len(s.a) {
		return fmt.Errorf("gpu: stage %d wires, %d A and %d B values into a slot for %d wires and up to %d constraints: %w",
			len(w), len(a), len(b), len(s.w), len(s.a), ErrInvalid)
	}
	parallelCopy(s.w, w, threads)
	parallelCopy(s.a, a, threads)
	parallelCopy(s.b, b, threads)
	return nil
}

// stageChunk is how many elements one goroutine copies at a time (4 MiB).
const stageChunk = 1 << 17

// parallelCopy copies src into dst (len(dst) >= len(src)) in stageChunk pieces
// spread over up to threads goroutines: one core's memcpy is well below the
// memory bandwidth that a few reach.
func parallelCopy(dst, src []fr.Element, threads int) {
	chunks := (len(src) + stageChunk - 1) / stageChunk
	threads = max(1, min(threads, chunks))
	var wg sync.WaitGroup
	for t := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := t; c < chunks; c += threads {
				lo, hi := c*stageChunk, min(len(src), (c+1)*stageChunk)
				copy(dst[lo:hi], src[lo:hi])
			}
		}()
	}
	wg.Wait()
}

// Prove runs one proof's device work on the partition staged in s (n
// constraints): upload W, A, B, compute H, the four G1 MSMs and the G2 MSM.
// The host assembles the proof from the sums. When it returns, s may be staged
// again.
func (k *Groth16Key) Prove(s *Groth16Slot, n int) (refprover.MSMResults, Groth16Timing, error) {
	var res refprover.MSMResults
	if s == nil || s.ptr == nil {
		return res, Groth16Timing{}, fmt.Errorf("gpu: prove: nil or freed slot: %w", ErrInvalid)
	}
	var g1 [4]bls12381.G1Jac
	var g2 bls12381.G2Jac
	var t C.zk_g16_timing
	var e errBuf
	rc := C.zk_g16_prove(k.ptr, s.ptr, C.size_t(n), unsafe.Pointer(&g1[0]), unsafe.Pointer(&g2), &t, e.ptr(), e.size())
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
