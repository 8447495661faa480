package gpu

import (
	"sync"
	"time"
	"unsafe"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bn254"
	bn254fr "github.com/consensys/gnark-crypto/ecc/bn254/fr"
)

// MSMTiming is the time one multi-scalar multiplication took. The device
// phases come from CUDA events (device-busy time, summed over chunks; host
// scalars copied in pieces overlap, so the phases then add up to more than
// Device: msm.h's zk_msm_timing says how each is counted); Wall is the
// host's clock around the whole call.
type MSMTiming struct {
	Upload     time.Duration // host scalars to the device (zero for device scalars)
	Sort       time.Duration // signed digits and the radix sort by bucket
	Accumulate time.Duration // bucket accumulation
	Reduce     time.Duration // bucket reduction and window combination
	Device     time.Duration // first event to last
	Wall       time.Duration // the call, as the host saw it
	WindowBits int           // the Pippenger window c chosen (0: no scalar needed Pippenger)
	Chunks     int           // how many chunks the scalars were cut into (pieces of an overlapped upload, or of MAX_CHUNK)
	Ones       time.Duration // split MSMs: summing the points whose scalar is 1
	Pippenger  int           // how many scalars went through Pippenger
	Depth      int           // precomputed copies of the bases read (1: none; 0: no Pippenger)
}

// msmBases is a point set resident on one GPU, behind an opaque handle of
// msm.cu. The lock keeps Free from releasing the points under a running MSM.
type msmBases struct {
	mu     sync.RWMutex
	h      unsafe.Pointer
	n      int
	device int
}

// Len returns the number of resident points (infinity points included).
func (b *msmBases) Len() int { return b.n }

// Device returns the ordinal of the device the points live on.
func (b *msmBases) Device() int { return b.device }

// Bases is a point set of one curve's group resident on one GPU, against
// which MSMs run without moving the points again, typed by gnark-crypto's
// types for that group: A its affine points, J the Jacobian result, S its
// scalar field's elements. The same kernels run every group (msm.cu
// instantiates them per field); the handle's group tells them which.
type Bases[A, J, S any] struct {
	msmBases
	name string // the group, as errors name it ("G1", "BN254 G2")
	// Bases of other type arguments are other types, not conversions of
	// this one: the handle reads and writes A, J and S by size.
	_ [0]func() (A, J, S)
}

// The groups: BLS12-381's G1 and G2 (UploadG1, UploadG1Masked, UploadG2,
// UploadG2Masked) and BN254's (UploadBN254G1, UploadBN254G2).
type (
	G1Bases      = Bases[bls12381.G1Affine, bls12381.G1Jac, fr.Element]
	G2Bases      = Bases[bls12381.G2Affine, bls12381.G2Jac, fr.Element]
	BN254G1Bases = Bases[bn254.G1Affine, bn254.G1Jac, bn254fr.Element]
	BN254G2Bases = Bases[bn254.G2Affine, bn254.G2Jac, bn254fr.Element]
)

// ScalarSplit is the classification of a scalar vector W resident on the
// device into 0s, 1s and the rest, for the witness-aware MSM (MSMSplit): the
// 0s are dropped, the points of the 1s are summed by plain point additions,
// and only the rest go through Pippenger. A Groth16 witness is mostly bits
// (hash and range-check wires, booleans), so one classification, shared by
// every MSM over W, saves most of their Pippenger work. It holds two index
// lists on the device (up to 8 bytes per scalar) and reads the rest's
// scalars from W at every MSM: W must stay unchanged until Free.
type ScalarSplit struct {
	mu                 sync.RWMutex
	h                  unsafe.Pointer
	device             int
	n                  int
	zeros, ones, other int
}

// Len returns the number of classified scalars.
func (s *ScalarSplit) Len() int { return s.n }

// Counts returns how many classified scalars are 0, 1, and neither.
func (s *ScalarSplit) Counts() (zeros, ones, other int) { return s.zeros, s.ones, s.other }
